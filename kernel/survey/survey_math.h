// survey_math.h: the survey's arithmetic, kept apart from the hardware so that the host tests run it: the
// gap histogram's bins, the ppm between two TSC rates, read-latency statistics and the block's CRC.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/crc32c.h"
#include "ett/trace_format.h"

namespace ett::survey {

// The histogram bin of a gap of `ticks`: k with 2^k <= ticks < 2^(k+1), the last bin holding every longer
// gap (and bin 0 a gap of 0 or 1 tick).
constexpr uint32_t gap_bin(uint64_t ticks) {
  uint32_t bin = 0;
  while (ticks > 1) {
    ticks >>= 1;
    ++bin;
  }
  return bin < format::kSurveyGapBins ? bin : format::kSurveyGapBins - 1;
}

// (hz - chosen_hz) / chosen_hz in parts per million, rounded toward zero and saturated to int32; 0 when
// either rate is unknown (0).
constexpr int32_t ppm_vs(uint64_t hz, uint64_t chosen_hz) {
  if (hz == 0 || chosen_hz == 0) return 0;
  const bool above = hz >= chosen_hz;
  const uint64_t difference = above ? hz - chosen_hz : chosen_hz - hz;
  // difference * 1e6 overflows 64 bits only above 1.8e13 Hz of difference: split it.
  const uint64_t ppm = difference / chosen_hz * 1'000'000 + difference % chosen_hz * 1'000'000 / chosen_hz;
  const uint64_t limit = above ? 0x7FFFFFFFull : 0x80000000ull;
  const uint64_t clamped = ppm > limit ? limit : ppm;
  return above ? static_cast<int32_t>(clamped) : static_cast<int32_t>(-static_cast<int64_t>(clamped));
}

struct ReadStats {
  uint32_t min;
  uint32_t median;  // the lower middle of an even count
  uint32_t max;
};

// Minimum, median and maximum of `samples` (sorted in place; count may be 0: all zero).
inline ReadStats read_stats(uint32_t* samples, uint32_t count) {
  if (count == 0) return {0, 0, 0};
  // Shell sort: no library in the kernel, and a few thousand samples.
  for (uint32_t gap = count / 2; gap > 0; gap /= 2)
    for (uint32_t i = gap; i < count; ++i)
      for (uint32_t j = i; j >= gap && samples[j - gap] > samples[j]; j -= gap) {
        const uint32_t t = samples[j];
        samples[j] = samples[j - gap];
        samples[j - gap] = t;
      }
  return {samples[0], samples[(count - 1) / 2], samples[count - 1]};
}

// Ticks saturated to 32 bits, as the block stores them.
constexpr uint32_t saturate32(uint64_t ticks) {
  return ticks > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(ticks);
}

// Magic, version and CRC: the last step before the block is written.
inline void seal(format::SurveyBlock& block) {
  __builtin_memcpy(block.magic, format::kSurveyMagic, sizeof(block.magic));
  block.version = format::kSurveyVersion;
  block.crc = crc32c(&block, offsetof(format::SurveyBlock, crc));
}

inline bool sealed(const format::SurveyBlock& block) {
  return __builtin_memcmp(block.magic, format::kSurveyMagic, sizeof(block.magic)) == 0 &&
         block.crc == crc32c(&block, offsetof(format::SurveyBlock, crc));
}

// A NUL-terminated copy that always fits (`size` > 0).
inline void copy_detail(char* out, size_t size, const char* text) {
  size_t i = 0;
  for (; text && text[i] != '\0' && i + 1 < size; ++i) out[i] = text[i];
  out[i] = '\0';
}

}  // namespace ett::survey
