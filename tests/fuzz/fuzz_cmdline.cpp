// fuzz_cmdline.cpp: the capture kernel's command-line parser (kernel/config/cmdline.*, built for the host)
// over arbitrary bytes. It must never read past the string's end, and its answer must be a valid
// configuration or an error message that ends inside its buffer.
#include <cstring>
#include <string>

#include "config/cmdline.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The multiboot command line is a C string: cut at the first NUL, as the kernel sees it.
  const std::string line(reinterpret_cast<const char*>(data),
                         strnlen(reinterpret_cast<const char*>(data), size));
  const char* loaders[] = {"GRUB 2.06", "qemu", ""};
  for (const char* loader : loaders) {
    const char* arguments = ett::config::kernel_arguments(line.c_str(), loader);
    ETT_FUZZ_CHECK(arguments >= line.c_str() && arguments <= line.c_str() + line.size());
    auto config = ett::config::parse_cmdline(arguments);
    if (!config.ok()) {
      const auto& message = config.error().message;
      const size_t length = strnlen(message, sizeof(message));
      ETT_FUZZ_CHECK(length > 0 && length < sizeof(message));
      continue;
    }
    const ett::config::Config& c = config.value();
    ETT_FUZZ_CHECK(c.trigger_enabled || (c.trigger_mask == 0 && c.pretrigger == 0));
    ETT_FUZZ_CHECK((c.trigger_match & ~c.trigger_mask) == 0);
    ETT_FUZZ_CHECK(c.filter_mask != 0);
    ETT_FUZZ_CHECK(c.stop_rule != ett::format::StopReason::CodeMatch ||
                   (c.stop_probe >= 1 && c.stop_probe <= 8));
    (void)ett::config::has_word(line.c_str(), "exit=qemu");
  }
  return 0;
}
