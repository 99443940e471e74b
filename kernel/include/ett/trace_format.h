// trace_format.h: THE on-disk trace format. The capture kernel and the host tools both include this file.
//
// A trace disk is a raw block device (or image file) of 512-byte sectors:
//
//   LBA 0                      DiskLabel: magic, format version, disk UUID, capacity
//   LBA kFirstSessionLba       session 1: SessionHeader (1 sector), the stall table (kStallTableSectors;
//                              session format version 2 on), then chunk_count chunks
//   session 1 + reserved       session 2: ...            (sessions are appended, never rewritten)
//
// A chunk is kChunkSectors sectors: a ChunkHeader followed by fixed-size EventRecords, zero-padded. The
// header's CRC32C covers the whole chunk (with the crc field zero), so any changed byte is detected.
//
// A session is written in three steps: its header with status Writing (which reserves its sectors), its
// chunks, then the header again with status Complete. A dump cut off by a power loss therefore leaves a
// session marked Writing whose complete chunks can still be recovered, and every earlier session intact.
// Everything is little-endian (x86).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ett::format {

inline constexpr uint32_t kSectorSize = 512;
inline constexpr uint32_t kFormatVersion = 1;  // the disk label's layout (unchanged since version 1)
// The session's: 2 added the capture's check intervals to the header and the stall table after it. Readers
// take 1 (no stall table: the chunks follow the header) and 2.
inline constexpr uint32_t kSessionFormatVersion = 2;
inline constexpr uint32_t kStallTableSectors = 8;
inline constexpr uint64_t kFirstSessionLba = 8;
inline constexpr uint32_t kChunkSectors = 64;  // 32 KiB per chunk
inline constexpr uint32_t kChunkBytes = kChunkSectors * kSectorSize;

inline constexpr char kDiskMagic[8] = {'E', 'T', 'T', 'D', 'I', 'S', 'K', '1'};
inline constexpr char kSessionMagic[8] = {'E', 'T', 'T', 'S', 'E', 'S', 'S', '1'};
inline constexpr char kChunkMagic[4] = {'E', 'T', 'T', 'C'};

// Where the events came from (probe= on the kernel command line).
enum class ProbeSource : uint32_t {
  Ivshmem = 1,       // QEMU ivshmem-plain shared memory, byte 0 = the eight data lines
  Lpt = 2,           // legacy parallel port, bidirectional input mode
  PciLpt = 3,        // PCI/PCIe parallel-port card
  LptLoopback = 4,   // test-only: legacy port with the direction bit clear (QEMU monitor sets the value)
  Uart = 5,          // a 16550-compatible UART's modem-status inputs: D0 = DCD, D1 = DSR, D2 = CTS, D3 = RI
  UartLoopback = 6,  // test-only: the same UART in loopback mode (MCR bit 4), its own MCR drives the inputs
  PciUart = 7,       // a UART on a PCI/PCIe serial card (class 07/00), inputs as for Uart
};

// How the eight data lines D0..D7 are split into probes (layout= on the kernel command line).
enum class Layout : uint32_t {
  Double2x4 = 1,  // the ETT double probe: probe 1 = D0-D3, probe 2 = D4-D7
  Single8x1 = 2,  // probe k = line D(k-1)
  Quad4x2 = 3,    // probe k = lines D(2k-2)..D(2k-1)
  Byte1x8 = 4,    // one 8-bit probe
};

enum class CaptureMode : uint32_t {
  Capture = 1,    // record line changes
  Calibrate = 2,  // record every loop step (loop-step distribution)
  HwLat = 3,      // record gaps between consecutive TSC reads above a threshold
  Survey = 4,     // no capture: a SurveyBlock (below) saying what this PC offers for measuring
};

enum class StopReason : uint32_t {
  None = 0,
  HostRequest = 1,  // the host set the stop command in the virtual probe's control block
  Deadline = 2,     // limit=SECONDS elapsed
  BufferFull = 3,   // all free RAM is used
  ZeroCode = 4,     // stop=zero: a zero code on a probe
  CodeMatch = 5,    // stop=code:P:C
  Keyboard = 6,     // a key was pressed (keyboard=1)
};

enum class SessionStatus : uint32_t {
  Writing = 1,   // header written before the chunks; still Writing afterwards means the dump was cut off
  Complete = 2,  // every chunk was written and flushed
};

