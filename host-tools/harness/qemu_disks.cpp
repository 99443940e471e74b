// qemu_disks.cpp: -drive/-device options per machine and disk interface.
#include "harness/qemu_disks.h"

#include <algorithm>

namespace ett::host {

std::optional<DiskInterface> parse_disk_interface(std::string_view name) {
  if (name == "ide") return DiskInterface::Ide;
  if (name == "ahci") return DiskInterface::Ahci;
  if (name == "nvme") return DiskInterface::Nvme;
  return std::nullopt;
}

const char* disk_interface_name(DiskInterface interface) {
  switch (interface) {
    case DiskInterface::Ide:
      return "ide";
    case DiskInterface::Ahci:
      return "ahci";
    case DiskInterface::Nvme:
      return "nvme";
  }
  return "?";
}

bool is_supported_machine(std::string_view machine) {
  return machine == "pc" || machine == "q35";
}

std::vector<std::string> disk_arguments(std::string_view machine, const std::vector<AttachedDisk>& disks,
                                        const std::string& drive_options) {
  // The machine type before any ",option" (tests use "q35,i8042=off").
  const bool q35 = machine.substr(0, machine.find(',')) == "q35";
  std::vector<std::string> argv;
  const auto uses = [&](DiskInterface interface) {
    return std::any_of(disks.begin(), disks.end(),
                       [&](const AttachedDisk& d) { return d.interface == interface; });
  };
  if (q35 && uses(DiskInterface::Ide)) argv.insert(argv.end(), {"-device", "piix3-ide,id=ettide"});
  if (!q35 && uses(DiskInterface::Ahci)) argv.insert(argv.end(), {"-device", "ahci,id=ettahci"});

  // NVMe controllers take PCI slots in the order of the command line: sort them by slot.
  std::vector<AttachedDisk> ordered = disks;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const AttachedDisk& a, const AttachedDisk& b) { return a.slot < b.slot; });
  for (size_t k = 0; k < ordered.size(); ++k) {
    const AttachedDisk& disk = ordered[k];
    const std::string id = "ettdisk" + std::to_string(k);
    if (disk.interface == DiskInterface::Ide && !q35) {
      argv.insert(argv.end(), {"-drive", "file=" + disk.path + ",format=raw,if=ide,index=" +
                                             std::to_string(disk.slot) + drive_options});
      continue;
    }
    argv.insert(argv.end(), {"-drive", "file=" + disk.path + ",format=raw,if=none,id=" + id + drive_options});
    switch (disk.interface) {
      case DiskInterface::Ide:
        argv.insert(argv.end(),
                    {"-device", "ide-hd,drive=" + id + ",bus=ettide." + std::to_string(disk.slot / 2) +
                                    ",unit=" + std::to_string(disk.slot % 2)});
        break;
      case DiskInterface::Ahci:
        argv.insert(argv.end(), {"-device", "ide-hd,drive=" + id + ",bus=" + (q35 ? "ide." : "ettahci.") +
                                                std::to_string(disk.slot)});
        break;
      case DiskInterface::Nvme:
        argv.insert(argv.end(), {"-device", "nvme,drive=" + id + ",serial=ett" + std::to_string(disk.slot)});
        break;
    }
  }
  return argv;
}

}  // namespace ett::host
