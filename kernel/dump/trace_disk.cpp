// trace_disk.cpp: the search for a labelled disk (IDE, AHCI, NVMe), the session-chain walk, and the session
// writer.
#include "dump/trace_disk.h"

#include "arch/x86/cpu.h"
#include "arch/x86/pci.h"
#include "drivers/console/console.h"
#include "drivers/storage/ahci.h"
#include "drivers/storage/ata_pio.h"
#include "drivers/storage/kernel_hardware.h"
#include "drivers/storage/nvme.h"
#include "drivers/storage/storage_pci.h"
#include "dump/crc32c_slice8.h"
#include "dump/session_verify.h"
#include "lib/format.h"
#include "lib/text.h"
#include "lib/tsc_math.h"
#include "runtime/new.h"

namespace ett::dump {

namespace {

namespace storage = drivers::storage;
namespace pci = x86::pci;

// One chunk is assembled here (header + records + padding + CRC) and written with one command.
alignas(16) uint8_t g_chunk[format::kChunkBytes];
// The stall table, written once after the header.
alignas(16) StallTable g_stall_table;
// The read-back: each chunk as the disk returns it, compared with g_chunk rebuilt.
alignas(16) uint8_t g_read_back[format::kChunkBytes];
// The block that ends with the session header, as written: zeros, then the header in its last sector.
alignas(16) uint8_t g_header_block[storage::BlockDevice::kMaxBlockSize];
// One block read while the disk is opened (the label, session headers, the block before the append point).
alignas(16) uint8_t g_block[storage::BlockDevice::kMaxBlockSize];

// The DMA memory of the AHCI and NVMe drivers: command lists, queues and the bounce buffer. Static, so it
// lies inside the kernel image, below the capture buffer. One area serves every controller: a controller
// searched without success is stopped (its ports; NVMe: a shutdown notification, then CC.EN=0) before the
// next one gets the area, and the search ends at the trace disk, whose controller keeps it.
constexpr uint32_t kDmaBytes = storage::AhciDisk::kDmaBytes > storage::NvmeController::kDmaBytes
                                   ? storage::AhciDisk::kDmaBytes
                                   : storage::NvmeController::kDmaBytes;
alignas(4096) uint8_t g_dma[kDmaBytes];

// Storage for the trace disk's driver objects, which live as long as the kernel (no heap).
template <typename T>
class Keep {
 public:
  T* put(const T& value) { return new (m_bytes) T(value); }

 private:
  alignas(T) uint8_t m_bytes[sizeof(T)];
};
Keep<storage::AtaPio> g_ide_disk;
Keep<storage::AhciDisk> g_ahci_disk;
Keep<storage::NvmeController> g_nvme_controller;
Keep<storage::NvmeDisk> g_nvme_disk;
Keep<TraceDisk> g_trace_disk;
storage::MmioWindow g_window;  // the registers of the controller being searched (then: of the trace disk's)
storage::TscClock g_clock;

// On a disk of larger blocks (docs/design/trace-format.md, "Disks with larger blocks") the header is the last
// sector of a block whose other sectors are zero: the whole block is written, never read back and patched.
Status write_header(storage::BlockDevice& device, format::SessionHeader& header,
                    format::SessionStatus status) {
  header.status = static_cast<uint32_t>(status);
  seal(header);
  const uint32_t sectors = device.sectors_per_block();
  const uint32_t lead = (sectors - 1) * format::kSectorSize;
  __builtin_memset(g_header_block, 0, lead);
  __builtin_memcpy(g_header_block + lead, &header, sizeof(header));
  return device.write(header.start_lba + 1 - sectors, sectors, g_header_block);
}

// Sector `lba` into `out`, read as part of its whole block.
Status read_sector(storage::BlockDevice& device, uint64_t lba, void* out) {
  const uint32_t sectors = device.sectors_per_block();
  const uint64_t first = lba - lba % sectors;
  ETT_TRY(device.read(first, sectors, g_block));
  __builtin_memcpy(out, g_block + (lba - first) * format::kSectorSize, format::kSectorSize);
  return {};
}

struct Controller {
  pci::Address address;
  storage::ControllerKind kind;
  uint8_t prog_if;
  uint16_t vendor;
  uint16_t device;
};
constexpr uint32_t kMaxControllers = 16;
// QEMU's NVMe controller (PCI vendor Red Hat, 1b36:0010), and where a BAR moved below 4 GiB may go under
// QEMU: its RAM below 4 GiB ends by 0xE0000000 on pc and q35, and 0xFEC00000 up holds the IOAPIC, HPET and
// LAPIC.
constexpr uint16_t kQemuNvmeVendor = 0x1B36;
constexpr uint64_t kQemuLowWindowFloor = 0xE0000000;
constexpr uint64_t kQemuLowWindowCeiling = 0xFEC00000;
constexpr uint32_t kMaxNamespaces = 16;

// One search: what was found so far, and the first reason a labelled disk could not be used.
class Search {
 public:
  explicit Search(uint64_t tsc_hz) : m_tsc_hz(tsc_hz) {}
  // A census (the survey's disk table): every disk is listed in `out` and none is kept, so the search runs
  // over all of them.
  Search(uint64_t tsc_hz, format::SurveyDisk* out, uint32_t max)
      : m_tsc_hz(tsc_hz), m_census(out), m_census_max(max) {}
  uint32_t census_count() const { return m_census_count; }