enum class TscMethod : uint32_t {
  Pit = 1,      // counted against PIT channel 2
  PmTimer = 2,  // ACPI power-management timer
  Hpet = 3,
  Cpuid = 4,  // no reference timer answered: the nominal rate of CPUID leaves 0x15/0x16
};

// Session flags.
enum SessionFlags : uint32_t {
  kFlagInvariantTsc = 1u << 0,  // CPUID.80000007H:EDX[8]
  kFlagTriggered = 1u << 1,     // a trigger= pattern was set and matched
  kFlagSmiCount = 1u << 2,      // smi_count is valid (MSR 0x34, Intel)
};

struct DiskLabel {
  char magic[8];               // kDiskMagic
  uint32_t format_version;     // kFormatVersion
  uint32_t sector_size;        // kSectorSize
  uint8_t disk_uuid[16];       // random, written by `ett mkdisk`
  uint64_t total_sectors;      // size of the disk the label was written for
  uint64_t first_session_lba;  // kFirstSessionLba
  uint64_t created_unix;       // seconds since 1970, host clock at mkdisk time
  char name[64];               // free text, NUL-padded
  uint8_t
      reserved[388];  // 120 bytes of fields + 388 = 508: the crc is the last 4 bytes on i686 and x86-64 alike
  uint32_t crc;       // CRC32C of bytes [0, 508)
};
static_assert(sizeof(DiskLabel) == kSectorSize);
static_assert(offsetof(DiskLabel, crc) == kSectorSize - 4);

struct SessionHeader {
  char magic[8];              // kSessionMagic
  uint32_t format_version;    // kFormatVersion
  uint32_t status;            // SessionStatus
  uint32_t session_number;    // 1, 2, ... in disk order
  uint32_t record_size;       // sizeof(EventRecord)
  uint32_t chunk_sectors;     // kChunkSectors
  uint32_t flags;             // SessionFlags
  uint64_t start_lba;         // LBA of this header
  uint64_t reserved_sectors;  // header + all chunks; the next session starts at start_lba + reserved_sectors
  uint64_t event_count;
  uint64_t chunk_count;
  uint64_t tsc_hz;               // calibrated TSC frequency
  uint32_t tsc_method;           // TscMethod
  uint32_t tsc_uncertainty_ppm;  // estimated calibration uncertainty
  uint64_t capture_start_tsc;    // TSC when the loop read the initial lines; time 0 of the capture
  uint64_t capture_end_tsc;      // TSC when the loop stopped
  uint64_t buffer_capacity;      // events that fit in RAM
  uint64_t captured_at_unix;     // CMOS RTC at capture start, seconds since 1970 (0 when unknown)
  uint32_t stop_reason;          // StopReason
  uint32_t probe_source;         // ProbeSource
  uint32_t layout;               // Layout
  uint32_t mode;                 // CaptureMode
  uint32_t probe_address;        // I/O base or physical address of the probe
  uint8_t initial_lines;         // D7..D0 when the capture started (not recorded as events)
  uint8_t final_lines;           // D7..D0 when the capture stopped
  uint8_t trigger_mask;          // trigger= pattern: lines that must match
  uint8_t trigger_match;         //   and the values they must have
  uint8_t filter_mask;           // filter= pattern: lines whose changes are recorded (0xFF = all)
  uint8_t stop_probe;            // stop=code:P:C
  uint8_t stop_code;
  uint8_t reserved0;
  uint32_t limit_ms;            // limit=SECONDS as milliseconds, 0 = none
  uint32_t pretrigger;          // pretrigger=N
  uint32_t hwlat_threshold_ns;  // threshold=NS in mode=hwlat
  uint8_t disk_uuid[16];        // copied from the label: a session names the disk it was written to
  char cpu_vendor[16];          // CPUID leaf 0, NUL-terminated
  char cpu_brand[48];           // CPUID leaves 0x80000002-4
  char cmdline[192];            // the kernel command line, NUL-terminated (truncated if longer)
  // Issue 3 (additive, carved from the reserved bytes; all 0 in sessions written before):
  uint64_t armed_tsc;          // trigger=: when the initial lines were read; capture_start_tsc is the trigger
  uint64_t pretrigger_events;  // the first N events are from before the trigger (negative times)
  uint64_t loop_iterations;    // polls (capture, calibrate) or clock reads (hwlat) during the run
  uint32_t floor_milliticks;   // mode=calibrate: the bare poll loop's ticks per poll x 1000, same boot
  uint32_t smi_count;          // mode=hwlat: SMIs during the run, when kFlagSmiCount
  uint64_t tsc_hz_pit;         // the PIT's own calibration, whichever timer tsc_method names (0: PIT failed)
  // Session format version 2 (all 0 in version 1): the capture's own error, from the loop's stop checks
  // (every 2^10 polls; kernel/capture/stall_log.h).
  uint32_t stall_count;            // stalls seen (more than stall_records when the table merged some)
  uint32_t stall_records;          // records used in the stall table
  uint64_t longest_check_ticks;    // the longest check-to-check interval of the capture
  uint64_t typical_check_ticks;    // the shortest (an interval without a stall)
  uint64_t stall_threshold_ticks;  // an interval longer than this was a stall
  uint64_t longest_stall_ticks;    // the longest stall (a merged record can be longer)
  uint32_t stall_table_crc;        // CRC32C of the kStallTableSectors sectors of the stall table
  uint32_t crc;                    // CRC32C of bytes [0, 508)
};
static_assert(sizeof(SessionHeader) == kSectorSize);
static_assert(offsetof(SessionHeader, crc) == kSectorSize - 4);

