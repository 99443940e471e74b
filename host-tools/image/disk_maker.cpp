// disk_maker.cpp: `ett mkdisk`: a labelled, empty trace disk in an image file or on a block device.
#include "image/disk_maker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include "common/unique_fd.h"
#include "common/write_all.h"
#include "ett/crc32c.h"

namespace ett::host {

namespace f = ett::format;

namespace {

// Writes the label and blanks the sectors up to and including the first session's, so that nothing left from
// an earlier use of the disk looks like a session.
Status write_label(int fd, const f::DiskLabel& label, const std::string& path) {
  std::vector<uint8_t> head((label.first_session_lba + 1) * f::kSectorSize, 0);
  std::memcpy(head.data(), &label, sizeof(label));
  auto wrote = pwrite_all(fd, head.data(), head.size(), 0, path + ": write failed");
  if (!wrote) return wrote;
  if (::fsync(fd) != 0) return make_error(ErrorKind::Io, errno_message(path + ": fsync failed", errno));
  return {};
}

Status check_image_size(uint64_t size, uint32_t block_bytes) {
  if (size % block_bytes != 0)
    return make_error(ErrorKind::Usage,
                      fmt::format("size {} is not a multiple of {} bytes", size, block_bytes));
  if (size < kMinDiskBytes)
    return make_error(
        ErrorKind::Usage,
        fmt::format("size {} is too small: a trace disk needs at least {} bytes (label, one session "
                    "header and one {} KiB chunk)",
                    size, kMinDiskBytes, f::kChunkBytes / 1024));
  return {};
}

Expected<MadeDisk> make_on_device(const MakeDiskOptions& options) {
  const std::string& path = options.path;
  // O_EXCL on a block device: fail if it is mounted or otherwise held open exclusively.
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_EXCL | O_CLOEXEC));
  if (!fd.valid()) return make_error(ErrorKind::Io, errno_message(path, errno));
  uint64_t bytes = 0;
  if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) != 0)
    return make_error(ErrorKind::Io, errno_message(path + ": cannot read the device size", errno));
  int block_bytes = 0;
  if (::ioctl(fd.get(), BLKSSZGET, &block_bytes) != 0)
    return make_error(ErrorKind::Io,
                      errno_message(path + ": cannot read the device's logical block size", errno));
  if (auto block_ok = check_logical_block_size(path, static_cast<uint32_t>(block_bytes)); !block_ok)
    return block_ok.failure();
  if (options.block_bytes != 0 && options.block_bytes != static_cast<uint32_t>(block_bytes))
    return make_error(ErrorKind::Usage,
                      fmt::format("{}: --block-size {} does not match the device's {}-byte logical blocks",
                                  path, options.block_bytes, block_bytes));
  if (options.size_given && options.size_bytes != bytes)
    return make_error(
        ErrorKind::Usage,
        fmt::format("{}: --size does not apply to a device (the device has {} bytes)", path, bytes));
  if (bytes < kMinDiskBytes)
    return make_error(ErrorKind::Usage, fmt::format("{}: the device ({} bytes) is too small for a trace disk "
                                                    "(at least {} bytes)",
                                                    path, bytes, kMinDiskBytes));
  if (!options.force) {
    std::vector<uint8_t> head(std::min<uint64_t>(bytes, 1u << 20));
    size_t done = 0;
    while (done < head.size()) {
      ssize_t got = ::pread(fd.get(), head.data() + done, head.size() - done, static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return make_error(ErrorKind::Io, errno_message(path + ": read failed", errno));
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    const bool is_trace_disk = std::memcmp(head.data(), f::kDiskMagic, sizeof(f::kDiskMagic)) == 0;
    if (std::any_of(head.begin(), head.end(), [](uint8_t b) { return b != 0; }))
      return make_error(ErrorKind::Usage,
                        fmt::format("{}: {}; use --force to overwrite it", path,
                                    is_trace_disk ? "is already a trace disk"
                                                  : "already holds data (its first MiB is not all zeros)"));
  }
  MadeDisk made;
  made.is_device = true;
  made.label = new_label(bytes / f::kSectorSize, options.name, static_cast<uint32_t>(block_bytes));
  auto wrote = write_label(fd.get(), made.label, path);
  if (!wrote) return wrote.failure();
  return made;
}

Expected<MadeDisk> make_image(const MakeDiskOptions& options, bool exists, uint64_t existing_size) {
  const std::string& path = options.path;
  if (exists && !options.force)
    return make_error(ErrorKind::Usage, path + ": already exists; use --force to overwrite it");
  // Overwriting without --size keeps the image's size (when it is usable as one).
  const uint32_t block_bytes = options.block_bytes == 0 ? f::kSectorSize : options.block_bytes;
  if (auto block_ok = check_logical_block_size(path, block_bytes); !block_ok) return block_ok.failure();
  uint64_t size = options.size_bytes;
  if (exists && !options.size_given && existing_size >= kMinDiskBytes && existing_size % block_bytes == 0)
    size = existing_size;
  auto size_ok = check_image_size(size, block_bytes);
  if (!size_ok) return make_error(ErrorKind::Usage, path + ": " + size_ok.error().message);

  int flags = O_WRONLY | O_CLOEXEC | (exists ? O_TRUNC : O_CREAT | O_EXCL);
  UniqueFd fd(::open(path.c_str(), flags, 0644));
  if (!fd.valid()) return make_error(ErrorKind::Io, errno_message(path, errno));
  auto fail = [&](HostError error) -> Expected<MadeDisk> {
    fd.reset();
    if (!exists) ::unlink(path.c_str());
    return ett::Failure<HostError>{std::move(error)};
  };
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0)
    return fail(HostError{ErrorKind::Io,
                          errno_message(fmt::format("{}: cannot make it {} bytes", path, size), errno)});
  MadeDisk made;
  made.label = new_label(size / f::kSectorSize, options.name, block_bytes);
  auto wrote = write_label(fd.get(), made.label, path);
  if (!wrote) return fail(wrote.error());
  return made;
}

}  // namespace