  Result<TraceDisk> run();

 private:
  // Each returns true when it found the trace disk (then m_found holds it).
  bool legacy_ide();
  bool native_ide(const Controller& c);
  bool ahci(const Controller& c);
  bool nvme(const Controller& c);
  void list_controllers();
  // Checks the label of an opened disk; keeps the disk (through `keep`) when it is the trace disk.
  template <typename Device, typename KeepFn>
  bool check(Device& device, const char* where, format::DiskInterface interface, uint32_t port, KeepFn keep);
  void count_in_census(const drivers::storage::BlockDevice& device, format::DiskInterface interface,
                       uint32_t port, const TraceDisk* labelled);
  const char* name(const Controller& c, const char* prefix);

  uint64_t m_tsc_hz;
  Controller m_controllers[kMaxControllers] = {};
  uint32_t m_controller_count = 0;
  uint32_t m_disks = 0;
  uint32_t m_unusable_formats = 0;  // NVMe namespaces passed over for their format, before any label check
  const char* m_label_problem = nullptr;
  TraceDisk* m_found = nullptr;
  char m_name[48] = {};
  format::SurveyDisk* m_census = nullptr;
  uint32_t m_census_max = 0;
  uint32_t m_census_count = 0;
};

void Search::count_in_census(const drivers::storage::BlockDevice& device, format::DiskInterface interface,
                             uint32_t port, const TraceDisk* labelled) {
  if (m_census_count == m_census_max) return;
  format::SurveyDisk& disk = m_census[m_census_count++];
  disk = {};
  disk.interface = static_cast<uint32_t>(interface);
  disk.status =
      static_cast<uint32_t>(labelled ? format::SurveyStatus::Usable : format::SurveyStatus::Refused);
  disk.sectors = device.sector_count() / device.sectors_per_block();  // the driver counts 512-byte sectors
  disk.logical_block_size = device.block_size();
  disk.port = port;
  lib::copy_text(disk.model, sizeof(disk.model), device.model());
  if (labelled) __builtin_memcpy(disk.disk_uuid, labelled->label().disk_uuid, sizeof(disk.disk_uuid));
}

const char* Search::name(const Controller& c, const char* prefix) {
  lib::format(m_name, sizeof(m_name), "%s %02x:%02x.%u", prefix, c.address.bus, c.address.slot,
              c.address.function);
  return m_name;
}

// ", 4096-byte blocks" for a disk whose logical blocks are not 512 bytes (its sectors are still counted in
// 512-byte units), else "".
const char* block_note(const storage::BlockDevice& device) {
  static char note[24];
  if (device.block_size() == format::kSectorSize) return "";
  lib::format(note, sizeof(note), ", %u-byte blocks", device.block_size());
  return note;
}

template <typename Device, typename KeepFn>
bool Search::check(Device& device, const char* where, format::DiskInterface interface, uint32_t port,
                   KeepFn keep) {
  ++m_disks;
  auto disk = TraceDisk::open(device, where);
  if (m_census) {
    count_in_census(device, interface, port, disk ? &*disk : nullptr);
    console::print("ETT: %s: disk \"%s\", %llu sectors: %s\n", where, device.model(), device.sector_count(),
                   disk ? "ETT trace disk" : disk.error().message);
    return false;
  }
  if (!disk) {
    console::print("ETT: %s: disk \"%s\", %llu sectors%s: %s; not touched\n", where, device.model(),
                   device.sector_count(), block_note(device), disk.error().message);
    if (m_label_problem == nullptr && disk.error().message != kNotATraceDisk)
      m_label_problem = disk.error().message;
    return false;
  }
  console::print("ETT: %s: disk \"%s\", %llu sectors%s: ETT trace disk\n", where, device.model(),
                 device.sector_count(), block_note(device));
  storage::BlockDevice* kept = keep(device);
  auto reopened = TraceDisk::open(*kept, where);  // the same label, now pointing at the kept driver
  if (!reopened) {
    console::print("ETT: %s: %s\n", where, reopened.error().message);
    return false;
  }
  kept->prepare_for_writing();
  m_found = g_trace_disk.put(*reopened);
  return true;
}

bool Search::legacy_ide() {
  using storage::AtaPio;
  for (uint32_t i = 0; i < AtaPio::kPositionCount; ++i) {
    const auto position = static_cast<AtaPio::Position>(i);
    char where[48];
    lib::format(where, sizeof(where), "ide %s", AtaPio::position_name(position));
    auto ata = AtaPio::open(position, m_tsc_hz);
    if (!ata) {
      console::print("ETT: %s: %s\n", where, ata.error().message);
      continue;
    }
    if (check(*ata, where, format::DiskInterface::Ide, i, [](AtaPio& d) { return g_ide_disk.put(d); }))
      return true;
  }
  return false;
}

bool Search::native_ide(const Controller& c) {
  using storage::AtaPio;
  const char* prefix = name(c, "ide");
  char controller[24];
  lib::copy_text(controller, sizeof(controller), prefix);
  for (uint32_t channel = 0; channel < 2; ++channel) {
    const char* channel_name = channel == 0 ? "primary" : "secondary";
    if (!storage::ide_channel_native(c.prog_if, channel)) {
      console::print("ETT: %s: %s channel in compatibility mode (the legacy ports above)\n", controller,
                     channel_name);
      continue;
    }
    auto command_bar = pci::read_bar(c.address, static_cast<uint8_t>(2 * channel));
    auto control_bar = pci::read_bar(c.address, static_cast<uint8_t>(2 * channel + 1));
    if (!command_bar || !control_bar) {
      console::print("ETT: %s: %s channel: %s\n", controller, channel_name,
                     (!command_bar ? command_bar : control_bar).error().message);
      continue;
    }
    auto ports = storage::ide_channel_ports(c.prog_if, channel, *command_bar, *control_bar);
    if (!ports) {
      console::print("ETT: %s: %s channel: %s\n", controller, channel_name, ports.error().message);
      continue;
    }
    pci::enable(c.address, false, true, false);
    console::print("ETT: %s: %s channel in native mode at ports 0x%x/0x%x\n", controller, channel_name,
                   ports->command, ports->control);
    for (uint32_t slave = 0; slave < 2; ++slave) {
      char where[48];
      lib::format(where, sizeof(where), "%s %s %s", controller, channel_name, slave ? "slave" : "master");
      auto ata = AtaPio::open(*ports, slave != 0, m_tsc_hz);
      if (!ata) {
        console::print("ETT: %s: %s\n", where, ata.error().message);
        continue;
      }
      if (check(*ata, where, format::DiskInterface::Ide, channel * 2 + slave,
                [](AtaPio& d) { return g_ide_disk.put(d); }))
        return true;
    }
  }
  return false;
}

bool Search::ahci(const Controller& c) {
  using storage::AhciController;
  using storage::AhciDisk;
  char controller[24];
  lib::copy_text(controller, sizeof(controller), name(c, "ahci"));
  auto bar = pci::read_bar(c.address, 5);
  if (!bar) {
    console::print("ETT: %s: ABAR (BAR5): %s; skipped\n", controller, bar.error().message);
    return false;
  }
  auto base = storage::reachable_mmio(*bar, 5, 0x100);
  if (!base) {
    console::print("ETT: %s: %s; skipped\n", controller, base.error().message);
    return false;
  }
  pci::enable(c.address, true, false, true);
  g_window = storage::MmioWindow(*base);
  auto hba = AhciController::open(g_window, g_clock);
  if (!hba) {
    console::print("ETT: %s: %s; skipped\n", controller, hba.error().message);
    return false;
  }
  console::print("ETT: %s: AHCI controller %04x:%04x, ABAR 0x%08x, %u ports%s\n", controller, c.vendor,
                 c.device, *base, hba->port_count(),
                 hba->took_over_from_firmware() ? ", taken over from the firmware" : "");
  // Every port stops first: none may keep using memory the firmware gave it while we reuse ours.
  const uint32_t ports = hba->implemented_ports();
  for (uint32_t port = 0; port < AhciController::kMaxPorts; ++port) {
    if (!(ports & (1u << port))) continue;
    if (auto stopped = hba->stop_port(port); !stopped)
      console::print("ETT: %s port %u: %s\n", controller, port, stopped.error().message);
  }
  hba->spin_up_ports();
  char empty[96] = "";
  size_t empty_length = 0;
  uint32_t empty_ports = 0;
  const auto dma = storage::kernel_dma_area(g_dma, sizeof(g_dma));
  bool found = false;
  for (uint32_t port = 0; port < AhciController::kMaxPorts && !found; ++port) {
    if (!(ports & (1u << port))) continue;
    char where[48];
    lib::format(where, sizeof(where), "%s port %u", controller, port);
    switch (hba->link(port)) {
      case AhciController::Link::NoDevice:
        empty_length += lib::format(empty + empty_length, sizeof(empty) - empty_length, "%s%u",
                                    empty_length ? ", " : "", port);
        if (empty_length >= sizeof(empty)) empty_length = sizeof(empty) - 1;
        ++empty_ports;
        continue;
      case AhciController::Link::Offline:
        console::print("ETT: %s: a device without an established link (PxSSTS.DET=1); skipped\n", where);
        continue;
      case AhciController::Link::Up:
        break;
    }
    auto disk = AhciDisk::open(*hba, port, dma);
    if (!disk) {
      console::print("ETT: %s: %s; skipped\n", where, disk.error().message);
      continue;
    }
    found = check(*disk, where, format::DiskInterface::Ahci, port,
                  [](AhciDisk& d) { return g_ahci_disk.put(d); });
    if (!found) (void)disk->close();
  }
  if (empty_length)
    console::print("ETT: %s: no device on port%s %s\n", controller, empty_ports > 1 ? "s" : "", empty);
  return found;
}

bool Search::nvme(const Controller& c) {
  using storage::NvmeController;
  using storage::NvmeDisk;
  char controller[24];
  lib::copy_text(controller, sizeof(controller), name(c, "nvme"));
  auto bar = pci::read_bar(c.address, 0);
  if (!bar) {
    console::print("ETT: %s: BAR0: %s; skipped\n", controller, bar.error().message);
    return false;
  }
  // QEMU's NVMe controller on the root bus: OVMF puts its 64-bit BAR0 above 4 GiB, as a PC with "Above 4G
  // decoding" on does. It moves into QEMU's 32-bit PCI hole the way the ivshmem probe does. A real
  // controller stays where the firmware put it (the bridge windows and chipset ranges around it are not
  // known here) and is refused below with the firmware setting that helps.
  if (bar->is_64bit && bar->address + bar->size > 0x100000000ull && c.vendor == kQemuNvmeVendor &&
      c.address.bus == 0) {
    if (auto low = pci::find_unused_memory(bar->size, kQemuLowWindowFloor, kQemuLowWindowCeiling)) {
      console::print("ETT: %s: BAR0 moved from 0x%llx to 0x%llx (below 4 GiB)\n", controller, bar->address,
                     *low);
      pci::move_bar(c.address, 0, *bar, *low);
      bar->address = *low;
    }
  }
  auto base = storage::reachable_mmio(*bar, 0, 0x2000);
  if (!base) {
    console::print("ETT: %s: %s; skipped\n", controller, base.error().message);
    if (m_label_problem == nullptr) m_label_problem = "an NVMe controller could not be searched (see above)";
    return false;
  }
  pci::enable(c.address, true, false, true);
  g_window = storage::MmioWindow(*base);
  auto opened = NvmeController::open(g_window, g_clock, storage::kernel_dma_area(g_dma, sizeof(g_dma)));
  if (!opened) {
    console::print("ETT: %s: %s; skipped\n", controller, opened.error().message);
    return false;
  }
  NvmeController* nvme = g_nvme_controller.put(*opened);
  uint32_t nsids[kMaxNamespaces];
  auto count = nvme->active_namespaces(nsids, kMaxNamespaces);
  if (!count) {
    console::print("ETT: %s: %s; skipped\n", controller, count.error().message);
    (void)nvme->close();
    return false;
  }
  console::print("ETT: %s: NVMe controller %04x:%04x \"%s\", BAR0 0x%08x, %u active namespace%s\n",
                 controller, c.vendor, c.device, nvme->model(), *base, *count, *count == 1 ? "" : "s");
  for (uint32_t i = 0; i < *count; ++i) {
    const uint32_t nsid = nsids[i];
    char where[48];
    lib::format(where, sizeof(where), "%s namespace %u", controller, nsid);
    auto disk = NvmeDisk::open(*nvme, nsid);
    if (!disk) {
      console::print("ETT: %s: %s; skipped\n", where, disk.error().message);
      if (disk.error().message != NvmeDisk::kNotActive) ++m_unusable_formats;
      continue;
    }
    if (check(*disk, where, format::DiskInterface::Nvme, nsid,
              [](NvmeDisk& d) { return g_nvme_disk.put(d); }))
      return true;
  }
  if (auto closed = nvme->close(); !closed)
    console::print("ETT: %s: %s\n", controller, closed.error().message);
  return false;
}

void Search::list_controllers() {
  pci::for_each_function([this](pci::Address a) {
    const auto kind = storage::classify(pci::read8(a, pci::kClassCode), pci::read8(a, pci::kSubclass),
                                        pci::read8(a, pci::kProgIf));
    if (kind == storage::ControllerKind::NotStorage || m_controller_count == kMaxControllers) return;
    m_controllers[m_controller_count++] = {a, kind, pci::read8(a, pci::kProgIf),
                                           pci::read16(a, pci::kVendorId), pci::read16(a, pci::kDeviceId)};
  });
}

Result<TraceDisk> Search::run() {
  g_clock = storage::TscClock(m_tsc_hz);
  console::write(
      "ETT: trace disk search: legacy IDE ports, native-mode PCI IDE, AHCI ports, NVMe namespaces; the first "
      "disk with an ETT label is the trace disk, no other disk is written\n");
  list_controllers();
  bool found = legacy_ide();
  // One pass per interface, in the order above; each controller once.
  constexpr storage::ControllerKind kOrder[] = {storage::ControllerKind::Ide, storage::ControllerKind::Ahci,
                                                storage::ControllerKind::Nvme,
                                                storage::ControllerKind::OtherStorage};
  for (const storage::ControllerKind kind : kOrder) {
    for (uint32_t i = 0; i < m_controller_count; ++i) {
      const Controller& c = m_controllers[i];
      if (c.kind != kind) continue;
      const bool compatibility = kind == storage::ControllerKind::Ide &&
                                 !storage::ide_channel_native(c.prog_if, 0) &&
                                 !storage::ide_channel_native(c.prog_if, 1);
      if (found && compatibility) {
        console::print("ETT: %s: IDE controller in compatibility mode (its channels are the legacy ports)\n",
                       name(c, "ide"));
        continue;
      }
      if (found) {
        console::print("ETT: %s: %s controller, not searched (the trace disk was found first)\n",
                       name(c, "pci"), storage::kind_name(kind));
        continue;
      }
      switch (kind) {
        case storage::ControllerKind::Ide:
          found = native_ide(c);
          break;
        case storage::ControllerKind::Ahci:
          found = ahci(c);
          break;
        case storage::ControllerKind::Nvme:
          found = nvme(c);
          break;
        default:
          console::print("ETT: %s: storage controller %04x:%04x (class 01/%02x/%02x): no driver; skipped\n",
                         name(c, "pci"), c.vendor, c.device, pci::read8(c.address, pci::kSubclass),
                         c.prog_if);
          break;
      }
    }
  }
  if (found) {
    if (m_found->device().staging_sectors() > 0) {
      const auto start = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(g_dma));
      console::print("ETT: %s: DMA area 0x%08x-0x%08x, inside the kernel image (below the capture buffer)\n",
                     m_found->where(), start, start + static_cast<uint32_t>(sizeof(g_dma)));
    }
    return *m_found;
  }
  if (m_label_problem) return fail(m_label_problem);
  static char message[224];
  if (m_unusable_formats > 0) {
    lib::format(
        message, sizeof(message),
        "no ETT trace disk found (%u disks searched on IDE, AHCI and NVMe; NVMe namespaces passed over "
        "for their format: %u, see above); `ett mkdisk` does not change a namespace's format",
        m_disks, m_unusable_formats);
    return fail(message);
  }
  lib::format(
      message, sizeof(message),
      "no ETT trace disk found (%u disks searched on IDE, AHCI and NVMe); a disk that is not an ETT trace "
      "disk is never written (make one with `ett mkdisk`)",
      m_disks);
  return fail(message);
}

}  // namespace

