// serial_port.h: a 16550 UART as a polled transmitter (COM1 at 115200 8N1): the kernel's log channel.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/io.h"

namespace ett::drivers {

class SerialPort {
 public:
  static constexpr uint16_t kCom1 = 0x3F8;

  constexpr explicit SerialPort(uint16_t base) : m_io(base) {}

  // Programs 115200 8N1 with FIFOs on. Returns false if no UART answers at the base.
  bool init();
  void write(const char* text, size_t length);

 private:
  enum Reg : uint8_t {
    kData = 0,             // THR on write; divisor low byte with DLAB
    kInterruptEnable = 1,  // divisor high byte with DLAB
    kFifoControl = 2,
    kLineControl = 3,
    kModemControl = 4,
    kLineStatus = 5,
    kScratch = 7,
  };
  enum LineControlBit : uint8_t {
    kWordLength8 = 0b11,
    kDivisorLatch = 1u << 7,
  };
  enum FifoControlBit : uint8_t {
    kFifoEnable = 1u << 0,
    kClearReceive = 1u << 1,
    kClearTransmit = 1u << 2,
    kTrigger14 = 0b11 << 6,
  };
  enum ModemControlBit : uint8_t {
    kDtr = 1u << 0,
    kRts = 1u << 1,
    kOut2 = 1u << 3,
  };
  enum LineStatusBit : uint8_t {
    kTransmitHoldingEmpty = 1u << 5,
  };
  static constexpr uint16_t kDivisor115200 = 1;  // 115200 = 1.8432 MHz / 16 / 1
  // At 115200 baud a byte leaves in ~87 us; give up on a stuck UART after this many status reads.
  static constexpr uint32_t kMaxPolls = 100'000;

  x86::IoWindow m_io;
  bool m_present = false;
};

}  // namespace ett::drivers
