// pci_lpt.h: a PCI/PCIe parallel-port card: which card, its SPP registers and its ECR.
//
// Two ways to match a card. A card of class 0x07/0x01 with an interface that can do input: SPP registers in
// the first I/O BAR, ECR in the second (as Linux's parport_pc takes it). A known card, by vendor:device, with
// the BAR layout Linux's parport_pc and parport_serial tables give it: the cheap WCH chips report themselves
// as serial controllers (class 0x07/0x00, the CH382L even with prog-if 05 "16850") or put the port in BAR1
// or BAR2, so the class rule would miss them or take the wrong BAR.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/pci.h"
#include "ett/result.h"

namespace ett::drivers {

struct PciLpt {
  static constexpr uint8_t kClassCommunication = 0x07;
  static constexpr uint8_t kSubclassSerial = 0x00;
  static constexpr uint8_t kSubclassParallel = 0x01;
  static constexpr uint8_t kSubclassOther = 0x80;
  static constexpr size_t kBarCount = 6;
  // The ECP registers (FIFO, config B, ECR) at the start of the second I/O BAR: the ECR is the third.
  static constexpr uint16_t kEcrInBar = 2;
  // Programming interfaces of class 07/01 (PCI code and ID assignment specification).
  enum ProgIf : uint8_t {
    kSpp = 0x00,             // output only
    kBidirectional = 0x01,   // PS/2 style
    kEcp = 0x02,             // ECP 1.x
    kIeee1284 = 0x03,        // IEEE 1284 controller
    kIeee1284Target = 0xFE,  // the printer's side of the cable
  };

  // The registers chosen from a card's BARs.
  struct Registers {
    uint8_t spp_bar;
    uint16_t spp_base;  // data, status, control
    uint8_t ecr_bar;    // valid when ecr_port != 0
    uint16_t ecr_port;  // 0: the card has no second I/O BAR
  };

  // A card matched by vendor:device, whatever its class.
  static constexpr uint8_t kNoEcrBar = 0xFF;
  struct KnownCard {
    uint16_t vendor;
    uint16_t device;
    uint8_t spp_bar;  // data, status, control at its start
    uint8_t ecr_bar;  // the ECP block (ECR at + kEcrInBar), kNoEcrBar: none
    const char* name;
  };
  // What the scan reads of a PCI function to decide.
  struct Identity {
    uint16_t vendor;
    uint16_t device;
    uint8_t class_code;
    uint8_t subclass;
    uint8_t prog_if;
  };
  enum class Verdict : uint8_t {
    Take,              // a known card, or class 07/01 with an interface that can do input
    SkipInterface,     // class 07/01, but output only or the printer's side
    SkipUnknownCombo,  // class 07/00 or 07/80 (serial, other) and not in the card list
    NotOurs,
  };
  struct Match {
    Verdict verdict;
    const KnownCard* card;  // Take by vendor:device; nullptr by class
  };

  x86::pci::Address pci;
  uint16_t vendor;
  uint16_t device;
  uint8_t class_code;
  uint8_t subclass;
  uint8_t prog_if;
  const KnownCard* card;  // nullptr: matched by class
  Registers registers;

  // Scans PCI for the first card match() takes, enables its I/O decoding and chooses its registers. Cards
  // skipped on the way (output-only, the target side, serial or combo cards not in the list, a known card
  // without its BAR) are named on the console.
  static Result<PciLpt> find();

  // The known cards (kKnownCardCount of them); nullptr when vendor:device is not one.
  static const KnownCard* known_card(uint16_t vendor, uint16_t device);
  static const KnownCard* known_cards();
  static const size_t kKnownCardCount;
  static Match match(const Identity& id);

  // Whether class/subclass/programming interface describe a host-side parallel port that can read its lines.
  static bool can_do_input(uint8_t class_code, uint8_t subclass, uint8_t prog_if);
  static const char* interface_name(uint8_t prog_if);
  // The SPP block is the first I/O BAR below 64 KiB with room for data/status/control; the ECR block is the
  // next I/O BAR after it. `bars` holds kBarCount entries as read_bar() returned them (size 0: unimplemented;
  // the second half of a 64-bit BAR has size 0 too).
  static Result<Registers> choose_registers(const x86::pci::Bar* bars);
  // A known card's registers: its SPP BAR (and ECR BAR) must be assigned I/O BARs below 64 KiB.
  static Result<Registers> card_registers(const KnownCard& card, const x86::pci::Bar* bars);
};

}  // namespace ett::drivers
