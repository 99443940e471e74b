// pci_uart_registers.cpp: which PCI functions are serial cards (by vendor:device from the card list, or by
// class 07/00 with a 16550-family interface), and where a card's UART is in its BARs (no hardware: also
// built for the host tests).
#include "drivers/probe/pci_uart.h"
#include "lib/format.h"

namespace ett::drivers {

namespace {

// The layouts as Linux's 8250_pci tables give them (BAR, first UART's offset, spacing; an I/O BAR's
// registers are one port apart, Linux's register shift applies to memory BARs only, 0 for all of these).
constexpr PciUart::Layout kWch{0, 0xC0, 8, 0, 2};
constexpr PciUart::Layout kWch4{0, 0xC0, 8, 0, 4};
constexpr PciUart::Layout kOxford{0, 0x1000, 0x200, 0, 1};
constexpr PciUart::Layout kOneAtBar0{0, 0, 8, 0, 1};
constexpr PciUart::KnownCard kCards[] = {
    {0x1C00, 0x3253, kWch, "WCH CH382 2S"},
    {0x1C00, 0x3250, kWch, "WCH CH382 2S1P"},
    {0x1C00, 0x3470, kWch4, "WCH CH384 4S"},
    {0x1415, 0xC138, {0, 0x1000, 0x200, 0, 1}, "Oxford OXPCIe952 1S"},
    {0x1415, 0xC158, {0, 0x1000, 0x200, 0, 2}, "Oxford OXPCIe952 2S"},
    {0x1415, 0xC208, {0, 0x1000, 0x200, 0, 4}, "Oxford OXPCIe954 4S"},
    {0x1415, 0xC308, {0, 0x1000, 0x200, 0, 8}, "Oxford OXPCIe958 8S"},
    {0x9710, 0x9912, kOneAtBar0, "MosChip MCS9912"},
    {0x9710, 0x9922, kOneAtBar0, "MosChip MCS9922"},
    {0x125B, 0x9100, kOneAtBar0, "ASIX AX99100"},
};
static_assert(kOxford.first == 0x1000);

constexpr uint64_t kIoLimit = 0x10000;
constexpr uint64_t kMemoryLimit = 0x100000000ull;

bool holds(const x86::pci::Bar& bar, uint64_t offset, uint64_t length) {
  if (bar.size == 0 || bar.address == 0) return false;
  if (offset + length > bar.size) return false;
  return bar.address + bar.size <= (bar.is_io ? kIoLimit : kMemoryLimit);
}

char g_message[200];  // registers()' refusal (Error holds a static string)

}  // namespace

const size_t PciUart::kKnownCardCount = sizeof(kCards) / sizeof(kCards[0]);

const PciUart::KnownCard* PciUart::known_cards() {
  return kCards;
}

const PciUart::KnownCard* PciUart::known_card(uint16_t vendor, uint16_t device) {
  for (const KnownCard& card : kCards)
    if (card.vendor == vendor && card.device == device) return &card;
  return nullptr;
}

PciUart::Match PciUart::match(const Identity& id) {
  if (const KnownCard* card = known_card(id.vendor, id.device)) return {Verdict::Take, card};
  if (id.class_code == kClassCommunication && id.subclass == kSubclassSerial &&
      id.prog_if <= kProgIfMax16550Family)
    return {Verdict::Take, nullptr};
  return {Verdict::NotOurs, nullptr};
}

Result<PciUart::Layout> PciUart::generic_layout(const x86::pci::Bar* bars) {
  for (int pass = 0; pass < 2; ++pass) {
    const bool io = pass == 0;
    for (uint8_t index = 0; index < kBarCount; ++index) {
      if (bars[index].is_io == io && holds(bars[index], 0, kUartRegisters))
        return Layout{index, 0, kUartRegisters, 0, 1};
    }
  }
  return fail(
      "probe=pci-uart: the serial card has no usable BAR (an assigned I/O BAR below 64 KiB or memory BAR "
      "below 4 GiB with the UART's 8 registers)");
}

Result<PciUart::Registers> PciUart::port_registers(const Layout& layout, const x86::pci::Bar* bars,
                                                   uint8_t port) {
  const x86::pci::Bar& bar = bars[layout.bar];
  const uint8_t shift = bar.is_io ? 0 : layout.shift;
  const uint64_t offset = layout.first + uint64_t{port} * layout.stride;
  if (port >= layout.ports || !holds(bar, offset, uint64_t{kUartRegisters} << shift)) {
    lib::format(g_message, sizeof(g_message),
                "probe=pci-uart: BAR %u (%s, %llu bytes at 0x%llx) does not hold UART %u at offset 0x%llx",
                layout.bar, bar.is_io ? "I/O" : "memory", static_cast<unsigned long long>(bar.size),
                static_cast<unsigned long long>(bar.address), port, static_cast<unsigned long long>(offset));
    return fail(g_message);
  }
  return Registers{layout.bar, bar.is_io, bar.address + offset, shift, offset};
}

namespace {

Result<PciUart> take(PciUart::Functions& functions, x86::pci::Address a) {
  PciUart chosen{};
  chosen.pci = a;
  chosen.id = functions.identity(a);
  const PciUart::Match m = PciUart::match(chosen.id);
  if (m.verdict != PciUart::Verdict::Take) {
    lib::format(g_message, sizeof(g_message),
                "probe=pci-uart: the function %04x:%04x at PCI %02x:%02x.%x (class %02x/%02x, prog-if %02x) "
                "is not a serial card of the list nor class 07/00 with a 16550-family interface",
                chosen.id.vendor, chosen.id.device, a.bus, a.slot, a.function, chosen.id.class_code,
                chosen.id.subclass, chosen.id.prog_if);
    return fail(g_message);
  }
  chosen.card = m.card;
  x86::pci::Bar bars[PciUart::kBarCount] = {};
  functions.read_bars(a, bars);
  PciUart::Layout layout{};
  if (m.card) {
    layout = m.card->layout;
  } else {
    ETT_TRY_ASSIGN(layout, PciUart::generic_layout(bars));
  }
  ETT_TRY_ASSIGN(chosen.registers, PciUart::port_registers(layout, bars, 0));
  return chosen;
}

}  // namespace

Result<PciUart> PciUart::choose(Functions& functions, const x86::pci::Address* wanted) {
  if (wanted) {
    if (!functions.present(*wanted)) {
      lib::format(g_message, sizeof(g_message), "probe=pci-uart: no PCI function at %02x:%02x.%x",
                  wanted->bus, wanted->slot, wanted->function);
      return fail(g_message);
    }
    return take(functions, *wanted);
  }
  const char* problem = nullptr;  // the last matching card's refusal, when none is usable
  for (uint32_t bus = 0; bus < 256; ++bus) {
    for (uint8_t slot = 0; slot < 32; ++slot) {
      const x86::pci::Address first{static_cast<uint8_t>(bus), slot, 0};
      if (!functions.present(first)) continue;
      const uint8_t count = functions.multifunction(first) ? 8 : 1;
      for (uint8_t function = 0; function < count; ++function) {
        const x86::pci::Address a{static_cast<uint8_t>(bus), slot, function};
        if (!functions.present(a) || match(functions.identity(a)).verdict != Verdict::Take) continue;
        auto taken = take(functions, a);
        if (taken) return taken;
        problem = taken.error().message;
      }
    }
  }
  if (problem) return fail(problem);
  return fail(
      "probe=pci-uart: no PCI serial card found (class 0x07/0x00 with a 16550-family interface, or a card of "
      "the list: WCH CH382/CH384, Oxford OXPCIe95x, MosChip MCS99xx, ASIX AX99100)");
}

}  // namespace ett::drivers
