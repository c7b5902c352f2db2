// RangeCache: byte ranges of remote files kept on disk, shared by every ModelLens process.
//
// Contract:
//  - Where: $XDG_CACHE_HOME/modellens/http, else $HOME/.cache/modellens/http (default_cache_folder);
//    created on the first store. At most max_bytes of ranges (MLENS_HTTP_CACHE_BYTES, default
//    4 GiB) are kept: past that, whole entries are removed, least recently used first (an entry's
//    use is the modification time of its "entry" file, touched whenever it is opened).
//  - An entry is one version of one file: its folder "<url key>-<version key>" (FNV-1a 64 of the
//    URL as the source names it — display_url, plus "?query-<FNV-1a 64 of the query>" for a URL
//    with a query — and of size and validator, in hex) holds "entry" (that name, the size and the
//    validator, one a line) and one file per stored range named "<first>-<length>". A file
//    without a validator (no strong ETag, no Last-Modified), or whose version may not be stored
//    (remote_source.h), is never stored.
//  - An entry is a URL's only when its "entry" file names that URL, size and validator: a folder of
//    the same name made for another (two of them under one digest) is a miss, never read, written
//    or removed for it: open_entry gives nullopt, has_url and forget pass it by. A CacheEntry
//    checks its "entry" file before every read and store, so an entry removed and made again for
//    another file meanwhile is never read or written as its own.
//  - Versions never mix: a source reads and stores only in the entry of the size and validator
//    it opened with (remote_source.h checks every answer against them); open_entry removes the
//    other versions of the URL, which are the file as it was before it changed.
//  - Safe with several processes: every file is written through SafeFileWriter (a temporary
//    beside it, renamed into place), so a range file is whole or absent; open_entry, stores,
//    evictions, forget and clear() hold an exclusive flock on "<folder>/lock"; a range file that
//    disappears (evicted by another process) is a miss, fetched again.
//  - Waiting for that lock (another process holds it: a stopped mlens, a long clear) is said once
//    as it happens after 2 seconds, as a notice (temp_notice, owner_stamp.h): "waiting for the
//    range cache's lock FOLDER/lock, which another process holds". It ends when the network time
//    limit (http_client.h) runs out, and, for every step but clear(), after 5 seconds without a
//    limit (the app has none, and its jobs must stay cancellable): then the step goes on without
//    the cache, with a warning naming the lock and what ended the wait
//    (take_range_cache_warnings): open_entry gives nullopt (the reads go uncached), a store keeps
//    nothing (E_BUSY), an eviction waits for a later run, forget leaves the ranges stored (the
//    warning says so). clear(), which has nothing to do without the lock, waits while the lock is
//    held, or until the limit runs out: then it fails with E_BUSY and the same text. A run past
//    its time limit fails its next transfer anyway (E_NETWORK, the limit ran out), so the wait
//    never holds a run with --max-time past its limit.
//  - Entries are listed (contents(), for `mlens cache`) with their URL, size, stored ranges and
//    bytes; clear() removes them all.
//  - Leftovers: a run killed while it stored a range leaves the range's temporary
//    ".<first>-<length>.tmp-<owner stamp>-XXXXXX" (safe_file_writer.h) in the entry folder, and a
//    removal cut short may leave a folder named as an entry is without its "entry" file.
//    contents().leftover_bytes counts what no entry lists: the temporaries of the cache's own files (an
//    "entry" file's or a range file's) whose writing process is gone (owner_gone, owner_stamp.h),
//    and the range files of folders without an "entry" file. clear(), evict() (before it counts
//    entries against max_bytes) and the removal of a URL's other versions remove them, and such a
//    folder when that leaves it empty. A temporary whose writer still runs is never removed.
//  - Only what the cache wrote is ever removed (clear, eviction, other versions): in a folder
//    named as an entry is, and a folder rather than a link to one, its "entry" file, its range
//    files and its stale temporaries as above, then the folder when that leaves it empty. Anything
//    else below the cache folder (a user's files, a link to another folder, a folder the cache did
//    not name, a folder whose "entry" file the cache did not write) stays; no link is followed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/result.h"

