// pci_uart_test.cpp: probe=pci-uart's card choice (drivers/probe/pci_uart_registers.cpp) against a model of
// PCI configuration space (a card of the list among other devices, an unknown vendor's class 07/00 function
// taken as generic, no card, a known card without its BAR, an address given), where each card's port 0 sits
// in its BAR, and the UART probe opened there: I/O UARTs (16550 without FIFO, 16550A) and a memory-mapped
// Oxford 16C950 at BAR0 + 0x1000 through MemoryUartPorts, a floating memory BAR refused; the cmdline form.
#include "drivers/probe/pci_uart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/cmdline.h"
#include "uart_model.h"

namespace ett::drivers {
namespace {

using x86::pci::Address;
using x86::pci::Bar;

Bar io_bar(uint64_t address, uint64_t size) {
  return Bar{address, size, true, false, false};
}
Bar memory_bar(uint64_t address, uint64_t size) {
  return Bar{address, size, false, false, false};
}

struct FunctionModel {
  Address address;
  PciUart::Identity id;
  std::vector<Bar> bars;
};

// Configuration space: the listed functions, the rest absent (vendor 0xffff).
struct ConfigModel final : PciUart::Functions {
  std::vector<FunctionModel> functions;
  const FunctionModel* find(Address a) const {
    for (const FunctionModel& f : functions)
      if (f.address.bus == a.bus && f.address.slot == a.slot && f.address.function == a.function) return &f;
    return nullptr;
  }
  bool present(Address a) override { return find(a) != nullptr; }
  bool multifunction(Address a) override {
    for (const FunctionModel& f : functions)
      if (f.address.bus == a.bus && f.address.slot == a.slot && f.address.function != 0) return true;
    return false;
  }
  PciUart::Identity identity(Address a) override { return find(a)->id; }
  void read_bars(Address a, Bar* bars) override {
    const FunctionModel* f = find(a);
    for (size_t i = 0; i < f->bars.size() && i < PciUart::kBarCount; ++i) bars[i] = f->bars[i];
  }
};

const FunctionModel kHostBridge{{0, 0, 0}, {0x8086, 0x29C0, 0x06, 0x00, 0x00}, {}};
const FunctionModel kVga{{0, 1, 0}, {0x1234, 0x1111, 0x03, 0x00, 0x00}, {memory_bar(0xFD000000, 0x1000000)}};
// A PCIe modem (class 07/03) and a multiport serial controller with an unknown interface: not UARTs.
const FunctionModel kModem{{0, 2, 0}, {0x1AF4, 0x1234, 0x07, 0x03, 0x00}, {io_bar(0xC100, 8)}};
const FunctionModel kSerialOtherIf{{0, 2, 1}, {0x1AF4, 0x1235, 0x07, 0x00, 0x07}, {io_bar(0xC200, 8)}};

TEST(PciUart, TakesTheKnownCardWithItsLayout) {
  ConfigModel pci;
  pci.functions = {kHostBridge,
                   kVga,
                   kModem,
                   kSerialOtherIf,
                   {{2, 0, 0}, {0x1C00, 0x3470, 0x07, 0x00, 0x02}, {io_bar(0xE000, 0x100)}}};
  auto card = PciUart::choose(pci, nullptr);
  ASSERT_TRUE(card) << card.error().message;
  EXPECT_EQ(card->pci.bus, 2);
  ASSERT_NE(card->card, nullptr);
  EXPECT_STREQ(card->card->name, "WCH CH384 4S");
  EXPECT_TRUE(card->registers.is_io);
  EXPECT_EQ(card->registers.base, 0xE0C0u);  // BAR0 + 0xc0
  EXPECT_EQ(card->registers.offset, 0xC0u);
}

TEST(PciUart, UnknownVendorOfClass0700IsTakenAsGeneric) {
  ConfigModel pci;
  // QEMU's pci-serial: 1b36:0002, class 07/00 prog-if 02 (16550), one I/O BAR.
  pci.functions = {kHostBridge, kModem, {{0, 3, 0}, {0x1B36, 0x0002, 0x07, 0x00, 0x02}, {io_bar(0xC000, 8)}}};
  auto card = PciUart::choose(pci, nullptr);
  ASSERT_TRUE(card) << card.error().message;
  EXPECT_EQ(card->card, nullptr);
  EXPECT_EQ(card->pci.slot, 3);
  EXPECT_EQ(card->registers.base, 0xC000u);
  EXPECT_TRUE(card->registers.is_io);
  // Generic with only a memory BAR (after an unassigned I/O BAR): the memory BAR, at its start.
  pci.functions = {
      {{0, 4, 0}, {0xABCD, 0x0001, 0x07, 0x00, 0x06}, {io_bar(0, 8), memory_bar(0xFEB00000, 0x1000)}}};
  auto memory = PciUart::choose(pci, nullptr);
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->registers.bar, 1);
  EXPECT_FALSE(memory->registers.is_io);
  EXPECT_EQ(memory->registers.base, 0xFEB00000u);
}

TEST(PciUart, NoCardIsAClearError) {
  ConfigModel pci;
  pci.functions = {kHostBridge, kVga, kModem, kSerialOtherIf};
  auto card = PciUart::choose(pci, nullptr);
  ASSERT_FALSE(card);
  EXPECT_NE(std::string(card.error().message).find("no PCI serial card found"), std::string::npos)
      << card.error().message;
}

TEST(PciUart, KnownCardWithoutItsBarIsNamed) {
  ConfigModel pci;
  // An OXPCIe954 whose BAR0 is too small to reach the UARTs at 0x1000.
  pci.functions = {{{3, 0, 0}, {0x1415, 0xC208, 0x07, 0x00, 0x06}, {memory_bar(0xFE000000, 0x800)}}};
  auto card = PciUart::choose(pci, nullptr);
  ASSERT_FALSE(card);
  const std::string message = card.error().message;
  EXPECT_NE(message.find("BAR 0 (memory, 2048 bytes at 0xfe000000) does not hold UART 0 at offset 0x1000"),
            std::string::npos)
      << message;
}

TEST(PciUart, AnAddressGivenPicksThatFunctionOrSaysWhyNot) {
  ConfigModel pci;
  pci.functions = {kHostBridge,
                   kModem,
                   {{0, 3, 0}, {0x1B36, 0x0002, 0x07, 0x00, 0x02}, {io_bar(0xC000, 8)}},
                   {{0, 4, 0}, {0x1B36, 0x0002, 0x07, 0x00, 0x02}, {io_bar(0xC008, 8)}}};
  const Address second{0, 4, 0};
  auto card = PciUart::choose(pci, &second);
  ASSERT_TRUE(card) << card.error().message;
  EXPECT_EQ(card->registers.base, 0xC008u);
  const Address modem{0, 2, 0};
  auto not_serial = PciUart::choose(pci, &modem);
  ASSERT_FALSE(not_serial);
  EXPECT_NE(std::string(not_serial.error().message).find("1af4:1234 at PCI 00:02.0 (class 07/03"),
            std::string::npos)
      << not_serial.error().message;
  const Address nothing{5, 0, 0};
  auto absent = PciUart::choose(pci, &nothing);
  ASSERT_FALSE(absent);
  EXPECT_STREQ(absent.error().message, "probe=pci-uart: no PCI function at 05:00.0");
}

TEST(PciUart, KnownCardLayoutsFollowTheirBars) {
  const Bar io[PciUart::kBarCount] = {io_bar(0xD000, 0x100)};
  const Bar memory[PciUart::kBarCount] = {memory_bar(0xFE000000, 0x4000)};
  const PciUart::KnownCard* wch = PciUart::known_card(0x1C00, 0x3253);
  ASSERT_NE(wch, nullptr);
  auto port1 = PciUart::port_registers(wch->layout, io, 1);
  ASSERT_TRUE(port1);
  EXPECT_EQ(port1->base, 0xD0C8u);                            // the second UART: 8 ports further
  EXPECT_FALSE(PciUart::port_registers(wch->layout, io, 2));  // a 2-port card has no UART 2
  const PciUart::KnownCard* oxford = PciUart::known_card(0x1415, 0xC208);
  ASSERT_NE(oxford, nullptr);
  auto port3 = PciUart::port_registers(oxford->layout, memory, 3);
  ASSERT_TRUE(port3);
  EXPECT_FALSE(port3->is_io);
  EXPECT_EQ(port3->base, 0xFE001600u);
  // Every card of the list is matched by its IDs whatever its class.
  for (size_t i = 0; i < PciUart::kKnownCardCount; ++i) {
    const PciUart::KnownCard& c = PciUart::known_cards()[i];
    EXPECT_EQ(PciUart::match({c.vendor, c.device, 0xFF, 0xFF, 0xFF}).card, &c) << c.name;
  }
}

// A BAR of memory with a UART model at an offset; the rest of the BAR reads 0xff.
struct MemoryModel final : MemoryBus {
  UartModel* uart;  // nullptr: nothing decodes the BAR (floating)
  uint64_t uart_address;
  uint8_t shift;
  std::vector<uint64_t> addresses;
  uint8_t read8(uint64_t address) override {
    addresses.push_back(address);
    const int64_t reg = register_at(address);
    return reg < 0 ? 0xFF : uart->in8(static_cast<uint16_t>(reg));
  }
  void write8(uint64_t address, uint8_t value) override {
    addresses.push_back(address);
    const int64_t reg = register_at(address);
    if (reg >= 0) uart->out8(static_cast<uint16_t>(reg), value);
  }
  int64_t register_at(uint64_t address) const {
    if (!uart || address < uart_address) return -1;
    const uint64_t delta = address - uart_address;
    if (delta & ((1u << shift) - 1) || (delta >> shift) >= 8) return -1;
    return static_cast<int64_t>(delta >> shift);
  }
};

TEST(PciUart, OxfordUartMemoryMappedAtBarOffsetOpensAs16C950) {
  const Bar bars[PciUart::kBarCount] = {memory_bar(0xFE000000, 0x4000)};
  auto r = PciUart::port_registers(PciUart::known_card(0x1415, 0xC158)->layout, bars, 0);
  ASSERT_TRUE(r);
  UartModel uart(UartModel::Kind::U16C950, 0);
  MemoryModel memory{};
  memory.uart = &uart;
  memory.uart_address = 0xFE001000;
  MemoryUartPorts ports(memory, r->base, r->shift);
  auto opened = UartProbe::open(ports, 0, kCom1, UartProbe::Mode::Loopback, "memory 0xfe001000");
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->kind(), UartProbe::Kind::Uart16C950);
  EXPECT_EQ(uart.mcr, UartProbe::kLoop);
  for (const uint64_t a : memory.addresses) {
    EXPECT_GE(a, 0xFE001000u);
    EXPECT_LT(a, 0xFE001008u);
  }
  EXPECT_EQ(ports.address(UartProbe::kMsr), 0xFE001006u);
  // The loopback drives the inputs the capture reads at the MSR's address.
  ports.out8(UartProbe::kMcr, UartProbe::kLoop | UartProbe::kRts);
  EXPECT_EQ(UartMsr::lines(memory.read8(0xFE001006)), UartMsr::kLineCts);
  UartProbe::restore(ports, opened->saved());
  EXPECT_EQ(uart.mcr, 0x0B);
}

