// CachedEntries: every entry of one kind on one device of the cache database (cache_database.h),
// read in one query, for a caller that looks up many files of one device in a run (a store's
// blobs): one query and a hash table instead of one SQLite lookup per file.
//
// Contract:
//  - read_cached_entries writes the database's pending stores first (flush), then reads, through
//    a connection of its own, every entry of `kind` on `device` that this build (ModelLens version
//    and git revision) computed. find then answers exactly as CacheDatabase::lookup would at that
//    moment: a value only when the file's whole stamp (device, inode, size, modification and
//    change time) and the detail match, so a changed file is a miss, never a stale answer.
//  - Never fatal: a disabled database, or one that cannot be opened or read, gives no entries
//    (every find a miss); a read that fails halfway keeps the rows read before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlens/io/cache_database.h"

namespace mlens {

class CachedEntries {
public:
    // The value stored for the file with this stamp and detail; null when there is none or the
    // file's stamp differs from the one the value was computed for.
    const std::string* find(const FileStamp& file, std::string_view detail) const;
    size_t size() const { return m_entries.size(); }

    struct Entry {
        FileStamp stamp;
        std::string detail, value;
    };
    void add(Entry entry);

private:
    std::vector<Entry> m_entries;
    std::vector<uint32_t> m_next;  // per entry: the next entry of the same inode, or kEnd
    std::unordered_map<uint64_t, uint32_t> m_first;  // inode -> its first entry
    static constexpr uint32_t kEnd = UINT32_MAX;
};

CachedEntries read_cached_entries(CacheDatabase& cache, CacheKind kind, uint64_t device);

}  // namespace mlens