Result<TraceDisk> TraceDisk::find(uint64_t tsc_hz) {
  Search search(tsc_hz);
  return search.run();
}

uint32_t TraceDisk::census(uint64_t tsc_hz, format::SurveyDisk* out, uint32_t max) {
  Search search(tsc_hz, out, max);
  (void)search.run();  // finds nothing: a census keeps no disk
  return search.census_count();
}

Result<DumpStats> TraceDisk::write_survey(format::SessionHeader& header, const format::SurveyBlock& block,
                                          uint64_t tsc_hz) {
  // On a disk of larger blocks the session is padded to whole blocks, as a capture's is.
  const uint64_t sectors = padded_sectors(format::survey_session_sectors());
  if (sectors > m_end_lba - m_append.lba) {
    static char message[160];
    lib::format(message, sizeof(message),
                "the trace disk is full: a survey needs %llu sectors, %llu are free; nothing was written",
                sectors, m_end_lba - m_append.lba);
    return fail(message);
  }
  start_session_header(header, m_label, m_append, 0);
  header.reserved_sectors = sectors;
  console::print("ETT: survey session %u at LBA %llu\n", header.session_number, header.start_lba);
  const uint64_t start = x86::rdtsc();
  const Status written = [&]() -> Status {
    build_stall_table(g_stall_table, header, nullptr, 0);
    ETT_TRY(write_header(*m_device, header, format::SessionStatus::Writing));
    ETT_TRY(m_device->write(header.start_lba + 1, format::kStallTableSectors, &g_stall_table));
    const uint64_t block_lba = header.start_lba + format::sectors_before_chunks(header.format_version);
    ETT_TRY(m_device->write(block_lba, format::kSurveySectors, &block));
    ETT_TRY(m_device->flush());
    static_assert(sizeof(format::SurveyBlock) <= sizeof(g_read_back));
    ETT_TRY(m_device->read(block_lba, format::kSurveySectors, g_read_back));
    if (__builtin_memcmp(g_read_back, &block, sizeof(block)) != 0)
      return fail("the survey block did not read back as written");
    ETT_TRY(write_header(*m_device, header, format::SessionStatus::Complete));
    ETT_TRY(m_device->flush());
    return verify_session_header(*m_device, header, g_header_block, m_device->sectors_per_block(),
                                 g_read_back);
  }();
  const Status shut = m_device->shut_down();
  if (!written) return written.failure();
  if (!shut)
    console::print("ETT: %s: %s; the survey is written and verified\n", m_where, shut.error().message);
  m_append = {header.start_lba + header.reserved_sectors, header.session_number + 1,
              m_append.existing_sessions + 1};
  const uint64_t ticks = x86::rdtsc() - start;
  console::print("ETT: survey session written and verified in %llu ms\n",
                 lib::us_for_ticks(ticks, tsc_hz) / 1000);
  return DumpStats{0, header.reserved_sectors * format::kSectorSize, ticks};
}

