// Glyph heights of font files, measured with FreeType the way ImGui's FreeType builder renders
// them, so merged fonts can be sized to one visual size (fonts.cpp).
//
// Contract: matched_pixel_size(base, base_px, merged, reference) is the whole pixel size at which
// `merged`'s reference glyph renders as tall as `base`'s 'H' at base_px. Heights are the rows a
// glyph's ink covers (coverage at least half) when rendered as imgui_freetype renders it: the
// size requested as FT_SIZE_REQUEST_TYPE_REAL_DIM (ascender to descender = the pixel size), light
// hinting, outlines only. `reference` 0 means the merged font's capital height: its 'H', or for
// a font without Latin letters the OS/2 table's sCapHeight (script fonts declare the capital
// height of the Latin they are designed to sit beside), scaled from its outline metrics. Sizes
// are searched from half to twice base_px; base_px (rounded) is returned when either font cannot
// be opened or measured.
// em_filling_pixel_size(merged, reference, base_px, share) is the smallest whole pixel size, from
// half to three times base_px, at which `merged`'s reference glyph covers at least
// ⌈share × base_px⌉ ink rows: how CJK ideographs are sized to the em box of the text around
// them; base_px (rounded) when the font cannot be opened or measured.
#pragma once

#include <cstdint>

#include "font_lookup.h"

namespace mlens {

float matched_pixel_size(const FontFile& base, float base_px, const FontFile& merged, uint32_t reference);
float em_filling_pixel_size(const FontFile& merged, uint32_t reference, float base_px, double share);

}  // namespace mlens
