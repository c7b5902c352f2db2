#include "held_ranges.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "mlens/remote/remote_source.h"

namespace mlens {

namespace {

// Every HeldRanges of the process, what they hold together, their clock and their limit.
struct Ledger {
    std::mutex mutex;  // guards `members`; held while a source drops ranges across sources
    std::vector<HeldRanges*> members;
    std::atomic<uint64_t> total{0};
    std::atomic<uint64_t> clock{0};
    std::atomic<uint64_t> limit{kHeldBytes};
};

// Never destroyed: a source that outlives the statics at exit still finds it.
Ledger& ledger() {
    static Ledger* const l = new Ledger;
    return *l;
}

}  // namespace

HeldRanges::HeldRanges(std::mutex& owner) : m_owner(owner) {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    l.members.push_back(this);
}

HeldRanges::~HeldRanges() {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    l.members.erase(std::find(l.members.begin(), l.members.end(), this));
    l.total.fetch_sub(m_bytes);
}

void HeldRanges::hold(uint64_t first, std::vector<uint8_t> bytes) {
    Ledger& l = ledger();
    if (auto it = m_ranges.find(first); it != m_ranges.end()) drop(it);
    m_bytes += bytes.size();
    l.total.fetch_add(bytes.size());
    m_ranges[first] = Range{std::move(bytes), l.clock.fetch_add(1) + 1};
}

HeldRanges::Ranges::const_iterator HeldRanges::range_at(uint64_t pos) const {
    auto it = m_ranges.upper_bound(pos);
    if (it == m_ranges.begin()) return m_ranges.end();
    --it;
    return pos < it->first + it->second.bytes.size() ? it : m_ranges.end();
}

uint64_t HeldRanges::end_of_range_at(uint64_t pos) const {
    auto it = range_at(pos);
    return it == m_ranges.end() ? 0 : it->first + it->second.bytes.size();
}

uint64_t HeldRanges::next_start(uint64_t pos) const {
    auto it = m_ranges.upper_bound(pos);
    return it == m_ranges.end() ? UINT64_MAX : it->first;
}

void HeldRanges::copy_out(uint64_t offset, uint64_t length, uint8_t* dst) {
    Ledger& l = ledger();
    for (uint64_t pos = offset, end = offset + length; pos < end;) {
        auto it = m_ranges.find(range_at(pos)->first);
        Range& r = it->second;
        const uint64_t from = pos - it->first;
        const uint64_t n = std::min<uint64_t>(r.bytes.size() - from, end - pos);
        std::memcpy(dst + (pos - offset), r.bytes.data() + from, n);
        r.last_use = l.clock.fetch_add(1) + 1;
        pos += n;
    }
}

HeldRanges::Ranges::iterator HeldRanges::oldest(bool keep_newest) {
    if (m_ranges.size() < (keep_newest ? 2u : 1u)) return m_ranges.end();
    auto by_use = [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; };
    return std::min_element(m_ranges.begin(), m_ranges.end(), by_use);
}

void HeldRanges::drop(Ranges::iterator it) {
    m_bytes -= it->second.bytes.size();
    ledger().total.fetch_sub(it->second.bytes.size());
    m_ranges.erase(it);
}

void HeldRanges::settle() {
    Ledger& l = ledger();
    const uint64_t limit = l.limit.load();
    while (m_bytes > limit) {
        auto it = oldest(true);
        if (it == m_ranges.end()) break;
        drop(it);
    }
    if (l.total.load() <= limit) return;
    std::lock_guard lock(l.mutex);
    while (l.total.load() > l.limit.load() && drop_one_across_sources()) {
    }
}

bool HeldRanges::drop_one_across_sources() {
    const auto own = oldest(true);
    HeldRanges* chosen = this;
    uint64_t chosen_use = own == m_ranges.end() ? UINT64_MAX : own->second.last_use;
    for (HeldRanges* other : ledger().members) {
        if (other == this || !other->m_owner.try_lock()) continue;
        std::lock_guard lock(other->m_owner, std::adopt_lock);
        const auto it = other->oldest(false);
        if (it != other->m_ranges.end() && it->second.last_use < chosen_use) {
            chosen = other;
            chosen_use = it->second.last_use;
        }
    }
    if (chosen_use == UINT64_MAX) return false;
    if (chosen == this) {
        drop(own);
        return true;
    }
    if (!chosen->m_owner.try_lock()) return false;
    std::lock_guard lock(chosen->m_owner, std::adopt_lock);
    const auto it = chosen->oldest(false);
    if (it == chosen->m_ranges.end()) return false;
    chosen->drop(it);
    return true;
}

uint64_t remote_held_bytes() { return ledger().total.load(); }

void set_remote_held_limit(uint64_t bytes) { ledger().limit.store(bytes); }

}  // namespace mlens