namespace {
// The progress line every tenth of the chunks (for dumps of 20 chunks or more).
class Progress {
 public:
  explicit Progress(uint64_t chunks) : m_chunks(chunks), m_next(chunks / 10) {}
  void done(uint64_t count) {
    if (m_chunks < 20) return;
    while (m_next > 0 && count >= m_next && count < m_chunks) {
      console::print("ETT: dump %llu%% (%llu/%llu chunks)\n", m_next * 100 / m_chunks, m_next, m_chunks);
      m_next += m_chunks / 10;
    }
  }

 private:
  uint64_t m_chunks;
  uint64_t m_next;
};
}  // namespace

// One chunk per write command, from one buffer (IDE PIO).
Status TraceDisk::write_chunks(const format::SessionHeader& header, const format::EventRecord* events,
                               uint64_t event_count) {
  Progress progress(header.chunk_count);
  for (uint64_t index = 0; index < header.chunk_count; ++index) {
    build_chunk(g_chunk, header.session_number, index, events, event_count, crc32c_slice8);
    ETT_TRY(m_device->write(chunk_lba(header, index), format::kChunkSectors, g_chunk));
    progress.done(index + 1);
  }
  return {};
}

// Chunks built straight into the driver's two staging buffers, several per write command, the next batch
// built while the device writes the last (AHCI, NVMe): no copy, and the CPU's CRC work overlaps the transfer.
Status TraceDisk::write_chunks_staged(const format::SessionHeader& header, const format::EventRecord* events,
                                      uint64_t event_count) {
  const uint64_t per_batch = m_device->staging_sectors() / format::kChunkSectors;
  Progress progress(header.chunk_count);
  uint32_t buffer = 0;
  for (uint64_t first = 0; first < header.chunk_count; first += per_batch) {
    const uint64_t left = header.chunk_count - first;
    const uint64_t count = left < per_batch ? left : per_batch;
    uint8_t* staging = m_device->staging(buffer);
    for (uint64_t k = 0; k < count; ++k)
      build_chunk(staging + k * format::kChunkBytes, header.session_number, first + k, events, event_count,
                  crc32c_slice8);
    ETT_TRY(m_device->finish_write());  // the other buffer's write
    progress.done(first);
    ETT_TRY(m_device->start_write(chunk_lba(header, first),
                                  static_cast<uint32_t>(count * format::kChunkSectors), buffer));
    buffer ^= 1;
  }
  return m_device->finish_write();
}

