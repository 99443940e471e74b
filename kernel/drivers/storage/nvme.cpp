// nvme.cpp: controller bring-up (disable, admin queue, enable, IDENTIFY, I/O queue pair), polled commands
// matched to their completions by command identifier, and the shutdown.
#include "drivers/storage/nvme.h"

#include "lib/format.h"

namespace ett::drivers::storage {

namespace {
constexpr uint32_t kAdminMs = 2'000;
constexpr uint32_t kIoMs = 10'000;
constexpr uint32_t kIoFlushMs = 30'000;
constexpr uint32_t kMaxReadyMs = 30'000;
constexpr uint32_t kShutdownMs = 5'000;
constexpr uint32_t kSqEntryBytes = 64;
constexpr uint32_t kCqEntryBytes = 16;
constexpr uint32_t kSectorSize = BlockDevice::kSectorSize;

// CAP fields.
constexpr uint32_t cap_max_entries(uint64_t cap) {
  return static_cast<uint32_t>(cap & 0xFFFF) + 1;
}
constexpr uint32_t cap_timeout_ms(uint64_t cap) {
  return static_cast<uint32_t>((cap >> 24) & 0xFF) * 500;
}
constexpr uint32_t cap_doorbell_stride(uint64_t cap) {
  return 4u << ((cap >> 32) & 0xF);
}
constexpr bool cap_nvm_command_set(uint64_t cap) {
  return (cap >> 37) & 1;
}
constexpr uint32_t cap_min_page_bytes(uint64_t cap) {
  return 4096u << ((cap >> 48) & 0xF);
}

uint32_t load32(const uint8_t* bytes) {
  return uint32_t{bytes[0]} | (uint32_t{bytes[1]} << 8) | (uint32_t{bytes[2]} << 16) |
         (uint32_t{bytes[3]} << 24);
}
uint64_t load64(const uint8_t* bytes) {
  return load32(bytes) | (uint64_t{load32(bytes + 4)} << 32);
}
}  // namespace

Result<NvmeController> NvmeController::open(RegisterWindow& bar0, Clock& clock, const DmaArea& area) {
  if (area.size < kDmaBytes || (area.phys & 0xFFF) != 0)
    return fail("nvme: the DMA area is too small or not 4 KiB aligned");
  NvmeController controller(bar0, clock, area);
  const uint64_t cap = bar0.read64(kCap);
  if (cap == ~uint64_t{0}) return fail("nvme: the controller's registers read all ones (not decoded)");
  if (!cap_nvm_command_set(cap)) return fail("nvme: the controller does not offer the NVM command set");
  if (cap_min_page_bytes(cap) > kPageSize)
    return fail("nvme: the controller's smallest memory page is larger than 4 KiB");
  controller.m_doorbell_stride = cap_doorbell_stride(cap);
  const uint32_t timeout = cap_timeout_ms(cap);
  controller.m_ready_timeout_ms = timeout < 500 ? 500 : timeout > kMaxReadyMs ? kMaxReadyMs : timeout;
  const uint32_t max_entries = cap_max_entries(cap);
  if (max_entries < kQueueEntries) return fail("nvme: the controller's queues are too short (CAP.MQES)");

  ETT_TRY(controller.shut_down());  // one the firmware left running is told first, then disabled
  ETT_TRY(controller.bring_up());
  return controller;
}

Status NvmeController::bring_up() {
  ETT_TRY(disable());
  for (uint32_t i = 0; i < kData; ++i) m_area.data[i] = 0;
  m_admin = {kAdminSq, kAdminCq, 0, 0, 0, 1};
  m_io = {kIoSq, kIoCq, 1, 0, 0, 1};
  m_bar->write32(kIntms, 0xFFFFFFFF);  // polled: no interrupt vector is ever wanted
  m_bar->write32(kAqa, (uint32_t{kQueueEntries - 1} << 16) | (kQueueEntries - 1));
  m_bar->write64(kAsq, m_area.phys + kAdminSq);
  m_bar->write64(kAcq, m_area.phys + kAdminCq);
  if (Status enabled = enable(); !enabled) return stop_after(enabled);
  if (Status identified = identify_controller(); !identified) return stop_after(identified);
  if (Status created = create_io_queues(); !created) return stop_after(created);
  m_running = true;
  return {};
}

Status NvmeController::disable() {
  m_running = false;
  m_writes_in_flight = 0;  // a disabled controller aborts them
  const uint32_t cc = m_bar->read32(kCc);
  if (cc & kCcEnable) m_bar->write32(kCc, cc & ~(kCcEnable | kCcShutdownMask));
  return wait_until(*m_clock, m_ready_timeout_ms, "nvme: the controller did not stop (CSTS.RDY stays set)",
                    [this] { return !(m_bar->read32(kCsts) & kCstsReady); });
}

Status NvmeController::stop_after(const Status& error) {
  (void)disable();  // the cause is the better message; a controller that does not stop reports it next time
  return error;
}

Status NvmeController::shut_down() {
  const uint32_t cc = m_bar->read32(kCc);
  const uint32_t csts = m_bar->read32(kCsts);
  if ((cc & kCcEnable) && (csts & kCstsReady) && !(csts & kCstsFatal)) {
    m_bar->write32(kCc, (cc & ~kCcShutdownMask) | kCcShutdownNormal);
    Status done =
        wait_until(*m_clock, kShutdownMs,
                   "nvme: the controller did not finish its shutdown (CSTS.SHST stays short of 10b)",
                   [this] { return (m_bar->read32(kCsts) & kCstsShutdownMask) == kCstsShutdownComplete; });
    if (!done) return stop_after(done);
  }
  return disable();
}

Status NvmeController::enable() {
  m_bar->write32(kCc, kCcEnable | kCcIoSqEntrySize | kCcIoCqEntrySize);  // NVM command set, 4 KiB pages
  ETT_TRY(wait_until(*m_clock, m_ready_timeout_ms,
                     "nvme: the controller did not become ready (CSTS.RDY stays 0)",
                     [this] { return (m_bar->read32(kCsts) & (kCstsReady | kCstsFatal)) != 0; }));
  if (m_bar->read32(kCsts) & kCstsFatal)
    return fail("nvme: the controller reports a fatal status (CSTS.CFS)");
  return {};
}

void NvmeController::prps(uint32_t offset, uint32_t bytes, uint64_t& prp1, uint64_t& prp2) {
  prp1 = m_area.phys + offset;
  prp2 = 0;
  if (bytes > 2 * kPageSize) {
    auto* list = reinterpret_cast<uint64_t*>(m_area.data + kPrpList);
    const uint32_t pages = (bytes + kPageSize - 1) / kPageSize;
    for (uint32_t page = 1; page < pages; ++page) list[page - 1] = prp1 + uint64_t{page} * kPageSize;
    prp2 = m_area.phys + kPrpList;
  } else if (bytes > kPageSize) {
    prp2 = prp1 + kPageSize;
  }
}

uint16_t NvmeController::post(Queue& queue, const Command& command, uint64_t prp1, uint64_t prp2) {
  const uint16_t cid = m_next_cid++;
  if (m_next_cid == 0) m_next_cid = 1;
  auto* sqe = reinterpret_cast<uint32_t*>(m_area.data + queue.sq_offset + queue.sq_tail * kSqEntryBytes);
  for (uint32_t i = 0; i < kSqEntryBytes / 4; ++i) sqe[i] = 0;
  sqe[0] = command.opcode | (uint32_t{cid} << 16);
  sqe[1] = command.nsid;
  sqe[6] = static_cast<uint32_t>(prp1);
  sqe[7] = static_cast<uint32_t>(prp1 >> 32);
  sqe[8] = static_cast<uint32_t>(prp2);
  sqe[9] = static_cast<uint32_t>(prp2 >> 32);
  sqe[10] = command.cdw10;
  sqe[11] = command.cdw11;
  sqe[12] = command.cdw12;
  queue.sq_tail = static_cast<uint16_t>((queue.sq_tail + 1) % kQueueEntries);
  dma_barrier();
  m_bar->write32(doorbell(queue.id, false), queue.sq_tail);
  return cid;
}

Status NvmeController::reap(Queue& queue, uint32_t timeout_ms, const char* what, uint16_t* expected,
                            uint32_t& count) {
  volatile uint32_t* cqe =
      reinterpret_cast<volatile uint32_t*>(m_area.data + queue.cq_offset + queue.cq_head * kCqEntryBytes);
  static char message[160];
  lib::format(message, sizeof(message), "nvme: timed out waiting for the completion of %s", what);
  if (Status arrived = wait_until(*m_clock, timeout_ms, message,
                                  [&] {
                                    dma_barrier();
                                    return ((cqe[3] >> 16) & 1) == queue.phase;
                                  });
      !arrived)
    return stop_after(arrived);  // disabling the controller aborts the command: no late DMA
  dma_barrier();
  const uint32_t dw2 = cqe[2], dw3 = cqe[3];
  queue.cq_head = static_cast<uint16_t>((queue.cq_head + 1) % kQueueEntries);
  if (queue.cq_head == 0) queue.phase ^= 1;
  m_bar->write32(doorbell(queue.id, true), queue.cq_head);

  const auto cid = static_cast<uint16_t>(dw3 & 0xFFFF);
  uint32_t match = 0;
  while (match < count && expected[match] != cid) ++match;
  if (match == count || (dw2 >> 16) != queue.id) {
    lib::format(
        message, sizeof(message),
        "nvme: waiting for %s, a completion came for command %u of queue %u, which is not outstanding", what,
        cid, dw2 >> 16);
    return stop_after(fail(message));  // our commands' state is unknown: stop them all
  }
  expected[match] = expected[--count];
  const uint32_t status = (dw3 >> 17) & 0x7FFF;  // SC bits 7:0, SCT bits 10:8
  if (status != 0) {
    lib::format(message, sizeof(message), "nvme: %s failed: status code type %u, status code 0x%02x", what,
                (status >> 8) & 0x7, status & 0xFF);
    return fail(message);
  }
  return {};
}

Status NvmeController::submit(Queue& queue, const Command& command, uint32_t timeout_ms, const char* what) {
  uint64_t prp1 = 0, prp2 = 0;
  if (command.data_bytes > 0) prps(command.data_offset, command.data_bytes, prp1, prp2);
  uint16_t cid = post(queue, command, prp1, prp2);
  uint32_t outstanding = 1;
  return reap(queue, timeout_ms, what, &cid, outstanding);
}

Status NvmeController::start_writes(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count,
                                    uint32_t index) {
  if (m_writes_in_flight) return fail("nvme: a write is already outstanding");
  ETT_TRY(ensure_running());
  if (index >= BlockDevice::kStagingBuffers || count == 0 || count * kSectorSize > kStagingBytes)
    return fail("nvme: bad staging write");
  // This buffer's own PRP list: entry k is its page k (a command starting at page p points PRP2 at entry
  // p+1).
  const uint32_t buffer = kStaging + index * kStagingBytes;
  const uint32_t list_offset = kStagingPrpLists + index * kPageSize;
  auto* list = reinterpret_cast<uint64_t*>(m_area.data + list_offset);
  for (uint32_t page = 0; page < kStagingBytes / kPageSize; ++page)
    list[page] = m_area.phys + buffer + uint64_t{page} * kPageSize;
  const uint32_t max_sectors = m_max_transfer / kSectorSize;
  for (uint32_t done = 0; done < count;) {
    const uint32_t sectors = count - done < max_sectors ? count - done : max_sectors;
    const uint32_t offset = done * kSectorSize, bytes = sectors * kSectorSize;
    const uint64_t prp1 = m_area.phys + buffer + offset;
    uint64_t prp2 = 0;
    if (bytes > 2 * kPageSize)
      prp2 = m_area.phys + list_offset + 8 * (offset / kPageSize + 1);
    else if (bytes > kPageSize)
      prp2 = prp1 + kPageSize;
    if (m_writes_in_flight == kQueueEntries - 1) {  // the queue is full: one must complete first
      if (Status reaped = reap(m_io, kIoMs, "WRITE", m_write_cids, m_writes_in_flight); !reaped)
        return stop_after(reaped);  // the others may still be running
    }
    const uint64_t at = (lba + done) >> shift;
    m_write_cids[m_writes_in_flight++] = post(m_io,
                                              {kWrite, nsid, static_cast<uint32_t>(at),
                                               static_cast<uint32_t>(at >> 32), (sectors >> shift) - 1, 0, 0},
                                              prp1, prp2);
    done += sectors;
  }
  return {};
}

Status NvmeController::finish_writes() {
  Status result;
  while (m_writes_in_flight > 0) {  // a timeout or a stranger's completion stops the controller: ends at 0
    Status one = reap(m_io, kIoMs, "WRITE", m_write_cids, m_writes_in_flight);
    if (!one && result) result = one;
  }
  return result;
}

Status NvmeController::identify_controller() {
  ETT_TRY(submit(m_admin, {kIdentify, 0, kCnsController, 0, 0, kPageSize, kIdentifyPage}, kAdminMs,
                 "IDENTIFY (controller)"));
  const uint8_t* page = m_area.data + kIdentifyPage;
  for (uint32_t i = 0; i < 40; ++i) m_model[i] = static_cast<char>(page[24 + i]);
  for (int i = 39; i >= 0 && (m_model[i] == ' ' || m_model[i] == '\0'); --i) m_model[i] = '\0';
  const uint8_t mdts = page[77];  // 2^MDTS minimum-size pages; 0: no limit
  if (mdts != 0 && (uint64_t{kPageSize} << (mdts < 32 ? mdts : 32)) < m_max_transfer)
    m_max_transfer = kPageSize << mdts;
  m_namespace_count = load32(page + 516);
  return {};
}

Status NvmeController::create_io_queues() {
  const uint32_t size = uint32_t{kQueueEntries - 1} << 16;
  // Each queue is one page, given as the command's PRP1; bit 0 of CDW11: physically contiguous.
  ETT_TRY(submit(m_admin, {kCreateIoCq, 0, size | m_io.id, 1, 0, kPageSize, kIoCq}, kAdminMs,
                 "CREATE I/O COMPLETION QUEUE"));
  return submit(m_admin, {kCreateIoSq, 0, size | m_io.id, (uint32_t{m_io.id} << 16) | 1, 0, kPageSize, kIoSq},
                kAdminMs, "CREATE I/O SUBMISSION QUEUE");
}

Result<NvmeController::NamespaceInfo> NvmeController::identify_namespace(uint32_t nsid) {
  ETT_TRY(ensure_running());
  ETT_TRY(submit(m_admin, {kIdentify, nsid, kCnsNamespace, 0, 0, kPageSize, kIdentifyPage}, kAdminMs,
                 "IDENTIFY (namespace)"));
  const uint8_t* page = m_area.data + kIdentifyPage;
  NamespaceInfo info{};
  info.sectors = load64(page + 0);        // NSZE
  const uint8_t format = page[26] & 0xF;  // FLBAS bits 3:0: the LBA format in use
  const uint8_t* lbaf = page + 128 + 4 * format;
  const uint8_t lbads = lbaf[2];
  info.block_bytes = lbads >= 9 && lbads < 32 ? 1u << lbads : 0;
  info.metadata_bytes = lbaf[0] | (uint32_t{lbaf[1]} << 8);  // LBAF.MS
  info.extended_lba = (page[26] >> 4) & 1;
  info.protection = page[29] & 0x7;  // DPS.PIT
  return info;
}

Result<uint32_t> NvmeController::active_namespaces(uint32_t* nsids, uint32_t capacity) {
  ETT_TRY(ensure_running());
  uint32_t count = 0;
  const Status listed = submit(m_admin, {kIdentify, 0, kCnsActiveNamespaces, 0, 0, kPageSize, kIdentifyPage},
                               kAdminMs, "IDENTIFY (active namespaces)");
  if (!listed && !m_running) return listed.failure();  // timed out: not a controller that lacks the command
  if (listed) {
    const uint8_t* page = m_area.data + kIdentifyPage;
    for (uint32_t i = 0; i < kPageSize / 4 && count < capacity; ++i) {
      const uint32_t nsid = load32(page + 4 * i);
      if (nsid == 0) break;
      nsids[count++] = nsid;
    }
    return count;
  }
  for (uint32_t nsid = 1; nsid <= m_namespace_count && count < capacity; ++nsid) nsids[count++] = nsid;
  return count;
}

Status NvmeController::transfer(IoOpcode opcode, uint32_t nsid, uint32_t shift, uint64_t lba,
                                uint32_t count) {
  ETT_TRY(ensure_running());
  const char* what = opcode == kWrite ? "WRITE" : opcode == kRead ? "READ" : "FLUSH";
  const uint32_t bytes = opcode == kFlush ? 0 : count * kSectorSize;
  const uint64_t block = lba >> shift;
  return submit(m_io,
                {opcode, nsid, static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                 opcode == kFlush ? 0 : (count >> shift) - 1, bytes, kData},
                opcode == kFlush ? kIoFlushMs : kIoMs, what);
}

Status NvmeController::read(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count, void* buffer) {
  const uint32_t max_sectors = (m_max_transfer < kDataBytes ? m_max_transfer : kDataBytes) / kSectorSize;
  auto* out = static_cast<uint8_t*>(buffer);
  while (count > 0) {
    const uint32_t batch = count < max_sectors ? count : max_sectors;
    ETT_TRY(transfer(kRead, nsid, shift, lba, batch));
    __builtin_memcpy(out, m_area.data + kData, batch * kSectorSize);
    out += batch * kSectorSize;
    lba += batch;
    count -= batch;
  }
  return {};
}

Status NvmeController::write(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count, const void* data) {
  const uint32_t max_sectors = (m_max_transfer < kDataBytes ? m_max_transfer : kDataBytes) / kSectorSize;
  const auto* in = static_cast<const uint8_t*>(data);
  while (count > 0) {
    const uint32_t batch = count < max_sectors ? count : max_sectors;
    __builtin_memcpy(m_area.data + kData, in, batch * kSectorSize);
    ETT_TRY(transfer(kWrite, nsid, shift, lba, batch));
    in += batch * kSectorSize;
    lba += batch;
    count -= batch;
  }
  return {};
}

Status NvmeController::flush(uint32_t nsid) {
  return transfer(kFlush, nsid, 0, 0, 0);
}

// --- one namespace ----------------------------------------------------------------------------------------

Result<NvmeDisk> NvmeDisk::open(NvmeController& controller, uint32_t nsid) {
  ETT_TRY_ASSIGN(const NvmeController::NamespaceInfo info, controller.identify_namespace(nsid));
  if (info.sectors == 0) return fail(kNotActive);
  static char message[160];
  if (!supported_block_size(info.block_bytes)) {
    lib::format(message, sizeof(message),
                "nvme: the namespace has %u-byte blocks; a trace disk needs 512-, 1024-, 2048- or 4096-byte "
                "blocks",
                info.block_bytes);
    return fail(message);
  }
  if (info.protection != 0) {
    lib::format(message, sizeof(message),
                "nvme: the namespace's format has protection information (type %u); a trace disk needs a "
                "format without it",
                info.protection);
    return fail(message);
  }
  if (info.metadata_bytes != 0) {
    lib::format(message, sizeof(message),
                "nvme: the namespace's format has %u bytes of metadata per block (%s); a trace disk needs a "
                "format without metadata",
                info.metadata_bytes, info.extended_lba ? "extended LBA" : "separate buffer");
    return fail(message);
  }
  const uint32_t shift = block_shift(info.block_bytes);
  if (info.sectors > (~uint64_t{0} >> shift)) return fail("nvme: the namespace's size does not fit 64 bits");
  return NvmeDisk(controller, nsid, info.sectors << shift, shift);
}

Status NvmeDisk::read(uint64_t lba, uint32_t count, void* buffer) {
  if (lba + count > m_sectors) return fail("nvme: read beyond the end of the namespace");
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  return m_controller->read(m_nsid, m_shift, lba, count, buffer);
}

Status NvmeDisk::start_write(uint64_t lba, uint32_t count, uint32_t index) {
  if (lba + count > m_sectors) return fail("nvme: write beyond the end of the namespace");
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  return m_controller->start_writes(m_nsid, m_shift, lba, count, index);
}

Status NvmeDisk::write(uint64_t lba, uint32_t count, const void* data) {
  if (lba + count > m_sectors) return fail("nvme: write beyond the end of the namespace");
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  return m_controller->write(m_nsid, m_shift, lba, count, data);
}

}  // namespace ett::drivers::storage
