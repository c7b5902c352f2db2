// How often each code occurs in each group of a source with code groups (float_source.h), the
// count the statistics' code-group passes start from. Internal to core/quant.
//
// Contract: count_group_codes(shape, code, groups, count) writes, for `groups` groups of
// shape.length codes (each below shape.codes, at most 255 a group) at `code`, how often code c
// occurs in group g to count[g * shape.codes + c]. Codes are counted with GFNI and AVX-512 BITALG
// where the CPU has them (groups a multiple of 32 codes long, 16 or 32 codes), else with AVX2
// compares, else one at a time; every way gives the same counts.
#pragma once

#include <cstdint>

#include "mlens/quant/float_source.h"

namespace mlens {

void count_group_codes(const CodeGroups& shape, const uint8_t* code, uint64_t groups, uint8_t* count);

}  // namespace mlens
