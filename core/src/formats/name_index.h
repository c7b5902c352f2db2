// NameIndex: positions in a vector whose elements hold a name, hashed by that name, so that the
// GGUF reader finds duplicate keys and tensor names in linear time without copying a name.
// Positions stay valid when the vector grows. Open addressing with linear probing over
// (hash, position) slots, at most 3/4 full.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

template <typename T, std::string T::*Name>
class NameIndex {
public:
    explicit NameIndex(const std::vector<T>& items) : m_items(items) {}

    bool contains(std::string_view name) const {
        if (m_slots.empty()) return false;
        const size_t hash = std::hash<std::string_view>{}(name);
        const size_t mask = m_slots.size() - 1;
        for (size_t s = hash & mask;; s = (s + 1) & mask) {
            const Slot& slot = m_slots[s];
            if (slot.position == kEmpty) return false;
            if (slot.hash == hash && name_at(slot.position) == name) return true;
        }
    }

    // `position` holds a name not yet in the index.
    void add(size_t position) {
        if ((m_used + 1) * 4 > m_slots.size() * 3) grow();
        place({std::hash<std::string_view>{}(name_at(position)), position});
        ++m_used;
    }

private:
    struct Slot {
        size_t hash;
        size_t position;
    };
    static constexpr size_t kEmpty = SIZE_MAX;

    std::string_view name_at(size_t position) const { return m_items[position].*Name; }

    void place(Slot slot) {
        const size_t mask = m_slots.size() - 1;
        size_t s = slot.hash & mask;
        while (m_slots[s].position != kEmpty) s = (s + 1) & mask;
        m_slots[s] = slot;
    }

    void grow() {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(old.empty() ? 64 : old.size() * 2, Slot{0, kEmpty});
        for (const Slot& slot : old)
            if (slot.position != kEmpty) place(slot);
    }

    const std::vector<T>& m_items;
    std::vector<Slot> m_slots;  // size is 0 or a power of two
    size_t m_used = 0;
};

}  // namespace mlens