uint64_t first_session_lba_for(uint32_t block_bytes) {
  const uint64_t per_block = block_bytes / f::kSectorSize;
  uint64_t lba = f::kFirstSessionLba;
  while (lba % per_block != per_block - 1) ++lba;
  return lba;
}

f::DiskLabel new_label(uint64_t total_sectors, std::string_view name, uint32_t block_bytes) {
  f::DiskLabel label;
  std::memset(&label, 0, sizeof(label));
  std::memcpy(label.magic, f::kDiskMagic, sizeof(label.magic));
  label.format_version = f::kFormatVersion;
  label.sector_size = f::kSectorSize;
  std::random_device random;
  for (size_t i = 0; i < sizeof(label.disk_uuid); i += 4) {
    uint32_t word = random();
    std::memcpy(label.disk_uuid + i, &word, 4);
  }
  label.disk_uuid[6] = static_cast<uint8_t>((label.disk_uuid[6] & 0x0F) | 0x40);  // RFC 4122 version 4
  label.disk_uuid[8] = static_cast<uint8_t>((label.disk_uuid[8] & 0x3F) | 0x80);  // variant 1
  label.total_sectors = total_sectors;
  label.first_session_lba = first_session_lba_for(block_bytes);
  label.created_unix = static_cast<uint64_t>(std::time(nullptr));
  std::memcpy(label.name, name.data(), std::min(name.size(), sizeof(label.name) - 1));
  label.crc = crc32c(&label, f::kSectorSize - 4);
  return label;
}

Status check_logical_block_size(const std::string& path, uint32_t bytes) {
  if (bytes >= f::kSectorSize && bytes <= 4096 && (bytes & (bytes - 1)) == 0) return {};
  return make_error(
      ErrorKind::Usage,
      fmt::format("{}: {}-byte logical blocks; a trace disk needs 512-, 1024-, 2048- or 4096-byte "
                  "blocks",
                  path, bytes));
}

Expected<MadeDisk> make_disk(const MakeDiskOptions& options) {
  if (options.name.size() >= sizeof(f::DiskLabel::name))
    return make_error(ErrorKind::Usage, fmt::format("disk name is {} bytes long; at most {} fit",
                                                    options.name.size(), sizeof(f::DiskLabel::name) - 1));
  struct stat st {};
  if (::stat(options.path.c_str(), &st) != 0) {
    if (errno != ENOENT) return make_error(ErrorKind::Io, errno_message(options.path, errno));
    return make_image(options, false, 0);
  }
  if (S_ISBLK(st.st_mode)) return make_on_device(options);
  if (S_ISREG(st.st_mode)) return make_image(options, true, static_cast<uint64_t>(st.st_size));
  return make_error(ErrorKind::Usage,
                    options.path + ": exists and is neither a regular file nor a block device");
}

}  // namespace ett::host