void TraceDisk::set_where(const char* where) {
  lib::copy_text(m_where, sizeof(m_where), where);
}

// A session's sectors rounded up to whole blocks, so that the next session's header again ends a block.
uint64_t TraceDisk::padded_sectors(uint64_t sectors) const {
  const uint32_t per_block = m_device->sectors_per_block();
  return (sectors + per_block - 1) / per_block * per_block;
}

uint64_t TraceDisk::max_events() const {
  const uint32_t lead = m_device->sectors_per_block() - 1;  // the padding that may follow the last chunk
  return m_end_lba < lead ? 0 : events_that_fit(m_append.lba, m_end_lba - lead);
}

Status TraceDisk::check_room(uint64_t event_count) const {
  if (padded_sectors(format::session_sectors(event_count)) <= m_end_lba - m_append.lba) return {};
  static char message[192];
  lib::format(message, sizeof(message),
              "the trace disk is full: room for %llu events, the capture has %llu; nothing was written",
              max_events(), event_count);
  return fail(message);
}

Result<TraceDisk> TraceDisk::open(drivers::storage::BlockDevice& device, const char* where) {
  format::DiskLabel label;
  ETT_TRY(read_sector(device, 0, &label));
  ETT_TRY(check_label(label));
  const uint32_t per_block = device.sectors_per_block();
  uint64_t end = label.total_sectors < device.sector_count() ? label.total_sectors : device.sector_count();
  end -= end % per_block;
  ETT_TRY_ASSIGN(
      const AppendPoint append,
      find_append_point(label, device.sector_count(), [&device](uint64_t lba, format::SessionHeader& header) {
        return read_sector(device, lba, &header);
      }));
  if (per_block > 1) ETT_TRY(check_append_block(device, append.lba, end));
  TraceDisk disk(device, label, append, end);
  disk.set_where(where);
  return disk;
}

