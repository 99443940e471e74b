// font_8x16.h: the framebuffer console's built-in bitmap font (printable ASCII in 8x16 cells), drawn here as
// 5x8 dot art and doubled in height. Header-only and hardware-free: the host tests decode screenshots with
// it.
#pragma once

#include <stdint.h>

namespace ett::font {

inline constexpr uint32_t kWidth = 8;
inline constexpr uint32_t kHeight = 16;
inline constexpr char kFirst = ' ';
inline constexpr char kLast = '~';
inline constexpr uint32_t kGlyphCount = kLast - kFirst + 1;
// Characters outside kFirst..kLast (box drawing, control bytes) are drawn as this one.
inline constexpr char kReplacement = '?';

// One glyph: row r's bit 7 is the leftmost pixel.
struct Glyph {
  uint8_t rows[kHeight];
};

namespace detail {

inline constexpr uint32_t kArtColumns = 5;
inline constexpr uint32_t kArtRows = 8;  // 7 above the baseline, 1 descender
// Dot art: 'X' is a pixel, rows top to bottom, 5 characters each.
// clang-format off
inline constexpr const char* kArt[kGlyphCount] = {
  /*   */ "....." "....." "....." "....." "....." "....." "....." ".....",
  /* ! */ "..X.." "..X.." "..X.." "..X.." "..X.." "....." "..X.." ".....",
  /* " */ ".X.X." ".X.X." ".X.X." "....." "....." "....." "....." ".....",
  /* # */ ".X.X." ".X.X." "XXXXX" ".X.X." "XXXXX" ".X.X." ".X.X." ".....",
  /* $ */ "..X.." ".XXXX" "X.X.." ".XXX." "..X.X" "XXXX." "..X.." ".....",
  /* % */ "XX..." "XX..X" "...X." "..X.." ".X..." "X..XX" "...XX" ".....",
  /* & */ ".XX.." "X..X." "X.X.." ".X..." "X.X.X" "X..X." ".XX.X" ".....",
  /* ' */ "..X.." "..X.." ".X..." "....." "....." "....." "....." ".....",
  /* ( */ "...X." "..X.." ".X..." ".X..." ".X..." "..X.." "...X." ".....",
  /* ) */ ".X..." "..X.." "...X." "...X." "...X." "..X.." ".X..." ".....",
  /* * */ "....." "..X.." "X.X.X" ".XXX." "X.X.X" "..X.." "....." ".....",
  /* + */ "....." "..X.." "..X.." "XXXXX" "..X.." "..X.." "....." ".....",
  /* , */ "....." "....." "....." "....." "....." "..X.." "..X.." ".X...",
  /* - */ "....." "....." "....." "XXXXX" "....." "....." "....." ".....",
  /* . */ "....." "....." "....." "....." "....." ".XX.." ".XX.." ".....",
  /* / */ "....." "....X" "...X." "..X.." ".X..." "X...." "....." ".....",
  /* 0 */ ".XXX." "X...X" "X..XX" "X.X.X" "XX..X" "X...X" ".XXX." ".....",
  /* 1 */ "..X.." ".XX.." "..X.." "..X.." "..X.." "..X.." ".XXX." ".....",
  /* 2 */ ".XXX." "X...X" "....X" "...X." "..X.." ".X..." "XXXXX" ".....",
  /* 3 */ "XXXXX" "...X." "..X.." "...X." "....X" "X...X" ".XXX." ".....",
  /* 4 */ "...X." "..XX." ".X.X." "X..X." "XXXXX" "...X." "...X." ".....",
  /* 5 */ "XXXXX" "X...." "XXXX." "....X" "....X" "X...X" ".XXX." ".....",
  /* 6 */ "..XX." ".X..." "X...." "XXXX." "X...X" "X...X" ".XXX." ".....",
  /* 7 */ "XXXXX" "....X" "...X." "..X.." ".X..." ".X..." ".X..." ".....",
  /* 8 */ ".XXX." "X...X" "X...X" ".XXX." "X...X" "X...X" ".XXX." ".....",
  /* 9 */ ".XXX." "X...X" "X...X" ".XXXX" "....X" "...X." ".XX.." ".....",
  /* : */ "....." ".XX.." ".XX.." "....." ".XX.." ".XX.." "....." ".....",
  /* ; */ "....." ".XX.." ".XX.." "....." ".XX.." "..X.." ".X..." ".....",
  /* < */ "...X." "..X.." ".X..." "X...." ".X..." "..X.." "...X." ".....",
  /* = */ "....." "....." "XXXXX" "....." "XXXXX" "....." "....." ".....",
  /* > */ ".X..." "..X.." "...X." "....X" "...X." "..X.." ".X..." ".....",
  /* ? */ ".XXX." "X...X" "....X" "...X." "..X.." "....." "..X.." ".....",
  /* @ */ ".XXX." "X...X" "....X" ".XX.X" "X.X.X" "X.X.X" ".XXX." ".....",
  /* A */ ".XXX." "X...X" "X...X" "XXXXX" "X...X" "X...X" "X...X" ".....",
  /* B */ "XXXX." "X...X" "X...X" "XXXX." "X...X" "X...X" "XXXX." ".....",
  /* C */ ".XXX." "X...X" "X...." "X...." "X...." "X...X" ".XXX." ".....",
  /* D */ "XXX.." "X..X." "X...X" "X...X" "X...X" "X..X." "XXX.." ".....",
  /* E */ "XXXXX" "X...." "X...." "XXXX." "X...." "X...." "XXXXX" ".....",
  /* F */ "XXXXX" "X...." "X...." "XXXX." "X...." "X...." "X...." ".....",
  /* G */ ".XXX." "X...X" "X...." "X.XXX" "X...X" "X...X" ".XXXX" ".....",
  /* H */ "X...X" "X...X" "X...X" "XXXXX" "X...X" "X...X" "X...X" ".....",
  /* I */ ".XXX." "..X.." "..X.." "..X.." "..X.." "..X.." ".XXX." ".....",
  /* J */ "..XXX" "...X." "...X." "...X." "...X." "X..X." ".XX.." ".....",
  /* K */ "X...X" "X..X." "X.X.." "XX..." "X.X.." "X..X." "X...X" ".....",
  /* L */ "X...." "X...." "X...." "X...." "X...." "X...." "XXXXX" ".....",
  /* M */ "X...X" "XX.XX" "X.X.X" "X.X.X" "X...X" "X...X" "X...X" ".....",
  /* N */ "X...X" "X...X" "XX..X" "X.X.X" "X..XX" "X...X" "X...X" ".....",
  /* O */ ".XXX." "X...X" "X...X" "X...X" "X...X" "X...X" ".XXX." ".....",
  /* P */ "XXXX." "X...X" "X...X" "XXXX." "X...." "X...." "X...." ".....",
  /* Q */ ".XXX." "X...X" "X...X" "X...X" "X.X.X" "X..X." ".XX.X" ".....",
  /* R */ "XXXX." "X...X" "X...X" "XXXX." "X.X.." "X..X." "X...X" ".....",
  /* S */ ".XXXX" "X...." "X...." ".XXX." "....X" "....X" "XXXX." ".....",
  /* T */ "XXXXX" "..X.." "..X.." "..X.." "..X.." "..X.." "..X.." ".....",
  /* U */ "X...X" "X...X" "X...X" "X...X" "X...X" "X...X" ".XXX." ".....",
  /* V */ "X...X" "X...X" "X...X" "X...X" "X...X" ".X.X." "..X.." ".....",
  /* W */ "X...X" "X...X" "X...X" "X.X.X" "X.X.X" "X.X.X" ".X.X." ".....",
  /* X */ "X...X" "X...X" ".X.X." "..X.." ".X.X." "X...X" "X...X" ".....",
  /* Y */ "X...X" "X...X" ".X.X." "..X.." "..X.." "..X.." "..X.." ".....",
  /* Z */ "XXXXX" "....X" "...X." "..X.." ".X..." "X...." "XXXXX" ".....",
  /* [ */ ".XXX." ".X..." ".X..." ".X..." ".X..." ".X..." ".XXX." ".....",
  /* \ */ "....." "X...." ".X..." "..X.." "...X." "....X" "....." ".....",
  /* ] */ ".XXX." "...X." "...X." "...X." "...X." "...X." ".XXX." ".....",
  /* ^ */ "..X.." ".X.X." "X...X" "....." "....." "....." "....." ".....",
  /* _ */ "....." "....." "....." "....." "....." "....." "....." "XXXXX",
  /* ` */ ".X..." "..X.." "...X." "....." "....." "....." "....." ".....",
  /* a */ "....." "....." ".XXX." "....X" ".XXXX" "X...X" ".XXXX" ".....",
  /* b */ "X...." "X...." "X.XX." "XX..X" "X...X" "X...X" "XXXX." ".....",
  /* c */ "....." "....." ".XXX." "X...." "X...." "X...X" ".XXX." ".....",
  /* d */ "....X" "....X" ".XX.X" "X..XX" "X...X" "X...X" ".XXXX" ".....",
  /* e */ "....." "....." ".XXX." "X...X" "XXXXX" "X...." ".XXX." ".....",
  /* f */ "..XX." ".X..X" ".X..." "XXX.." ".X..." ".X..." ".X..." ".....",
  /* g */ "....." "....." ".XXXX" "X...X" "X...X" ".XXXX" "....X" ".XXX.",
  /* h */ "X...." "X...." "X.XX." "XX..X" "X...X" "X...X" "X...X" ".....",
  /* i */ "..X.." "....." ".XX.." "..X.." "..X.." "..X.." ".XXX." ".....",
  /* j */ "...X." "....." "..XX." "...X." "...X." "...X." "X..X." ".XX..",
  /* k */ "X...." "X...." "X..X." "X.X.." "XX..." "X.X.." "X..X." ".....",
  /* l */ ".XX.." "..X.." "..X.." "..X.." "..X.." "..X.." ".XXX." ".....",
  /* m */ "....." "....." "XX.X." "X.X.X" "X.X.X" "X...X" "X...X" ".....",
  /* n */ "....." "....." "X.XX." "XX..X" "X...X" "X...X" "X...X" ".....",
  /* o */ "....." "....." ".XXX." "X...X" "X...X" "X...X" ".XXX." ".....",
  /* p */ "....." "....." "XXXX." "X...X" "X...X" "XXXX." "X...." "X....",
  /* q */ "....." "....." ".XXXX" "X...X" "X...X" ".XXXX" "....X" "....X",
  /* r */ "....." "....." "X.XX." "XX..X" "X...." "X...." "X...." ".....",
  /* s */ "....." "....." ".XXXX" "X...." ".XXX." "....X" "XXXX." ".....",
  /* t */ ".X..." ".X..." "XXX.." ".X..." ".X..." ".X..X" "..XX." ".....",
  /* u */ "....." "....." "X...X" "X...X" "X...X" "X..XX" ".XX.X" ".....",
  /* v */ "....." "....." "X...X" "X...X" "X...X" ".X.X." "..X.." ".....",
  /* w */ "....." "....." "X...X" "X...X" "X.X.X" "X.X.X" ".X.X." ".....",
  /* x */ "....." "....." "X...X" ".X.X." "..X.." ".X.X." "X...X" ".....",
  /* y */ "....." "....." "X...X" "X...X" "X...X" ".XXXX" "....X" ".XXX.",
  /* z */ "....." "....." "XXXXX" "...X." "..X.." ".X..." "XXXXX" ".....",
  /* { */ "...X." "..X.." "..X.." ".X..." "..X.." "..X.." "...X." ".....",
  /* | */ "..X.." "..X.." "..X.." "..X.." "..X.." "..X.." "..X.." ".....",
  /* } */ ".X..." "..X.." "..X.." "...X." "..X.." "..X.." ".X..." ".....",
  /* ~ */ "....." "....." ".X..." "X.X.X" "...X." "....." "....." ".....",
};
// clang-format on

// Art row r fills pixel rows 2r and 2r+1; art column c is pixel column c + 1 (a blank column on the left and
// two on the right keep neighbouring characters apart).
constexpr Glyph from_art(const char* art) {
  Glyph glyph{};
  for (uint32_t r = 0; r < kArtRows; ++r) {
    uint8_t bits = 0;
    for (uint32_t c = 0; c < kArtColumns; ++c)
      if (art[r * kArtColumns + c] == 'X') bits |= static_cast<uint8_t>(0x80 >> (c + 1));
    glyph.rows[2 * r] = glyph.rows[2 * r + 1] = bits;
  }
  return glyph;
}

struct Table {
  Glyph glyphs[kGlyphCount];
};

constexpr Table make_table() {
  Table table{};
  for (uint32_t i = 0; i < kGlyphCount; ++i) table.glyphs[i] = from_art(kArt[i]);
  return table;
}

inline constexpr Table kTable = make_table();

}  // namespace detail

// The glyph drawn for `c` (kReplacement's for anything unprintable).
constexpr const Glyph& glyph(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte < static_cast<unsigned char>(kFirst) || byte > static_cast<unsigned char>(kLast))
    return detail::kTable.glyphs[kReplacement - kFirst];
  return detail::kTable.glyphs[byte - kFirst];
}

}  // namespace ett::font
