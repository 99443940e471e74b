// shared_memory.h: the 1 MiB /dev/shm file behind the QEMU virtual probe (ivshmem-plain), mapped into ett.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "ett/virtual_probe.h"

namespace ett::host {

class SharedMemoryFile {
 public:
  // Creates /dev/shm/ett-<pid>-<random> of `size` zero bytes and maps it shared.
  static Expected<SharedMemoryFile> create(size_t size = vprobe::kMinSize);

  SharedMemoryFile(SharedMemoryFile&& other) noexcept;
  SharedMemoryFile& operator=(SharedMemoryFile&&) = delete;
  SharedMemoryFile(const SharedMemoryFile&) = delete;
  ~SharedMemoryFile();  // unmaps and removes the file

  const std::string& path() const { return m_path; }
  uint8_t* data() const { return m_data; }
  uint8_t* lines() const { return m_data + vprobe::kLinesOffset; }
  vprobe::Control* control() const {
    return reinterpret_cast<vprobe::Control*>(m_data + vprobe::kControlOffset);
  }
  // Removes the name early; the mappings (ours and QEMU's) stay valid.
  void unlink();

 private:
  SharedMemoryFile() = default;
  std::string m_path;
  uint8_t* m_data = nullptr;
  size_t m_size = 0;
  bool m_linked = false;
};

}  // namespace ett::host