// With blocks of several sectors the next header must be the last sector of a block (so the chunks after
// it start on one), and the sectors before it in that block must be zero: the header's write sets them to
// zero, and nothing of an earlier session may be there.
Status TraceDisk::check_append_block(drivers::storage::BlockDevice& device, uint64_t append_lba,
                                     uint64_t end_lba) {
  const uint32_t per_block = device.sectors_per_block();
  static char message[256];
  if (append_lba % per_block != per_block - 1) {
    lib::format(message, sizeof(message),
                "the next session would start at LBA %llu, which is not the last 512-byte sector of a "
                "%u-byte block (the label was made for 512-byte blocks): run `ett mkdisk` on this disk, or "
                "with --block-size %u",
                append_lba, device.block_size(), device.block_size());
    return fail(message);
  }
  if (append_lba >= end_lba) return {};  // full: check_room refuses any session
  ETT_TRY(device.read(append_lba + 1 - per_block, per_block, g_block));
  for (uint32_t i = 0; i < (per_block - 1) * format::kSectorSize; ++i) {
    if (g_block[i] == 0) continue;
    lib::format(
        message, sizeof(message),
        "the %u-byte block before the next session (LBA %llu) holds data; a session header is written "
        "as that whole block, so nothing is written",
        device.block_size(), append_lba);
    return fail(message);
  }
  return {};
}

