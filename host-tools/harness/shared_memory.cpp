// shared_memory.cpp: create, map and clean up the virtual probe's shared-memory file.
#include "harness/shared_memory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "common/unique_fd.h"

namespace ett::host {

Expected<SharedMemoryFile> SharedMemoryFile::create(size_t size) {
  std::random_device random;
  const uint64_t tag = (uint64_t{random()} << 32) | random();
  SharedMemoryFile file;
  file.m_path = fmt::format("/dev/shm/ett-{}-{:016x}", ::getpid(), tag);
  UniqueFd fd(::open(file.m_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return make_error(ErrorKind::Io, errno_message(file.m_path, errno));
  file.m_linked = true;  // from here on the destructor removes it, also on the error paths below
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0)
    return make_error(ErrorKind::Io, errno_message(file.m_path + ": cannot size the shared memory", errno));
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (data == MAP_FAILED)
    return make_error(ErrorKind::Io, errno_message(file.m_path + ": mmap failed", errno));
  file.m_data = static_cast<uint8_t*>(data);
  file.m_size = size;
  std::memset(file.m_data, 0, size);
  file.control()->host_magic = vprobe::kHostMagic;  // what libettprobe checks before it writes a byte
  file.control()->file_version = vprobe::kFileVersion;
  return Expected<SharedMemoryFile>(std::move(file));
}

SharedMemoryFile::SharedMemoryFile(SharedMemoryFile&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_data(std::exchange(other.m_data, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_linked(std::exchange(other.m_linked, false)) {}

SharedMemoryFile::~SharedMemoryFile() {
  if (m_data) ::munmap(m_data, m_size);
  unlink();
}

void SharedMemoryFile::unlink() {
  if (m_linked) ::unlink(m_path.c_str());
  m_linked = false;
}

}  // namespace ett::host
