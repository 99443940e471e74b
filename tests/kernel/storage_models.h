// storage_models.h: register models of storage hardware for the driver unit tests: guest memory the devices
// reach by DMA, a simulated clock, an AHCI HBA with ports and disks, and an NVMe controller with admin and
// I/O queues. Each model can be made odd or broken (a port that never clears BSY, firmware that never hands
// the HBA over, a controller that never becomes ready, a command that fails).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "drivers/storage/hardware.h"

namespace ett::test {

using drivers::storage::Clock;
using drivers::storage::DmaArea;
using drivers::storage::RegisterWindow;

// Each now() advances 10 us of a 1 GHz clock: a 30-second timeout is 3 million polls, milliseconds of real
// time.
class SimClock final : public Clock {
 public:
  uint64_t now() override { return m_ticks += 10'000; }
  uint64_t hz() const override { return 1'000'000'000; }
  uint64_t ms() const { return m_ticks / 1'000'000; }
  uint64_t ticks() const { return m_ticks; }

 private:
  uint64_t m_ticks = 0;
};

// The machine's memory as devices see it: `base` onwards. A DMA outside it fails the test.
class GuestMemory {
 public:
  static constexpr uint64_t kBase = 0x10000000;
  explicit GuestMemory(size_t bytes) : m_bytes(bytes, 0) {}

  uint8_t* at(uint64_t phys, size_t length) {
    if (phys < kBase || phys + length > kBase + m_bytes.size()) {
      ADD_FAILURE() << "DMA outside guest memory: 0x" << std::hex << phys << " +" << std::dec << length;
      return nullptr;
    }
    return m_bytes.data() + (phys - kBase);
  }
  // A DMA area at `offset` (4 KiB aligned offsets give 4 KiB aligned physical addresses).
  DmaArea area(uint32_t offset, uint32_t size) {
    return DmaArea{m_bytes.data() + offset, kBase + offset, size};
  }
  bool contains(uint64_t phys, const DmaArea& area) const {
    return phys >= area.phys && phys < area.phys + area.size;
  }

 private:
  std::vector<uint8_t> m_bytes;
};

inline uint32_t get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void put32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

// ---------------------------------------------------------------------------------------------------------
// AHCI 1.3.1: HBA registers at 0, ports at 0x100 + 0x80 * n; commands run when PxCI is written. A COMRESET
// (PxSCTL.DET 1, then 0) must be held 1 ms of the model's clock and only on a port whose list is stopped;
// afterwards the link takes `link_polls` PxSSTS reads to come up.
class AhciModel final : public RegisterWindow {
 public:
  enum class Device { None, Offline, Disk, Atapi };
  struct Port {
    Device device = Device::None;
    std::vector<uint8_t> disk;  // the disk's contents (Device::Disk)
    std::string model = "MODEL DISK";
    bool lba48 = true;
    bool busy_forever = false;      // PxTFD.BSY never clears
    bool list_stuck = false;        // PxCMD.CR never clears once the list ran
    bool fail_writes = false;       // WRITE DMA ends with a task-file error
    bool never_complete = false;    // commands are accepted and never finish
    bool link_down = false;         // a device is there (DET=1) but its link stays down until a COMRESET
    bool busy_until_reset = false;  // PxTFD.BSY stays set until a COMRESET
    // IDENTIFY word 106 and the logical sector (words 117-118 hold its words when word 106 bit 12 is set).
    // The default: word 106 not valid (0), 512-byte sectors, as QEMU's ide-hd reports.
    uint16_t word106 = 0;
    uint32_t logical_bytes = 512;  // the commands' unit: LBA and count are logical sectors of this size
    // registers
    uint32_t clb = 0, fb = 0, is = 0, cmd = 0, serr = 0, ci = 0, sctl = 0;
    int link_wait = 0;  // PxSSTS reads until the link is up, after spin-up or a COMRESET
    // what happened
    int comresets = 0;
    uint64_t comreset_started = 0;  // clock ticks
    uint64_t clb_full() const { return clb; }
    std::map<uint8_t, int> commands;                    // ATA command -> count
    std::vector<std::pair<uint64_t, uint32_t>> writes;  // LBA, sectors
    std::vector<uint64_t> command_lists;                // PxCLB of each command run
  };

  AhciModel(GuestMemory& memory, int port_count, const SimClock* clock = nullptr)
      : ports(port_count), m_memory(memory), m_clock(clock) {}

  // Firmware ownership (CAP2.BOH + BOHC.BOS); it lets go `release_after` BOHC reads after OOS is set (-1:
  // never), saying it is busy (BB) meanwhile when `busy`.
  void firmware_owned(int release_after, bool busy) {
    m_cap2 = 1;
    m_bohc = 1;
    m_release_after = release_after;
    m_busy = busy;
  }
  bool pi_empty = false;  // a controller that implements no ports
  // CAP.SSS: a port's device shows no link (DET=1) until PxCMD.SUD is set, then after `link_polls` SSTS
  // reads.
  bool staggered_spin_up = false;
  int link_polls = 3;
  // Times PxCMD.SUD was set on a port while another port's device was still spinning up (its link not yet
  // up): staggered spin-up is one port at a time.
  int overlapping_spin_ups = 0;

  uint32_t read32(uint32_t offset) override {
    if (offset >= 0x100) return read_port((offset - 0x100) / 0x80, (offset - 0x100) % 0x80);
    switch (offset) {
      case 0x00:  // CAP: NP, S64A, SSS
        return (static_cast<uint32_t>(ports.size()) - 1) | (1u << 31) | (staggered_spin_up ? 1u << 27 : 0u);
      case 0x04:
        return m_ghc;
      case 0x0C:
        if (pi_empty) return 0;
        return static_cast<uint32_t>((uint64_t{1} << ports.size()) - 1);
      case 0x24:
        return m_cap2;
      case 0x28:
        if (m_oos_set && (m_bohc & 1)) {
          if (m_release_after >= 0 && m_bohc_reads++ >= m_release_after)
            m_bohc &= ~0x11u;
          else if (m_busy)
            m_bohc |= 0x10;
        }
        return m_bohc;
      default:
        return 0;
    }
  }
  void write32(uint32_t offset, uint32_t value) override {
    if (offset >= 0x100) return write_port((offset - 0x100) / 0x80, (offset - 0x100) % 0x80, value);
    if (offset == 0x04) m_ghc = value & 0x80000002u;
    if (offset == 0x28 && (value & 2)) {
      m_oos_set = true;
      m_bohc |= 2;
    }
  }

  uint32_t ghc() const { return m_ghc; }
  bool took_ownership() const { return m_oos_set; }

  std::vector<Port> ports;

 private:
  static constexpr uint32_t kSt = 1, kSud = 1u << 1, kFre = 1u << 4, kFr = 1u << 14, kCr = 1u << 15;

  uint32_t read_port(uint32_t n, uint32_t reg) {
    if (n >= ports.size()) return 0;
    Port& p = ports[n];
    switch (reg) {
      case 0x00:
        return p.clb;
      case 0x08:
        return p.fb;
      case 0x10:
        return p.is;
      case 0x18: {
        uint32_t cmd = p.cmd & ~(kCr | kFr);
        if ((p.cmd & kSt) || (p.list_stuck && m_list_ran[n])) cmd |= kCr;
        if (p.cmd & kFre) cmd |= kFr;
        return cmd;
      }
      case 0x20:
        if (p.busy_forever || p.busy_until_reset) return 0x80;
        return m_task_error[n] ? 0x0451 : 0x50;
      case 0x24:
        return p.device == Device::Atapi ? 0xEB140101 : p.device == Device::Disk ? 0x00000101 : 0xFFFFFFFF;
      case 0x28:
        if (p.device == Device::None) return 0;
        if (p.device == Device::Offline || p.link_down || (p.sctl & 0xF) == 1) return 0x1;
        if (staggered_spin_up && !(p.cmd & kSud)) return 0x1;
        if (p.link_wait > 0) {
          --p.link_wait;
          return 0x1;
        }
        return 0x113;
      case 0x2C:
        return p.sctl;
      case 0x30:
        return p.serr;
      case 0x38:
        return p.ci;
      default:
        return 0;
    }
  }

  void write_port(uint32_t n, uint32_t reg, uint32_t value) {
    if (n >= ports.size()) return;
    Port& p = ports[n];
    switch (reg) {
      case 0x00:
        if (p.cmd & kSt) ADD_FAILURE() << "PxCLB written while the port runs";
        p.clb = value;
        break;
      case 0x04:
      case 0x0C:
        EXPECT_EQ(value, 0u) << "upper address halves: the model's memory is below 4 GiB";
        break;
      case 0x08:
        if (p.cmd & kFre) ADD_FAILURE() << "PxFB written while FIS receive runs";
        p.fb = value;
        break;
      case 0x10:
        p.is &= ~value;
        break;
      case 0x18:
        if ((value & kSt) && !(p.cmd & kSt)) {
          if (!(value & kFre)) ADD_FAILURE() << "ST set without FRE";
          if (p.busy_forever || p.busy_until_reset) ADD_FAILURE() << "ST set while BSY";
          m_list_ran[n] = true;
        }
        if (staggered_spin_up && (value & kSud) && !(p.cmd & kSud) && p.device != Device::None) {
          for (const Port& other : ports)
            if (&other != &p && other.device != Device::None && (other.cmd & kSud) && other.link_wait > 0)
              ++overlapping_spin_ups;
          p.link_wait = link_polls;
        }
        if (!(value & kSt) && (p.cmd & kSt)) {
          p.ci = 0;  // clearing ST clears PxCI
          m_task_error[n] = false;
        }
        p.cmd = value;
        break;
      case 0x2C:
        comreset(n, p, value);
        break;
      case 0x30:
        p.serr &= ~value;
        break;
      case 0x38:
        p.ci |= value;
        if ((p.cmd & kSt) && !p.never_complete) run(n);
        break;
      default:
        break;
    }
  }

  // PxSCTL.DET: 1 holds COMRESET, 0 releases it.
  void comreset(uint32_t n, Port& p, uint32_t value) {
    const uint32_t det = value & 0xF, was = p.sctl & 0xF;
    const uint64_t now = m_clock ? m_clock->ticks() : 0;
    p.sctl = value;
    if (det == 1 && was != 1) {
      if (read_port(n, 0x18) & (kSt | kCr)) ADD_FAILURE() << "COMRESET while the command list runs";
      p.comreset_started = now;
    } else if (det == 0 && was == 1) {
      if (m_clock && now - p.comreset_started < 1'000'000) ADD_FAILURE() << "COMRESET held less than 1 ms";
      ++p.comresets;
      p.link_down = false;
      p.busy_until_reset = false;
      m_task_error[n] = false;
      p.link_wait = link_polls;
      p.serr |= 1u << 26;  // DIAG.X: the link changed
    }
  }

  void run(uint32_t n) {
    Port& p = ports[n];
    if (!(p.ci & 1)) return;
    uint8_t* header = m_memory.at(p.clb, 32);
    if (!header) return;
    p.command_lists.push_back(p.clb);
    const uint32_t dw0 = get32(header);
    const uint32_t prdtl = dw0 >> 16;
    const bool write = dw0 & (1u << 6);
    uint8_t* table = m_memory.at(get32(header + 8), 0x80 + 16 * prdtl);
    if (!table) return;
    EXPECT_EQ(table[0], 0x27) << "command FIS type";
    EXPECT_EQ(table[1] & 0x80, 0x80) << "the C bit";
    const uint8_t command = table[2];
    p.commands[command]++;
    uint64_t lba = uint64_t{table[4]} | (uint64_t{table[5]} << 8) | (uint64_t{table[6]} << 16) |
                   (uint64_t{table[8]} << 24) | (uint64_t{table[9]} << 32) | (uint64_t{table[10]} << 40);
    uint32_t count = table[12] | (uint32_t{table[13]} << 8);
    if (count == 0) count = 65536;
    std::vector<uint8_t> data;
    bool error = false;
    switch (command) {
      case 0xEC:
        if (p.device != Device::Disk) {
          error = true;
          break;
        }
        data = identify(p);
        break;
      case 0xC8:
      case 0xCA:
        // 28-bit: LBA bits 27:24 in the device register, the count in one byte (0: 256).
        lba = (lba & 0xFFFFFF) | (uint64_t{table[7] & 0x0Fu} << 24);
        count = table[12] ? table[12] : 256;
        [[fallthrough]];
      case 0x25:
      case 0x35:
        if (!p.lba48 && (command == 0x25 || command == 0x35)) error = true;
        if (lba + count > p.disk.size() / p.logical_bytes) error = true;
        if ((command == 0x35 || command == 0xCA) && p.fail_writes) error = true;
        EXPECT_EQ(write, command == 0x35 || command == 0xCA) << "the W bit";
        break;
      case 0xEA:
        break;
      default:
        error = true;
    }
    uint32_t moved = 0;
    const bool is_read = command == 0x25 || command == 0xC8, is_write = command == 0x35 || command == 0xCA;
    if (!error && (is_read || is_write)) {
      const size_t bytes = size_t{count} * p.logical_bytes;
      if (is_read)
        data.assign(p.disk.begin() + lba * p.logical_bytes, p.disk.begin() + lba * p.logical_bytes + bytes);
      else
        data.assign(bytes, 0);
    }
    // Scatter/gather through the PRDT.
    size_t offset = 0;
    for (uint32_t i = 0; i < prdtl && !error; ++i) {
      const uint8_t* prd = table + 0x80 + 16 * i;
      const uint32_t length = (get32(prd + 12) & 0x3FFFFF) + 1;
      uint8_t* buffer = m_memory.at(get32(prd), length);
      if (!buffer) return;
      const size_t n_bytes = std::min<size_t>(length, data.size() - std::min(offset, data.size()));
      if (write)
        std::memcpy(data.data() + offset, buffer, n_bytes);
      else
        std::memcpy(buffer, data.data() + offset, n_bytes);
      offset += n_bytes;
      moved += static_cast<uint32_t>(n_bytes);
    }
    if (!error && is_write) {
      EXPECT_EQ(offset, size_t{count} * p.logical_bytes) << "the PRDT covers the sectors written";
      std::memcpy(p.disk.data() + lba * p.logical_bytes, data.data(), offset);
      p.writes.push_back({lba, count});
    }
    put32(header + 4, moved);  // PRDBC
    if (error) {
      p.is |= 1u << 30;  // TFES; the slot stays issued until ST is cleared, as on hardware
      m_task_error[n] = true;
      return;
    }
    p.ci &= ~1u;
  }

  static std::vector<uint8_t> identify(const Port& p) {
    std::vector<uint16_t> words(256, 0);
    std::string model = p.model;
    model.resize(40, ' ');
    for (int i = 0; i < 20; ++i)
      words[27 + i] = static_cast<uint16_t>((uint8_t(model[2 * i]) << 8) | uint8_t(model[2 * i + 1]));
    const uint64_t sectors = p.disk.size() / p.logical_bytes;
    words[106] = p.word106;
    words[117] = static_cast<uint16_t>(p.logical_bytes / 2);
    words[118] = static_cast<uint16_t>(p.logical_bytes / 2 >> 16);
    const uint32_t lba28 = sectors > 0x0FFFFFFF ? 0x0FFFFFFF : static_cast<uint32_t>(sectors);
    words[60] = lba28 & 0xFFFF;
    words[61] = lba28 >> 16;
    if (p.lba48) {
      words[83] = 1u << 10;
      for (int i = 0; i < 4; ++i) words[100 + i] = static_cast<uint16_t>(sectors >> (16 * i));
    }
    std::vector<uint8_t> bytes(512);
    std::memcpy(bytes.data(), words.data(), 512);
    return bytes;
  }

  GuestMemory& m_memory;
  const SimClock* m_clock;
  uint32_t m_ghc = 0;
  uint32_t m_cap2 = 0;
  uint32_t m_bohc = 0;
  int m_release_after = -1;
  int m_bohc_reads = 0;
  bool m_busy = false;
  bool m_oos_set = false;
  std::map<uint32_t, bool> m_list_ran;
  std::map<uint32_t, bool> m_task_error;
};

// ---------------------------------------------------------------------------------------------------------
// NVMe 1.4: CAP/CC/CSTS/AQA/ASQ/ACQ, doorbells at 0x1000 (stride 4); a submission tail doorbell runs the
// commands at once and posts their completions with the phase tag. CC.SHN completes a shutdown at once;
// CC.EN going to 0 without one counts an unsafe shutdown, as a drive's SMART log does.
class NvmeModel final : public RegisterWindow {
 public:
  struct Namespace {
    std::vector<uint8_t> data;
    uint32_t block_bytes = 512;
    uint16_t metadata_bytes = 0;  // of the format in use (LBAF.MS)
    bool extended_lba = false;    // FLBAS bit 4
    uint8_t protection = 0;       // DPS.PIT
  };
  std::vector<Namespace> namespaces;
  std::string model = "MODEL NVME";
  uint8_t mdts = 0;                  // 0: no limit
  bool never_ready = false;          // CSTS.RDY never rises
  bool fatal = false;                // CSTS.CFS on enable
  bool active_list_unknown = false;  // IDENTIFY CNS 2 is refused (an NVMe 1.0 controller)
  uint8_t fail_opcode = 0xFF;        // this I/O opcode completes with "internal error"
  uint8_t fail_admin_opcode = 0xFF;  // this admin opcode completes with "internal error"
  bool io_hangs = false;             // I/O commands are fetched and never complete
  bool stranger_completion = false;  // the next I/O completion carries a command identifier never issued
  int64_t corrupt_read_lba = -1;  // a READ of this LBA returns it with one byte changed (the medium is right)
  int64_t lose_write_lba = -1;    // a WRITE of this LBA completes without error and is not stored
  uint16_t mqes = 63;
  // Left enabled by the firmware, with its own admin queue.
  void enabled_by_firmware() {
    m_cc = 1;
    m_ready = true;
    m_asq = 0x9000;
  }

  // what happened
  std::map<uint8_t, int> io_commands;
  std::vector<std::pair<uint64_t, uint32_t>> writes;  // LBA, blocks
  int admin_commands = 0;
  int enables = 0;
  int shutdowns = 0;         // shutdown notifications completed
  int unsafe_shutdowns = 0;  // CC.EN cleared while enabled without a shutdown notification
  int doorbells_while_off = 0;
  bool queue_set_while_enabled = false;
  bool enabled() const { return m_cc & 1; }

  explicit NvmeModel(GuestMemory& memory) : m_memory(memory) {}

  uint32_t read32(uint32_t offset) override {
    switch (offset) {
      case 0x00:  // CAP: MQES, CQR, TO = 2 (1 s), DSTRD 0
        return mqes | (1u << 16) | (2u << 24);
      case 0x04:  // CSS: NVM (bit 37), MPSMIN 0
        return 1u << 5;
      case 0x08:
        return 0x00010400;
      case 0x14:
        return m_cc;
      case 0x1C:
        return (m_ready ? 1u : 0u) | (m_cfs ? 2u : 0u) | (uint32_t{m_shst} << 2);
      default:
        return 0;
    }
  }
  void write32(uint32_t offset, uint32_t value) override {
    if (offset >= 0x1000) return doorbell((offset - 0x1000) / 4, value);
    switch (offset) {
      case 0x14: {
        const bool was = m_cc & 1;
        m_cc = value;
        if (was && (value & 1) && ((value >> 14) & 3) && m_shst == 0) {
          m_shst = 2;  // shutdown processing complete
          ++shutdowns;
        }
        if (!was && (value & 1)) {
          ++enables;
          m_shst = 0;
          m_admin = {m_asq, m_acq, static_cast<uint16_t>((m_aqa & 0xFFF) + 1), 0, 0, 1};
          m_io_sq = {};
          m_io_cq = {};
          if (fatal)
            m_cfs = true;
          else if (!never_ready)
            m_ready = true;
        } else if (was && !(value & 1)) {
          if (m_ready && m_shst != 2) ++unsafe_shutdowns;
          m_ready = false;
          m_shst = 0;
        }
        break;
      }
      case 0x24:
        if (m_cc & 1) queue_set_while_enabled = true;
        m_aqa = value;
        break;
      case 0x28:
        if (m_cc & 1) queue_set_while_enabled = true;
        m_asq = value;
        break;
      case 0x30:
        if (m_cc & 1) queue_set_while_enabled = true;
        m_acq = value;
        break;
      default:
        break;
    }
  }

 private:
  struct Queue {
    uint64_t sq;
    uint64_t cq;
    uint16_t entries;
    uint16_t sq_head;
    uint16_t cq_tail;
    uint8_t phase;
  };

  void doorbell(uint32_t index, uint32_t value) {
    if (!m_ready) {
      ++doorbells_while_off;
      return ADD_FAILURE() << "doorbell rung while the controller is not ready";
    }
    const bool completion = index & 1;
    const uint32_t qid = index / 2;
    if (completion) return;  // the model never runs out of completion slots: one command at a time
    Queue& q = qid == 0 ? m_admin : m_io_sq;
    if (qid > 1 || q.entries == 0) return ADD_FAILURE() << "doorbell of a queue that does not exist: " << qid;
    while (q.sq_head != value) {
      uint8_t* sqe = m_memory.at(q.sq + 64u * q.sq_head, 64);
      if (!sqe) return;
      q.sq_head = static_cast<uint16_t>((q.sq_head + 1) % q.entries);
      if (qid == 1 && io_hangs) continue;
      const uint16_t status = qid == 0 ? admin(sqe) : io(sqe);
      auto cid = static_cast<uint16_t>(get32(sqe) >> 16);
      if (qid == 1 && stranger_completion) {
        stranger_completion = false;
        cid = static_cast<uint16_t>(cid + 0x4000);
      }
      post(qid == 0 ? m_admin : m_io_cq, qid, q.sq_head, cid, status);
    }
  }

  void post(Queue& cq, uint32_t sqid, uint16_t sq_head, uint16_t cid, uint16_t status) {
    uint8_t* cqe = m_memory.at(cq.cq + 16u * cq.cq_tail, 16);
    if (!cqe) return;
    put32(cqe, 0);
    put32(cqe + 8, sq_head | (sqid << 16));
    put32(cqe + 12, cid | (uint32_t{cq.phase} << 16) | (uint32_t{status} << 17));
    cq.cq_tail = static_cast<uint16_t>((cq.cq_tail + 1) % cq.entries);
    if (cq.cq_tail == 0) cq.phase ^= 1;
  }

  // Copies `bytes` between `data` and the command's PRPs.
  bool prp_copy(const uint8_t* sqe, uint8_t* data, size_t bytes, bool to_host) {
    const uint64_t prp1 = get64(sqe + 24), prp2 = get64(sqe + 32);
    std::vector<uint64_t> pages{prp1};
    const size_t first = std::min<size_t>(bytes, 4096 - (prp1 & 0xFFF));
    size_t rest = bytes - first;
    const size_t more = (rest + 4095) / 4096;
    if (more == 1) {
      EXPECT_EQ(prp2 & 0xFFF, 0u) << "PRP2 must be page aligned";
      pages.push_back(prp2);
    } else if (more > 1) {
      EXPECT_EQ(prp2 & 0x7, 0u) << "the PRP list pointer is qword aligned";
      const uint8_t* list = m_memory.at(prp2, 8 * more);
      if (!list) return false;
      for (size_t i = 0; i < more; ++i) {
        const uint64_t page = get64(list + 8 * i);
        EXPECT_EQ(page & 0xFFF, 0u) << "PRP list entries are page aligned";
        pages.push_back(page);
      }
    }
    size_t done = 0;
    for (size_t i = 0; i < pages.size() && done < bytes; ++i) {
      const size_t length = i == 0 ? first : std::min<size_t>(4096, bytes - done);
      uint8_t* memory = m_memory.at(pages[i], length);
      if (!memory) return false;
      if (to_host)
        std::memcpy(memory, data + done, length);
      else
        std::memcpy(data + done, memory, length);
      done += length;
    }
    return true;
  }

  static constexpr uint16_t kInvalidOpcode = 0x01, kInvalidField = 0x02, kInternal = 0x06, kInvalidNs = 0x0B,
                            kLbaRange = 0x80;

  uint16_t admin(const uint8_t* sqe) {
    ++admin_commands;
    const uint8_t opcode = sqe[0];
    if (opcode == fail_admin_opcode) return kInternal;
    const uint32_t nsid = get32(sqe + 4), cdw10 = get32(sqe + 40), cdw11 = get32(sqe + 44);
    if (opcode == 0x06) {
      std::vector<uint8_t> page(4096, 0);
      switch (cdw10 & 0xFF) {
        case 1: {
          std::string m = model;
          m.resize(40, ' ');
          std::memcpy(page.data() + 24, m.data(), 40);
          page[77] = mdts;
          put32(page.data() + 516, 256);  // like QEMU: 256 namespaces, most inactive
          break;
        }
        case 0:
          if (nsid == 0 || nsid > 256) return kInvalidNs;
          if (nsid <= namespaces.size()) {
            const Namespace& ns = namespaces[nsid - 1];
            const uint64_t blocks = ns.data.size() / ns.block_bytes;
            std::memcpy(page.data(), &blocks, 8);
            std::memcpy(page.data() + 8, &blocks, 8);
            page[25] = 1;  // two formats: 512 and the namespace's other block size (4096 by default)
            page[26] = static_cast<uint8_t>((ns.block_bytes == 512 ? 0 : 1) | (ns.extended_lba ? 0x10 : 0));
            page[29] = ns.protection;
            page[128 + 2] = 9;
            page[132 + 2] = ns.block_bytes == 512 ? 12 : static_cast<uint8_t>(__builtin_ctz(ns.block_bytes));
            std::memcpy(page.data() + 128 + 4 * (page[26] & 0xF), &ns.metadata_bytes, 2);
          }
          break;
        case 2:
          if (active_list_unknown) return kInvalidField;
          for (uint32_t i = 0; i < namespaces.size(); ++i) put32(page.data() + 4 * i, i + 1);
          break;
        default:
          return kInvalidField;
      }
      return prp_copy(sqe, page.data(), 4096, true) ? 0 : kInternal;
    }
    if (opcode == 0x05 || opcode == 0x01) {
      const uint16_t qid = cdw10 & 0xFFFF, entries = static_cast<uint16_t>((cdw10 >> 16) + 1);
      if (qid != 1 || entries > mqes + 1 || !(cdw11 & 1)) return kInvalidField;
      if (opcode == 0x05)
        m_io_cq = {0, get64(sqe + 24), entries, 0, 0, 1};
      else {
        if ((cdw11 >> 16) != 1 || m_io_cq.entries == 0) return kInvalidField;
        m_io_sq = {get64(sqe + 24), 0, entries, 0, 0, 1};
      }
      return 0;
    }
    return kInvalidOpcode;
  }

  uint16_t io(const uint8_t* sqe) {
    const uint8_t opcode = sqe[0];
    io_commands[opcode]++;
    const uint32_t nsid = get32(sqe + 4);
    if (nsid == 0 || nsid > namespaces.size()) return kInvalidNs;
    if (opcode == fail_opcode) return kInternal;
    Namespace& ns = namespaces[nsid - 1];
    if (opcode == 0x00) return 0;
    const uint64_t lba = get64(sqe + 40);
    const uint32_t blocks = (get32(sqe + 48) & 0xFFFF) + 1;
    const size_t bytes = size_t{blocks} * ns.block_bytes;
    if (mdts && bytes > (4096u << mdts)) return kInvalidField;
    if ((lba + blocks) * ns.block_bytes > ns.data.size()) return kLbaRange;
    uint8_t* data = ns.data.data() + lba * ns.block_bytes;
    const auto covers = [&](int64_t at) {
      return at >= 0 && uint64_t(at) >= lba && uint64_t(at) < lba + blocks;
    };
    if (opcode == 0x01) {
      writes.push_back({lba, blocks});
      if (!covers(lose_write_lba)) return prp_copy(sqe, data, bytes, false) ? 0 : kInternal;
      std::vector<uint8_t> kept(data + (lose_write_lba - lba) * ns.block_bytes,
                                data + (lose_write_lba - lba + 1) * ns.block_bytes);
      const bool copied = prp_copy(sqe, data, bytes, false);
      std::copy(kept.begin(), kept.end(), data + (lose_write_lba - lba) * ns.block_bytes);
      return copied ? 0 : kInternal;
    }
    if (opcode == 0x02) {
      if (!covers(corrupt_read_lba)) return prp_copy(sqe, data, bytes, true) ? 0 : kInternal;
      std::vector<uint8_t> copy(data, data + bytes);
      copy[(corrupt_read_lba - lba) * ns.block_bytes + 100] ^= 0x01;
      return prp_copy(sqe, copy.data(), bytes, true) ? 0 : kInternal;
    }
    return kInvalidOpcode;
  }

  GuestMemory& m_memory;
  uint32_t m_cc = 0;
  bool m_ready = false;
  bool m_cfs = false;
  uint32_t m_aqa = 0;
  uint64_t m_asq = 0, m_acq = 0;
  uint8_t m_shst = 0;  // CSTS.SHST
  Queue m_admin{}, m_io_sq{}, m_io_cq{};
};

}  // namespace ett::test