TEST(PciUart, RegisterShiftSpreadsTheRegisters) {
  UartModel uart(UartModel::Kind::U16550A, 0);
  MemoryModel memory{};
  memory.uart = &uart;
  memory.uart_address = 0xF0000000;
  memory.shift = 2;
  MemoryUartPorts ports(memory, 0xF0000000, 2);
  auto opened = UartProbe::open(ports, 0, kCom1, UartProbe::Mode::Input, "memory 0xf0000000");
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->kind(), UartProbe::Kind::Uart16550A);
  EXPECT_EQ(ports.address(UartProbe::kMsr), 0xF0000018u);
}

TEST(PciUart, FloatingMemoryBarIsRefusedByItsAddress) {
  MemoryModel memory{};  // no UART: every byte reads 0xff
  MemoryUartPorts ports(memory, 0xFE001000, 0);
  auto opened = UartProbe::open(ports, 0, kCom1, UartProbe::Mode::Input, "memory 0xfe001000");
  ASSERT_FALSE(opened);
  EXPECT_STREQ(opened.error().message,
               "no UART answers at memory 0xfe001000 (its interrupt enable register read 0x0f/0x0f after "
               "0x00/0x0f were written)");
}

TEST(PciUart, IoCardUartsOf16550FamilyOpenAtTheirBarOffset) {
  const Bar bars[PciUart::kBarCount] = {io_bar(0xE000, 0x100)};
  auto r = PciUart::port_registers(PciUart::known_card(0x1C00, 0x3253)->layout, bars, 0);
  ASSERT_TRUE(r);
  for (const auto kind : {UartModel::Kind::U16450, UartModel::Kind::U16550A}) {
    UartModel uart(kind, static_cast<uint16_t>(r->base));
    auto opened = UartProbe::open(uart, static_cast<uint16_t>(r->base), kCom1, UartProbe::Mode::Input);
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->kind(),
              kind == UartModel::Kind::U16450 ? UartProbe::Kind::Uart16450 : UartProbe::Kind::Uart16550A);
    EXPECT_EQ(opened->msr_port(), 0xE0C6);
  }
}

TEST(PciUart, CmdlineTakesAnOptionalPciAddress) {
  auto plain = config::parse_cmdline("probe=pci-uart");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().probe, format::ProbeSource::PciUart);
  EXPECT_FALSE(plain.value().probe_pci_given);
  auto at = config::parse_cmdline("probe=pci-uart:1a:1f.7");
  ASSERT_TRUE(at.ok()) << at.error().message;
  EXPECT_TRUE(at.value().probe_pci_given);
  EXPECT_EQ(at.value().probe_pci_bus, 0x1A);
  EXPECT_EQ(at.value().probe_pci_slot, 0x1F);
  EXPECT_EQ(at.value().probe_pci_function, 7);
  for (const char* bad : {"probe=pci-uart:", "probe=pci-uart:01:20.0", "probe=pci-uart:01:00.8",
                          "probe=pci-uart:100:00.0", "probe=pci-uart:0100.0"}) {
    auto refused = config::parse_cmdline(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(std::string(refused.error().message).find("is not a PCI address (e.g. pci-uart:01:00.0"),
              std::string::npos)
        << refused.error().message;
  }
}

}  // namespace
}  // namespace ett::drivers
