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
//  - Held flat: one buffer for every detail and value and a table by inode sized as it fills, not
//    a string and a node per entry; past UINT32_MAX entries or bytes, rows are left out (a miss,
//    never a wrong answer). A value of kSharedValueBytes or more is kept once per distinct text
//    (the models of a store share a few loadability verdicts of a few hundred bytes each); shorter
//    ones (digests, most header answers) are appended as they come.
//  - Never fatal: a disabled database, or one that cannot be opened or read, gives no entries
//    (every find a miss); a read that fails halfway keeps the rows read before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <unordered_map>
#include <vector>

#include "mlens/io/cache_database.h"

namespace mlens {

class CachedEntries {
public:
    // The value stored for the file with this stamp and detail; nullopt when there is none or the
    // file's stamp differs from the one the value was computed for. The view lives as long as the
    // CachedEntries.
    std::optional<std::string_view> find(const FileStamp& file, std::string_view detail) const;
    size_t size() const { return m_entries.size(); }

    // One more entry (a later one of the same inode and detail is found first).
    void add(const FileStamp& stamp, std::string_view detail, std::string_view value);

    static constexpr size_t kSharedValueBytes = 128;

private:
    // Where `value` starts in m_text, appended unless an equal long value is there already.
    uint32_t place_value(std::string_view value);

    struct Entry {
        FileStamp stamp;
        uint32_t detail_at, detail_size, value_at, value_size;  // in m_text
        uint32_t next;  // the next entry of the same inode, or kEnd
    };
    struct Slot {
        uint64_t inode = 0;
        uint32_t first = kEnd;  // the inode's latest entry; kEnd for an empty slot
    };
    size_t slot_of(uint64_t inode) const;  // the inode's slot, or the empty one where it belongs
    void grow();

    std::string m_text;  // every detail and value, one after the other
    std::vector<Entry> m_entries;
    std::vector<Slot> m_slots;  // open addressing by inode, at most half full
    // Long values by the hash of their text: where each distinct one starts in m_text.
    std::unordered_map<size_t, std::vector<uint32_t>> m_shared;
    size_t m_inodes = 0;  // slots in use
    static constexpr uint32_t kEnd = UINT32_MAX;
};

CachedEntries read_cached_entries(CacheDatabase& cache, CacheKind kind, uint64_t device);

}  // namespace mlens
