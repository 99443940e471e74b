// serial_port.cpp: 16550 setup and polled, bounded transmission.
#include "drivers/console/serial_port.h"

namespace ett::drivers {

bool SerialPort::init() {
  // A scratch register that keeps what is written is the cheapest sign that a UART is there.
  m_io.out8(kScratch, 0x5A);
  if (m_io.in8(kScratch) != 0x5A) return m_present = false;
  m_io.out8(kInterruptEnable, 0);
  m_io.out8(kLineControl, kDivisorLatch);
  m_io.out8(kData, kDivisor115200 & 0xFF);
  m_io.out8(kInterruptEnable, kDivisor115200 >> 8);
  m_io.out8(kLineControl, kWordLength8);  // 8 data bits, no parity, 1 stop bit, DLAB off
  m_io.out8(kFifoControl, kFifoEnable | kClearReceive | kClearTransmit | kTrigger14);
  m_io.out8(kModemControl, kDtr | kRts | kOut2);
  return m_present = true;
}

void SerialPort::write(const char* text, size_t length) {
  if (!m_present) return;
  for (size_t i = 0; i < length; ++i) {
    uint32_t polls = 0;
    while (!(m_io.in8(kLineStatus) & kTransmitHoldingEmpty)) {
      if (++polls == kMaxPolls) {  // stuck: stop logging to it rather than hang the kernel
        m_present = false;
        return;
      }
    }
    m_io.out8(kData, static_cast<uint8_t>(text[i]));
  }
}

}  // namespace ett::drivers
