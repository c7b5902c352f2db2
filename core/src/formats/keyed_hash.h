// KeyedHash: a string hash for hash tables filled with names from hostile files.
//
// Contract: a polynomial over the prime 2^61 - 1 at a base drawn at random once per process, so
// a file cannot aim many distinct keys at one hash value (fixed public hashes such as the
// MurmurHash2 behind std::hash have seed-independent multicollisions) and table operations stay
// constant time on average. Two distinct strings of at most L bytes collide with probability at
// most L / (2^61 - 1). Values differ between runs; use it for lookups only, never for output.
#pragma once

#include <cstdint>
#include <string_view>

namespace mlens {

struct KeyedHash {
    uint64_t operator()(std::string_view s) const;
};

}  // namespace mlens
