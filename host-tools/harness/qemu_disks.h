// qemu_disks.h: how a raw disk image is attached to QEMU's `pc` or `q35` machine on each disk interface the
// kernel searches (legacy IDE, AHCI, NVMe); shared by `ett qemu run` and the boot tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ett::host {

enum class DiskInterface { Ide, Ahci, Nvme };

std::optional<DiskInterface> parse_disk_interface(std::string_view name);
const char* disk_interface_name(DiskInterface interface);
// The machines the kernel is tested on: "pc" (i440FX, PIIX3 IDE) and "q35" (ICH9 with its built-in AHCI).
bool is_supported_machine(std::string_view machine);

struct AttachedDisk {
  std::string path;  // a raw image
  DiskInterface interface = DiskInterface::Ide;
  // IDE: 0-3 (primary master, primary slave, secondary master, secondary slave); AHCI: the port (0-5);
  // NVMe: the order of the controllers (each disk is its own controller).
  int slot = 0;
};

// QEMU options for `disks` on `machine`; `drive_options` is appended to every -drive (e.g. throttling).
// IDE on q35 adds a PIIX3 IDE controller (legacy ports); AHCI on pc adds an ICH9 AHCI controller; q35's
// built-in AHCI holds `-cdrom` on port 2, so an ISO boot on q35 leaves that port to the CD.
std::vector<std::string> disk_arguments(std::string_view machine, const std::vector<AttachedDisk>& disks,
                                        const std::string& drive_options = "");

}  // namespace ett::host
