// CacheDatabase: the one SQLite database where ModelLens keeps answers that are expensive to
// recompute and cheap to validate (a blob's sha256, a blob's header verdict, a file's fsck
// summary, a store model's loadability verdict), shared by the app and every mlens process.
//
// Contract:
//  - Where: <cache folder>/cache.sqlite, the cache folder being $XDG_CACHE_HOME/modellens, else
//    $HOME/.cache/modellens (default_cache_root; tests point XDG_CACHE_HOME elsewhere). The remote
//    range cache lives beside it in <cache folder>/http (range_cache.h).
//  - Safe with several processes and threads: WAL journal, a busy timeout of kBusyTimeoutMs, one
//    connection per CacheDatabase guarded by a mutex. Stores are buffered and written in one
//    transaction by flush() (and by the destructor); a store that loses a race to another process
//    writing the same key simply replaces it (both computed the same answer).
//  - An entry is keyed by its kind, the file's identity (FileStamp: device, inode, size,
//    modification and change time in nanoseconds), a detail string (what was computed: "sha256",
//    "header:gguf", ...) and the ModelLens version and git revision that computed it. lookup
//    returns a value only when every part matches: a touched, truncated, replaced or recreated
//    file (inode reuse gives a new change time) is a miss, never a stale answer, and so is an
//    answer from another build.
//  - Never fatal: a database that cannot be read (garbage bytes, not a database, corrupt) is
//    deleted and created again, with a warning; a cache folder that cannot be written makes the
//    database disabled (every lookup a miss, stores dropped) with a warning saying it works
//    uncached. warnings() lists those, each once; shared() opens the process's database once, so
//    a program says them once.
//  - disabled() is the database --no-cache gives: no file touched, every lookup a miss.
//  - entry_counts, bytes (database and its WAL and shared-memory files) and clear (every entry
//    removed, the file kept) serve `mlens cache`. clear of a database file that exists but could
//    not be opened for writing (a read-only cache folder) is E_PERMISSION: nothing was removed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/file_stamp.h"
#include "mlens/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mlens {

constexpr int kBusyTimeoutMs = 10'000;

// $XDG_CACHE_HOME/modellens, else $HOME/.cache/modellens.
std::string default_cache_root();

enum class CacheKind { blob_digest, blob_header, fsck_summary, model_loadability };
// "blob digests", "blob header verdicts", "fsck summaries", "model loadability verdicts"
const char* cache_kind_name(CacheKind kind);
constexpr CacheKind kCacheKinds[] = {CacheKind::blob_digest, CacheKind::blob_header, CacheKind::fsck_summary,
                                     CacheKind::model_loadability};

struct CacheKindCount {
    CacheKind kind;
    uint64_t entries = 0;
};

class CacheDatabase {
public:
    static std::shared_ptr<CacheDatabase> open(const std::string& folder = default_cache_root());
    static std::shared_ptr<CacheDatabase> disabled();
    // The database of this process, opened on first use in the default folder.
    static std::shared_ptr<CacheDatabase> shared();
    ~CacheDatabase();
    CacheDatabase(const CacheDatabase&) = delete;
    CacheDatabase& operator=(const CacheDatabase&) = delete;

    bool enabled() const { return m_db != nullptr; }
    const std::string& path() const { return m_path; }
    const std::vector<std::string>& warnings() const { return m_warnings; }
    // The warnings not handed out before (each is returned once per process).
    std::vector<std::string> take_warnings();

    std::optional<std::string> lookup(CacheKind kind, const FileStamp& file, std::string_view detail);
    void store(CacheKind kind, const FileStamp& file, std::string_view detail, std::string value);
    void flush();

    std::vector<CacheKindCount> entry_counts();
    uint64_t bytes() const;
    Status clear();

private:
    struct Pending {
        CacheKind kind;
        FileStamp file;
        std::string detail, value;
    };
    CacheDatabase() = default;
    bool connect(bool may_rebuild);
    void close();
    void lost(const std::string& why);  // a failure in use: disabled from then on, with a warning
    void flush_locked();

    std::mutex m_mutex;
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_lookup = nullptr;
    sqlite3_stmt* m_store = nullptr;
    std::string m_folder, m_path, m_version;
    std::vector<std::string> m_warnings;
    size_t m_warnings_taken = 0;
    std::vector<Pending> m_pending;
};

}  // namespace mlens
