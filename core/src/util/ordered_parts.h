// The floating-point parts of a parallel pass (one per chunk), kept by where their chunk starts
// and merged in that order once the pass is done, so that sums come out the same on every run
// whichever thread finished a chunk first. Integer counts, whose order changes nothing, need not
// go through it. Internal to core.
//
// Contract: put(first, part) is thread-safe; merge_into(all) calls all.merge(part) for every part
// by increasing `first` (call it after the pass).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace mlens {

template <typename Part>
class OrderedParts {
public:
    void put(uint64_t first, const Part& part) {
        std::lock_guard lock(m_mutex);
        m_parts.emplace(first, part);
    }

    template <typename All>
    void merge_into(All& all) const {
        for (const auto& [first, part] : m_parts) all.merge(part);
    }

private:
    std::mutex m_mutex;
    std::map<uint64_t, Part> m_parts;
};

}  // namespace mlens
