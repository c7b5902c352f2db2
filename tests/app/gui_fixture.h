// The GGUF fixture the app tests open: small, but with something for every panel — metadata of
// every kind (enum-valued keys, arrays, a multi-line chat template, CJK/Cyrillic/Greek text),
// a vocabulary with control, byte, whitespace, bidi and invalid-UTF-8 pieces, tensors of several
// types in two blocks plus non-block tensors, and two warnings (a special token id out of range
// and a tensor type the pinned ggml does not know). Also the outlier weights the Weights tests and
// screenshots share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlens::test {

std::vector<uint8_t> gui_fixture_bytes();
// Writes gui_fixture_bytes() to `path`; false on I/O failure.
bool write_gui_fixture(const std::string& path);

// 16 rows of 4096 values from N(0, 1) (a fixed seed), columns 7 and 2900 scaled by 80: the
// outlier channels of trained ffn_down weights.
std::vector<float> outlier_weights();

}  // namespace mlens::test
