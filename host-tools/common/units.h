// units.h: parsing sizes and frequencies given on the command line.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace ett::host {

// "64M", "1G", "37376", "512K", "2GiB": bytes with an optional binary K/M/G/T suffix.
Expected<uint64_t> parse_byte_size(std::string_view text);

// "2400000000", "2.4e9", "2.4G", "3000M", "2.4GHz": a frequency in Hz with an optional decimal k/M/G suffix.
Expected<uint64_t> parse_hz(std::string_view text);

}  // namespace ett::host
