// ivshmem_probe.cpp: finds the ivshmem device, checks its shared-memory BAR, and turns on memory decoding.
#include "drivers/probe/ivshmem_probe.h"

#include "drivers/console/console.h"

namespace ett::drivers {

Result<IvshmemProbe> IvshmemProbe::find() {
  auto pci = x86::pci::find_device(vprobe::kPciVendor, vprobe::kPciDevice);
  if (!pci) return fail("no ivshmem virtual probe (PCI 1af4:1110): start QEMU with -device ivshmem-plain");
  ETT_TRY_ASSIGN(x86::pci::Bar bar, x86::pci::read_bar(*pci, kSharedMemoryBar));
  if (bar.is_io) return fail("ivshmem BAR2 is an I/O BAR, expected memory");
  if (bar.address == 0) return fail("ivshmem BAR2 has no address assigned by the firmware");
  // 32-bit guest without paging: only the first 4 GiB are reachable. OVMF puts 64-bit BARs high: move it into
  // the 32-bit PCI hole (above the RAM and the q35 MMCONFIG window, below the IOAPIC/HPET/LAPIC area).
  if (bar.address + bar.size > 0x100000000ull && bar.is_64bit) {
    ETT_TRY_ASSIGN(const uint64_t low,
                   x86::pci::find_unused_memory(bar.size, kLowWindowFloor, kLowWindowCeiling));
    console::print("ETT: ivshmem BAR2 moved from 0x%llx to 0x%llx (below 4 GiB)\n", bar.address, low);
    x86::pci::move_bar(*pci, kSharedMemoryBar, bar, low);
    bar.address = low;
  }
  if (bar.address + bar.size > 0x100000000ull)
    return fail("ivshmem BAR2 lies above 4 GiB, out of reach without paging");
  if (bar.size < vprobe::kMinSize) return fail("ivshmem shared memory is smaller than 1 MiB");

  const uint16_t command = x86::pci::read16(*pci, x86::pci::kCommand);
  x86::pci::write16(*pci, x86::pci::kCommand, command | x86::pci::kMemorySpace);
  return IvshmemProbe(*pci, reinterpret_cast<volatile uint8_t*>(static_cast<uintptr_t>(bar.address)),
                      bar.size);
}

}  // namespace ett::drivers