Result<DumpStats> TraceDisk::write_session(format::SessionHeader& header, const format::EventRecord* events,
                                           uint64_t event_count, const format::StallRecord* stalls,
                                           uint32_t stall_count, uint64_t tsc_hz) {
  ETT_TRY(check_room(event_count));
  start_session_header(header, m_label, m_append, event_count);
  header.reserved_sectors = padded_sectors(header.reserved_sectors);
  const uint64_t chunk_count = header.chunk_count;
  console::print("ETT: dump session %u at LBA %llu: %llu events in %llu chunks\n", header.session_number,
                 header.start_lba, event_count, chunk_count);

  const uint64_t start = x86::rdtsc();
  uint64_t verify_ticks = 0;
  const Status written = write_and_verify(header, events, event_count, stalls, stall_count, verify_ticks);
  // Whatever happened, the drive is left idle and safe to power off (NVMe: a shutdown notification).
  const Status shut = m_device->shut_down();
  if (!written) {
    static char message[320];
    lib::format(message, sizeof(message),
                "%s; the session is left unfinished and the events stay in RAM: S saves them again",
                written.error().message);
    console::print("ETT: dump FAILED: %s\n", message);
    return fail(message);
  }
  if (!shut)
    console::print("ETT: %s: %s; the session is written and verified\n", m_where, shut.error().message);
  const uint64_t ticks = x86::rdtsc() - start;

  m_append = {header.start_lba + header.reserved_sectors, header.session_number + 1,
              m_append.existing_sessions + 1};
  const DumpStats stats{chunk_count, header.reserved_sectors * format::kSectorSize, ticks};
  const uint64_t us = lib::us_for_ticks(ticks, tsc_hz);
  const uint64_t centi_mb_per_s = us == 0 ? 0 : stats.bytes * 100 / us;  // bytes per us = MB/s
  console::print("ETT: dump complete: %llu KiB in %llu ms (%llu.%02llu MB/s), of which read-back %llu ms\n",
                 stats.bytes / 1024, us / 1000, centi_mb_per_s / 100, centi_mb_per_s % 100,
                 lib::us_for_ticks(verify_ticks, tsc_hz) / 1000);
  return stats;
}

