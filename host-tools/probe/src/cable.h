// cable.h: one backend of the probe cable (QEMU shared memory, ppdev): sets one probe's lines at a time.
#pragma once

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "probe_url.h"

namespace ett::probe {

class Cable {
 public:
  virtual ~Cable() = default;
  // Replaces `probe`'s lines with `code` under `layout`, keeping every other line as it is at that instant.
  // Returns the eight lines after the write; the write is done when this returns.
  virtual host::Expected<uint8_t> put(const host::ProbeLayout& layout, int probe, uint8_t code) = 0;
  // The lines as last written or seen.
  virtual uint8_t lines() const = 0;
  // Gives the device back; the destructor does it too, without reporting.
  virtual host::Status close() = 0;
};

host::Expected<std::unique_ptr<Cable>> open_shm_cable(const ProbeUrl& url);
host::Expected<std::unique_ptr<Cable>> open_ppdev_cable(const ProbeUrl& url);

}  // namespace ett::probe