// The stall table: kMaxStallRecords records after the session header, zero-padded, in time order. A record
// is the check interval that held a stall: the loop did not poll for part of [start_tsc, start_tsc +
// length_ticks], so an event stamped in it (or the first one after it) can be late by up to length_ticks.
struct StallRecord {
  uint64_t start_tsc;     // the stop check before the stall
  uint64_t length_ticks;  // to the stop check after it
};
static_assert(sizeof(StallRecord) == 16);
inline constexpr uint32_t kMaxStallRecords = kStallTableSectors * kSectorSize / sizeof(StallRecord);

// Event flags (EventRecord::flags).
enum EventFlags : uint8_t {
  // probe=uart: the UART latched a change (a delta bit of its modem-status register) but the input read the
  // same as one poll before, so a pulse shorter than the poll step came and went between two reads. Both its
  // edges are recorded at the read that saw the latch, each with this flag: their order is known, their
  // times and the pulse's width are not (only that it was shorter than the step).
  kEventShortPulse = 1u << 0,  // probe=uart: one edge of a pulse shorter than the poll step (width unknown)
};

struct EventRecord {
  uint64_t tsc;   // TSC when the change was seen
  uint8_t probe;  // 1-based probe number under the session's layout
  uint8_t code;   // the probe's new code
  uint8_t lines;  // all eight data lines D7..D0 after the change
  uint8_t flags;  // EventFlags (0 for every source but the UART's)
  uint32_t aux;   // mode-specific: 0 in capture mode
  // mode=calibrate: one record per loop step: probe 0, code = lines = the lines read in that step, tsc = the
  //   TSC read after the lines, aux = ticks since the previous record (the first: since capture_start_tsc),
  //   saturated at 0xFFFFFFFF. The loop-step distribution is the distribution of aux (or of tsc differences).
  // mode=hwlat: one record per gap: probe 0, code = lines = 0, tsc = the TSC read before the gap,
  //   aux = the gap in ticks (> threshold), saturated at 0xFFFFFFFF.
};
static_assert(sizeof(EventRecord) == 16);

struct ChunkHeader {
  char magic[4];            // kChunkMagic
  uint32_t session_number;  // the session this chunk belongs to
  uint64_t chunk_index;     // 0, 1, ... within the session
  uint64_t first_seq;       // sequence number (0-based) of the first record in this chunk
  uint32_t record_count;    // records used in this chunk
  uint32_t crc;             // CRC32C of the whole kChunkBytes chunk, computed with this field zero
};
static_assert(sizeof(ChunkHeader) == 32);
static_assert(sizeof(ChunkHeader) % sizeof(EventRecord) == 0);

inline constexpr uint32_t kRecordsPerChunk = (kChunkBytes - sizeof(ChunkHeader)) / sizeof(EventRecord);

// Sectors a session with `event_count` events reserves on the disk (header, stall table, chunks).
constexpr uint64_t chunks_for(uint64_t event_count) {
  return (event_count + kRecordsPerChunk - 1) / kRecordsPerChunk;
}
// Sectors before the first chunk: the header, and from session format version 2 on the stall table.
constexpr uint64_t sectors_before_chunks(uint32_t session_format_version) {
  return session_format_version >= 2 ? 1 + kStallTableSectors : 1;
}
constexpr uint64_t session_sectors(uint64_t event_count) {
  return sectors_before_chunks(kSessionFormatVersion) + chunks_for(event_count) * kChunkSectors;
}