Status TraceDisk::write_and_verify(format::SessionHeader& header, const format::EventRecord* events,
                                   uint64_t event_count, const format::StallRecord* stalls,
                                   uint32_t stall_count, uint64_t& verify_ticks) {
  build_stall_table(g_stall_table, header, stalls, stall_count);
  ETT_TRY(write_header(*m_device, header, format::SessionStatus::Writing));
  ETT_TRY(m_device->write(header.start_lba + 1, format::kStallTableSectors, &g_stall_table));
  ETT_TRY(m_device->staging_sectors() >= format::kChunkSectors
              ? write_chunks_staged(header, events, event_count)
              : write_chunks(header, events, event_count));
  ETT_TRY(m_device->flush());
  // Read back before the header says Complete: a session that does not read back stays Writing.
  const char* plural = header.chunk_count == 1 ? "" : "s";
  console::print("ETT: dump written and flushed; reading %llu chunk%s back\n", header.chunk_count, plural);
  uint64_t verify_start = x86::rdtsc();
  ETT_TRY(verify_session_body(*m_device, header, g_stall_table, events, event_count, g_read_back, g_chunk,
                              crc32c_slice8));
  verify_ticks = x86::rdtsc() - verify_start;
  ETT_TRY(write_header(*m_device, header, format::SessionStatus::Complete));
  ETT_TRY(m_device->flush());
  verify_start = x86::rdtsc();
  ETT_TRY(
      verify_session_header(*m_device, header, g_header_block, m_device->sectors_per_block(), g_read_back));
  verify_ticks += x86::rdtsc() - verify_start;
  console::print("ETT: dump verified: the header, the stall table and %llu chunk%s read back as written\n",
                 header.chunk_count, plural);
  return {};
}

}  // namespace ett::dump