namespace mlens {

// FNV-1a 64 of `text` in 16 hex digits: the digest entry names (and a URL's query) are kept as.
std::string fnv_hex(std::string_view text);

std::string default_cache_folder();
uint64_t default_cache_max_bytes();

// Whether remote opens of this process use the cache (remote_options_for); the CLI's --no-cache
// turns it off, so that a remote model is read from its server alone. On by default.
void set_range_cache_enabled(bool enabled);
bool range_cache_enabled();

// What kept the range cache from working in this process (a cache folder that cannot be made, an
// entry or range that cannot be written: a file where a folder should be, a full disk, no
// permission), each text once and handed out once; the remote reads go on uncached meanwhile.
// The CLI prints them as "warning: cache: ..." when its command ends.
std::vector<std::string> take_range_cache_warnings();

struct StoredRange {
    uint64_t first = 0;
    uint64_t length = 0;
};

struct CacheEntryInfo {
    std::string url;
    uint64_t size = 0;  // of the remote file
    std::string validator;
    uint64_t ranges = 0;
    uint64_t bytes = 0;  // stored
};

class RangeCache;

// One version of one remote file in the cache.
class CacheEntry {
public:
    // The stored range holding `offset`, if any.
    std::optional<StoredRange> range_at(uint64_t offset) const;
    // The first stored range starting after `offset`.
    std::optional<StoredRange> range_after(uint64_t offset) const;
    // Reads [offset, offset+length) out of the stored range `range`; false when the file is gone.
    bool read(const StoredRange& range, uint64_t offset, uint64_t length, void* dst) const;
    // Stores a fetched range (errors are ignored by callers: the cache is an optimisation).
    Status store(uint64_t first, const std::vector<uint8_t>& bytes);

private:
    friend class RangeCache;
    // Whether the folder still holds this entry: it may have been removed (evicted, forgotten) and
    // made again since for another file of the same name.
    bool holds_own_entry() const;
    std::shared_ptr<RangeCache> m_cache;
    std::string m_folder;
    std::string m_text;  // of its "entry" file
    std::vector<StoredRange> m_ranges;  // sorted by first, as listed at open and stored since
};

class RangeCache : public std::enable_shared_from_this<RangeCache> {
public:
    static std::shared_ptr<RangeCache> open(std::string folder = default_cache_folder(), uint64_t max_bytes = default_cache_max_bytes());

    const std::string& folder() const { return m_folder; }
    // Whether any version of `url` is stored (then an open asks the server to validate it).
    bool has_url(const std::string& url) const;
    // The entry of this version of `url`, created when absent; the URL's other versions are
    // removed. nullopt when the validator is empty or the entry cannot be created.
    std::optional<CacheEntry> open_entry(const std::string& url, uint64_t size, const std::string& validator);
    // Removes every stored version of `url` (bytes found not to be what they should: a blob that
    // failed its digest), so that the next read fetches it again.
    void forget(const std::string& url);
    // What the folder holds, in one pass over it: its entries, and the bytes of the cache's own
    // files that no entry lists (see Leftovers in the contract).
    struct Contents {
        std::vector<CacheEntryInfo> entries;
        uint64_t leftover_bytes = 0;
    };
    Contents contents() const;
    // Why nothing can be kept in the folder (something else in its place), as the warning says it;
    // "" when it is a folder or is not made yet.
    std::string unusable_reason() const;
    Status clear();
    // Removes the leftovers, then least recently used entries until at most max_bytes are stored.
    void evict();

private:
    RangeCache(std::string folder, uint64_t max_bytes) : m_folder(std::move(folder)), m_max_bytes(max_bytes) {}
    // Removes the entries stored for `url` (and folders of its key left without an "entry" file), but
    // the one named `keep`; the caller holds the folder's lock.
    void remove_versions(const std::string& url, const std::string& keep);
    std::string m_folder;
    uint64_t m_max_bytes;
};

}  // namespace mlens
