// mkdisk_command.cpp: `ett mkdisk IMAGE`: a new, empty, labelled trace disk.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "common/terminal_text.h"
#include "common/units.h"
#include "image/disk_maker.h"

namespace ett::cli {

namespace {

struct MkdiskOptions {
  std::string image;
  std::string size;
  std::string name;
  uint32_t block_size = 0;
  bool force = false;
};

int run_mkdisk(const MkdiskOptions& options) {
  using namespace ett::host;
  MakeDiskOptions make;
  make.path = options.image;
  make.name = options.name;
  make.force = options.force;
  make.block_bytes = options.block_size;
  if (!options.size.empty()) {
    auto size = parse_byte_size(options.size);
    if (!size) return report(size.error());
    make.size_bytes = *size;
    make.size_given = true;
  }
  auto made = make_disk(make);
  if (!made) return report(made.error());
  const auto& label = made->label;
  std::string uuid;
  for (size_t i = 0; i < sizeof(label.disk_uuid); ++i)
    uuid += fmt::format("{}{:02x}", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", label.disk_uuid[i]);
  fmt::print("{}: trace disk, {} bytes ({} sectors), uuid {}{}{}\n", options.image,
             label.total_sectors * format::kSectorSize, label.total_sectors, uuid,
             options.name.empty() ? "" : ", name \"" + host::escape_control_characters(options.name) + "\"",
             label.first_session_lba == format::kFirstSessionLba
                 ? ""
                 : fmt::format(", first session at LBA {} (larger blocks)", label.first_session_lba));
  return 0;
}

}  // namespace

Command add_mkdisk_command(CLI::App& app) {
  auto options = std::make_shared<MkdiskOptions>();
  CLI::App* sub =
      app.add_subcommand("mkdisk", "Make a labelled, empty trace disk (image file or block device)");
  sub->add_option("IMAGE", options->image, "Image file to create, or a block device")
      ->type_name("PATH")
      ->required();
  sub->add_option("--size", options->size,
                  "Image size in bytes, with K/M/G suffix (default 64M; not for devices)")
      ->type_name("SIZE");
  sub->add_option("--name", options->name, "Free-text disk name (up to 63 bytes)")->type_name("NAME");
  sub->add_option("--block-size", options->block_size,
                  "Logical block size of the disk the label is for: 512 (default), 1024, 2048 or 4096; a "
                  "device's own is read from it")
      ->type_name("BYTES");
  sub->add_flag("--force", options->force, "Overwrite an existing file, or a device that already holds data");
  sub->footer("Exit status: 0 ok, 1 error.");
  return {sub, [options] { return run_mkdisk(*options); }};
}

}  // namespace ett::cli
