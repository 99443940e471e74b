// io_ports.h: port I/O as an interface, for drivers whose host tests run them against register models.
//
// The kernel passes x86::CpuIoPorts (arch/x86/io.h: real in/out); a host test passes a model of the device.
// Only setup code goes through it (one virtual call per register access): the capture loop reads its port
// with an inline `in`.
#pragma once

#include <stdint.h>

namespace ett::lib {

class IoPorts {
 public:
  virtual uint8_t in8(uint16_t port) = 0;
  virtual void out8(uint16_t port, uint8_t value) = 0;

 protected:
  ~IoPorts() = default;
};

// A device's block of consecutive ports on an IoPorts, addressed by the device's own register enum.
class PortWindow {
 public:
  PortWindow(IoPorts& ports, uint16_t base) : m_ports(&ports), m_base(base) {}

  template <typename Reg>
  uint8_t in8(Reg reg) const {
    return m_ports->in8(port(reg));
  }
  template <typename Reg>
  void out8(Reg reg, uint8_t value) const {
    m_ports->out8(port(reg), value);
  }
  uint16_t base() const { return m_base; }
  template <typename Reg>
  uint16_t port(Reg reg) const {
    return static_cast<uint16_t>(m_base + static_cast<uint16_t>(reg));
  }

 private:
  IoPorts* m_ports;
  uint16_t m_base;
};

}  // namespace ett::lib