// ---------------------------------------------------------------------------------------------------------------
// Survey sessions (mode=survey): what a PC offers for measuring, found by one boot. A survey session has no
// events: event_count = chunk_count = 0, and its kSurveySectors-sector SurveyBlock follows the stall table
// (which is all zero) where a capture's chunks would start:
//
//   start_lba                     SessionHeader (mode = Survey; tsc_*, cpu_*, smi_count as usual)
//   start_lba + 1                 stall table (zero)
//   start_lba + 9                 SurveyBlock (sectors_before_chunks(2) = 9)
//
// reserved_sectors = sectors_before_chunks(2) + kSurveySectors, rounded up to whole blocks on a disk of
// larger blocks (as a capture's is). The host's `ett survey` turns the block into a verdict per use; the
// kernel only reports what it measured.
inline constexpr uint32_t kSurveySectors = 8;
inline constexpr char kSurveyMagic[8] = {'E', 'T', 'T', 'S', 'U', 'R', 'V', '1'};
inline constexpr uint32_t kSurveyVersion = 1;
inline constexpr uint32_t kSurveyMaxTimers = 4;
inline constexpr uint32_t kSurveyMaxProbes = 16;
inline constexpr uint32_t kSurveyMaxDisks = 8;
inline constexpr uint32_t kSurveyGapBins = 32;

enum class SurveyStatus : uint32_t {
  Absent = 0,   // looked for, not there (a floating bus, no such timer)
  Usable = 1,   // there and passed its checks
  Failed = 2,   // there, but a check failed (detail says which)
  Refused = 3,  // there, but ETT will not use it (detail says why: the console UART, a non-trace disk...)
};

enum class DiskInterface : uint32_t {
  Ide = 1,
  Ahci = 2,
  Nvme = 3,
};

// One reference timer and how the TSC's rate measured against it agrees with the chosen calibration.
struct SurveyTimer {
  uint32_t method;        // TscMethod
  uint32_t status;        // SurveyStatus
  uint64_t tsc_hz;        // the TSC's rate measured against this timer (0 when it failed)
  int32_t ppm_vs_chosen;  // (tsc_hz - SessionHeader::tsc_hz) / SessionHeader::tsc_hz in parts per million
  uint32_t reserved;
};
static_assert(sizeof(SurveyTimer) == 24);

// One probe candidate: a port, card or UART the kernel found, with the cost of reading it measured on this
// PC. A capture's loop step on this source is at least read_ticks; step_ticks_max is the longest step of a
// short calibrate-mode run on it (tau_max), the figure a verdict's pi is built from.
struct SurveyProbe {
  uint32_t source;          // ProbeSource
  uint32_t address;         // I/O base (or physical address) as probe=SOURCE:ADDRESS takes it
  uint32_t status;          // SurveyStatus
  uint32_t read_ticks_min;  // TSC ticks of one input read: minimum, median, maximum over the reads made
  uint32_t read_ticks_median;
  uint32_t read_ticks_max;
  uint32_t step_ticks_max;  // longest loop step of the calibrate run (0 when not run)
  uint32_t reads;           // input reads measured
  uint16_t pci_vendor;      // PCI cards: vendor/device ID (0 for legacy ports)
  uint16_t pci_device;
  uint32_t port_mode;  // parallel ports: the ECR mode field (0-7), 0xFFFFFFFF without an ECR
  char detail[56];     // NUL-terminated: what the check found or why the probe is refused
};
static_assert(sizeof(SurveyProbe) == 96);

struct SurveyDisk {
  uint32_t interface;  // DiskInterface
  uint32_t status;     // SurveyStatus: Usable = an ETT trace disk, Refused = not labelled (never written)
  uint64_t sectors;    // logical blocks
  uint32_t logical_block_size;
  uint32_t port;          // IDE channel*2+drive, AHCI port, NVMe namespace ID
  char model[40];         // NUL-terminated
  uint8_t disk_uuid[16];  // the label's UUID when labelled, else zero
};
static_assert(sizeof(SurveyDisk) == 80);

// The SurveyBlock's 72 bytes of scalars, its tables and its crc leave this much zero padding.
inline constexpr uint32_t kSurveyReservedBytes =
    kSurveySectors * kSectorSize - 72 - kSurveyGapBins * 4 - kSurveyMaxTimers * sizeof(SurveyTimer) -
    kSurveyMaxProbes * sizeof(SurveyProbe) - kSurveyMaxDisks * sizeof(SurveyDisk) - 4;

