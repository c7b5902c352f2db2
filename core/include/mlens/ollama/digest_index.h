// DigestIndex: sha256 digests (32 binary bytes) to small integers, for a run that resolves many
// digests at once (the blob names of a listed blobs/, the layers of a store's manifests), in flat
// arrays sized once instead of a node and a string per digest.
//
// Contract:
//  - sha256_bytes reads exactly 64 lowercase hex digits (the digest grammar of digest.h); any
//    other text, uppercase digits included, is nullopt.
//  - A DigestIndex is sized once, for at most `capacity` digests (open addressing at most half
//    full; never rehashed). insert(d, v) adds d -> v and returns {v, true}, or, when d is there
//    already, returns {the value it holds, false}; past `capacity` it adds nothing and returns
//    {kNoValue, false}, which a caller treats as "not indexed" (resolved without the index).
//  - find(d) is the value d was inserted with, or nullopt. Digests are compared whole: two that
//    share any prefix are told apart.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace mlens {

using Sha256Bytes = std::array<uint8_t, 32>;

std::optional<Sha256Bytes> sha256_bytes(std::string_view hex);

class DigestIndex {
public:
    static constexpr uint32_t kNoValue = UINT32_MAX;

    DigestIndex() = default;
    explicit DigestIndex(size_t capacity);

    std::pair<uint32_t, bool> insert(const Sha256Bytes& digest, uint32_t value);
    std::optional<uint32_t> find(const Sha256Bytes& digest) const;
    size_t size() const { return m_keys.size(); }

private:
    struct Slot {
        uint32_t tag = 0;  // bytes 8-11 of the digest, compared before the whole key
        uint32_t entry = 0;  // index into m_keys + 1; 0 for an empty slot
    };
    // The slot holding `digest`, or the empty slot where it belongs.
    size_t slot_of(const Sha256Bytes& digest, uint32_t tag) const;

    std::vector<Slot> m_slots;  // a power of two, at least twice the capacity
    std::vector<Sha256Bytes> m_keys;
    std::vector<uint32_t> m_values;
    size_t m_capacity = 0;
};

}  // namespace mlens
