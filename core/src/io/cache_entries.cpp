// The batch read of the cache database: its own connection (opened without creating anything,
// the database's busy timeout) and one SELECT over the primary key's (kind, device) prefix.
#include "mlens/io/cache_entries.h"

#include <sqlite3.h>

#include "cache_version.h"

namespace mlens {

const std::string* CachedEntries::find(const FileStamp& file, std::string_view detail) const {
    auto it = m_first.find(file.inode);
    for (uint32_t i = it == m_first.end() ? kEnd : it->second; i != kEnd; i = m_next[i])
        if (m_entries[i].detail == detail) return m_entries[i].stamp == file ? &m_entries[i].value : nullptr;
    return nullptr;
}

void CachedEntries::add(Entry entry) {
    if (m_entries.size() >= kEnd) return;  // beyond what an index holds: a miss, never a wrong answer
    const uint32_t index = static_cast<uint32_t>(m_entries.size());
    auto [first, fresh] = m_first.try_emplace(entry.stamp.inode, index);
    m_next.push_back(fresh ? kEnd : first->second);
    first->second = index;
    m_entries.push_back(std::move(entry));
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
                return std::string(static_cast<const char*>(p ? p : ""), static_cast<size_t>(sqlite3_column_bytes(all, column)));
            };
            while (sqlite3_step(all) == SQLITE_ROW)
                out.add({{device, static_cast<uint64_t>(sqlite3_column_int64(all, 0)), static_cast<uint64_t>(sqlite3_column_int64(all, 2)),
                          sqlite3_column_int64(all, 3), sqlite3_column_int64(all, 4)},
                         text(1),
                         text(5)});
        }
    }
    sqlite3_finalize(all);
    sqlite3_close(db);
    return out;
}

}  // namespace mlens
