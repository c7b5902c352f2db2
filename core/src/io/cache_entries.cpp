// The batch read of the cache database: its own connection (opened without creating anything,
// the database's busy timeout) and one SELECT over the primary key's (kind, device) prefix.
#include "mlens/io/cache_entries.h"

#include <sqlite3.h>

#include <algorithm>

#include "cache_version.h"

namespace mlens {

namespace {

size_t inode_hash(uint64_t inode) { return static_cast<size_t>((inode * 0x9E3779B97F4A7C15ull) >> 17); }

}  // namespace

size_t CachedEntries::slot_of(uint64_t inode) const {
    const size_t mask = m_slots.size() - 1;
    for (size_t at = inode_hash(inode) & mask;; at = (at + 1) & mask)
        if (m_slots[at].first == kEnd || m_slots[at].inode == inode) return at;
}

void CachedEntries::grow() {
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    for (const Slot& s : old)
        if (s.first != kEnd) m_slots[slot_of(s.inode)] = s;
}

std::optional<std::string_view> CachedEntries::find(const FileStamp& file, std::string_view detail) const {
    if (m_slots.empty()) return std::nullopt;
    for (uint32_t i = m_slots[slot_of(file.inode)].first; i != kEnd; i = m_entries[i].next) {
        const Entry& e = m_entries[i];
        if (std::string_view(m_text).substr(e.detail_at, e.detail_size) != detail) continue;
        if (e.stamp != file) return std::nullopt;
        return std::string_view(m_text).substr(e.value_at, e.value_size);
    }
    return std::nullopt;
}

void CachedEntries::add(const FileStamp& stamp, std::string_view detail, std::string_view value) {
    // Beyond what a 32-bit index holds: a miss, never a wrong answer.
    if (m_entries.size() >= kEnd - 1 || m_text.size() + detail.size() + value.size() >= kEnd) return;
    if (2 * (m_inodes + 1) > m_slots.size()) grow();
    Slot& slot = m_slots[slot_of(stamp.inode)];
    if (slot.first == kEnd) {
        slot.inode = stamp.inode;
        ++m_inodes;
    }
    const uint32_t detail_at = static_cast<uint32_t>(m_text.size());
    m_text.append(detail);
    const uint32_t value_at = place_value(value);
    m_entries.push_back({stamp, detail_at, static_cast<uint32_t>(detail.size()), value_at, static_cast<uint32_t>(value.size()), slot.first});
    slot.first = static_cast<uint32_t>(m_entries.size() - 1);
}

uint32_t CachedEntries::place_value(std::string_view value) {
    std::vector<uint32_t>* same_hash = nullptr;
    if (value.size() >= kSharedValueBytes) {
        same_hash = &m_shared[std::hash<std::string_view>{}(value)];
        for (uint32_t at : *same_hash)
            if (std::string_view(m_text).substr(at, value.size()) == value) return at;
    }
    const uint32_t at = static_cast<uint32_t>(m_text.size());
    m_text.append(value);
    if (same_hash) same_hash->push_back(at);
    return at;
}

CachedEntries read_cached_entries(CacheDatabase& cache, CacheKind kind, uint64_t device) {
    CachedEntries out;
    if (!cache.enabled()) return out;
    cache.flush();
    sqlite3* db = nullptr;
    sqlite3_stmt* all = nullptr;
    const std::string version = cache_build_version();
    if (sqlite3_open_v2(cache.path().c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(db, kBusyTimeoutMs);
        if (sqlite3_prepare_v2(db,
                               "SELECT inode, detail, size, mtime_ns, ctime_ns, value FROM entries WHERE kind=?1 AND device=?2 AND "
                               "version=?3",
                               -1, &all, nullptr) == SQLITE_OK) {
            sqlite3_bind_int(all, 1, static_cast<int>(kind));
            sqlite3_bind_int64(all, 2, static_cast<int64_t>(device));
            sqlite3_bind_text(all, 3, version.data(), static_cast<int>(version.size()), SQLITE_STATIC);
            const auto text = [&](int column) {
                const void* p = sqlite3_column_blob(all, column);
                return std::string_view(static_cast<const char*>(p ? p : ""), static_cast<size_t>(sqlite3_column_bytes(all, column)));
            };
            while (sqlite3_step(all) == SQLITE_ROW) {
                const FileStamp stamp{device, static_cast<uint64_t>(sqlite3_column_int64(all, 0)),
                                      static_cast<uint64_t>(sqlite3_column_int64(all, 2)), sqlite3_column_int64(all, 3),
                                      sqlite3_column_int64(all, 4)};
                const std::string_view detail = text(1);
                out.add(stamp, detail, text(5));
            }
        }
    }
    sqlite3_finalize(all);
    sqlite3_close(db);
    return out;
}

}  // namespace mlens