struct SurveyBlock {
  char magic[8];         // kSurveyMagic
  uint32_t version;      // kSurveyVersion
  uint32_t timer_count;  // entries used in timers[], probes[], disks[]
  uint32_t probe_count;
  uint32_t disk_count;
  uint64_t usable_memory_bytes;  // RAM the capture buffer would get
  uint64_t buffer_capacity;      // events that RAM holds
  uint32_t keyboard;             // SurveyStatus of the 8042 keyboard controller
  uint32_t smi_window_ms;        // SMIs counted over this window (SessionHeader::smi_count, kFlagSmiCount)
  uint32_t hwlat_window_ms;      // hwlat run: its length, threshold and the gaps it saw
  uint32_t hwlat_threshold_ns;
  uint64_t hwlat_gaps;
  uint64_t hwlat_max_gap_ticks;
  uint32_t gap_histogram[kSurveyGapBins];  // bin k: gaps of [2^k, 2^(k+1)) ticks above the threshold
  SurveyTimer timers[kSurveyMaxTimers];
  SurveyProbe probes[kSurveyMaxProbes];
  SurveyDisk disks[kSurveyMaxDisks];
  uint8_t reserved[kSurveyReservedBytes];  // zero
  uint32_t crc;                            // CRC32C of every byte before it
};
static_assert(sizeof(SurveyBlock) == kSurveySectors * kSectorSize);
static_assert(offsetof(SurveyBlock, crc) == kSurveySectors * kSectorSize - 4);

constexpr uint64_t survey_session_sectors() {
  return sectors_before_chunks(kSessionFormatVersion) + kSurveySectors;
}

// Lines per probe under a layout (probe k, 1-based, owns lines D((k-1)*bits) upwards); 0 for an unknown
// layout.
constexpr uint32_t layout_bits_per_probe(uint32_t layout) {
  switch (static_cast<Layout>(layout)) {
    case Layout::Double2x4:
      return 4;
    case Layout::Single8x1:
      return 1;
    case Layout::Quad4x2:
      return 2;
    case Layout::Byte1x8:
      return 8;
  }
  return 0;
}

// Human-readable names, used by the kernel's screen and the host's reports alike.
constexpr const char* stop_reason_name(uint32_t reason) {
  switch (static_cast<StopReason>(reason)) {
    case StopReason::None:
      return "none";
    case StopReason::HostRequest:
      return "host-request";
    case StopReason::Deadline:
      return "deadline";
    case StopReason::BufferFull:
      return "buffer-full";
    case StopReason::ZeroCode:
      return "zero-code";
    case StopReason::CodeMatch:
      return "code-match";
    case StopReason::Keyboard:
      return "keyboard";
  }
  return "unknown";
}

constexpr const char* layout_name(uint32_t layout) {
  switch (static_cast<Layout>(layout)) {
    case Layout::Double2x4:
      return "2x4";
    case Layout::Single8x1:
      return "8x1";
    case Layout::Quad4x2:
      return "4x2";
    case Layout::Byte1x8:
      return "1x8";
  }
  return "unknown";
}

constexpr const char* probe_source_name(uint32_t source) {
  switch (static_cast<ProbeSource>(source)) {
    case ProbeSource::Ivshmem:
      return "ivshmem";
    case ProbeSource::Lpt:
      return "lpt";
    case ProbeSource::PciLpt:
      return "pci-lpt";
    case ProbeSource::LptLoopback:
      return "lpt-loopback";
    case ProbeSource::Uart:
      return "uart";
    case ProbeSource::UartLoopback:
      return "uart-loopback";
    case ProbeSource::PciUart:
      return "pci-uart";
  }
  return "unknown";
}

constexpr const char* tsc_method_name(uint32_t method) {
  switch (static_cast<TscMethod>(method)) {
    case TscMethod::Pit:
      return "pit";
    case TscMethod::PmTimer:
      return "pm-timer";
    case TscMethod::Hpet:
      return "hpet";
    case TscMethod::Cpuid:
      return "cpuid";
  }
  return "unknown";
}

constexpr const char* mode_name(uint32_t mode) {
  switch (static_cast<CaptureMode>(mode)) {
    case CaptureMode::Capture:
      return "capture";
    case CaptureMode::Calibrate:
      return "calibrate";
    case CaptureMode::HwLat:
      return "hwlat";
    case CaptureMode::Survey:
      return "survey";
  }
  return "unknown";
}

}  // namespace ett::format
