// vcd.h: a capture as a Value Change Dump (IEEE 1364): one 1-bit wire per data line D0..D7 and one per
// probe (toggled at each of its events, so that a change to the same line values still shows), timescale 1
// ns.
#pragma once

#include <string>

#include "analysis/capture.h"
#include "export/output_file.h"

namespace ett::host {

// Times are ns from the capture start, shifted so that the earliest (a pretrigger event may be negative) is
// 0; the initial lines are dumped at #0. Events with the same TSC (one poll) share a timestamp; a later poll
// that rounds to the same ns or earlier is written 1 ns after the previous one, so times strictly increase. A
// final timestamp line marks the capture's end (at least 1 ns after the last change).
void write_vcd(const Capture& capture, TextOut& out);
std::string export_vcd(const Capture& capture);  // the same text, whole

}  // namespace ett::host
