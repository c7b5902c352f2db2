// The cache database on SQLite. Every failure after the connection is made disables the cache
// for the rest of the process instead of failing the caller: the cache only ever saves work.
// Setting the connection up (WAL, the schema) waits out another process doing the same: SQLite
// returns SQLITE_BUSY there without calling the busy handler when waiting could deadlock (two
// connections making a new database WAL at once), so those steps are retried until
// kBusyTimeoutMs has passed. SQLITE_SCHEMA (another connection changed the schema) is such a
// race too, never a sign of a damaged file: only NOTADB, CORRUPT and FORMAT rebuild the file.
#include "mlens/io/cache_database.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cache_version.h"
#include "mlens/util/build_info.h"

namespace mlens {

namespace {

namespace fs = std::filesystem;

constexpr int kSchemaVersion = 1;
constexpr size_t kFlushEvery = 4096;  // pending stores written in one transaction

const char* kSchema =
    "CREATE TABLE IF NOT EXISTS entries("
    " kind INTEGER NOT NULL, device INTEGER NOT NULL, inode INTEGER NOT NULL, detail TEXT NOT NULL,"
    " size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, version TEXT NOT NULL, value BLOB NOT NULL,"
    " PRIMARY KEY(kind, device, inode, detail)) WITHOUT ROWID";

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

int64_t as_int(uint64_t v) { return static_cast<int64_t>(v); }

int64_t nanoseconds(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// Codes that mean the file is not a usable database (rather than "cannot be written").
bool unreadable_database(int code) {
    const int primary = code & 0xff;
    return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_FORMAT;
}

// Runs `step` (an SQLite call returning a result code) again while another connection holds the
// database (BUSY, LOCKED) or has just changed its schema (SCHEMA), for up to kBusyTimeoutMs.
template <typename Step>
int retrying_contention(Step step) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (int pause_ms = 1;; pause_ms = std::min(pause_ms * 2, 50)) {
        const int rc = step();
        const int primary = rc & 0xff;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED && primary != SQLITE_SCHEMA) ||
            std::chrono::steady_clock::now() >= deadline)
            return rc;
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    }
}

int exec_retrying(sqlite3* db, const char* sql) {
    return retrying_contention([&] { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); });
}

}  // namespace

std::string cache_build_version() { return std::string(modellens_version()) + " " + modellens_revision(); }

std::string default_cache_root() {
    std::string base = environment("XDG_CACHE_HOME");
    if (base.empty()) base = environment("HOME") + "/.cache";
    return base + "/modellens";
}

FileStamp file_stamp(const struct stat& st) {
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size), nanoseconds(st.st_mtim),
            nanoseconds(st.st_ctim)};
}

std::optional<FileStamp> file_stamp(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return file_stamp(st);
}

const char* cache_kind_name(CacheKind kind) {
    switch (kind) {
        case CacheKind::blob_digest:
            return "blob digests";
        case CacheKind::blob_header:
            return "blob header verdicts";
        case CacheKind::fsck_summary:
            return "fsck summaries";
        default:
            return "model loadability verdicts";
    }
}

std::shared_ptr<CacheDatabase> CacheDatabase::open(const std::string& folder) {
    std::shared_ptr<CacheDatabase> db(new CacheDatabase());
    db->m_folder = folder;
    db->m_path = folder + "/cache.sqlite";
    db->m_version = cache_build_version();
    db->connect(true);
    return db;
}

std::shared_ptr<CacheDatabase> CacheDatabase::disabled() { return std::shared_ptr<CacheDatabase>(new CacheDatabase()); }

std::shared_ptr<CacheDatabase> CacheDatabase::shared() {
    static std::shared_ptr<CacheDatabase> db = open();
    return db;
}

CacheDatabase::~CacheDatabase() {
    std::lock_guard lock(m_mutex);
    flush_locked();
    close();
}

void CacheDatabase::close() {
    sqlite3_finalize(m_lookup);
    sqlite3_finalize(m_store);
    sqlite3_close(m_db);
    m_lookup = m_store = nullptr;
    m_db = nullptr;
}

bool CacheDatabase::connect(bool may_rebuild) {
    std::error_code ec;
    fs::create_directories(m_folder, ec);
    if (ec || ::access(m_folder.c_str(), W_OK) != 0) {
        const std::string why = ec ? ec.message() : std::strerror(errno);
        m_warnings.push_back("the cache folder " + m_folder + " cannot be written (" + why + "); working uncached");
        return false;
    }
    int rc = sqlite3_open_v2(m_path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    // `foreign`: the file is a database, but its entries table is not ours (a prepared statement
    // names a column it lacks): rebuilt like an unreadable one.
    auto fail = [&](const std::string& step, bool foreign = false) {
        const std::string why = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
        close();
        if (may_rebuild && (unreadable_database(rc) || foreign)) {
            for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((m_path + suffix).c_str());
            m_warnings.push_back("the cache database " + m_path + " could not be read (" + why + "); rebuilt empty");
            return connect(false);
        }
        m_warnings.push_back("the cache database " + m_path + " cannot be used (" + step + ": " + why + "); working uncached");
        return false;
    };
    if (rc != SQLITE_OK) return fail("open");
    // SQLite opens a file it may not write read-only, without an error: nothing could be stored.
    if (sqlite3_db_readonly(m_db, "main") == 1) {
        close();
        m_warnings.push_back("the cache database " + m_path + " cannot be written (read-only); working uncached");
        return false;
    }
    sqlite3_busy_timeout(m_db, kBusyTimeoutMs);
    sqlite3_stmt* version = nullptr;
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"})
        if ((rc = exec_retrying(m_db, pragma)) != SQLITE_OK) return fail(pragma);
    int found = -1;
    rc = retrying_contention([&] {
        int step_rc = sqlite3_prepare_v2(m_db, "PRAGMA user_version", -1, &version, nullptr);
        if (step_rc == SQLITE_OK) step_rc = sqlite3_step(version);
        if (step_rc == SQLITE_ROW) found = sqlite3_column_int(version, 0);
        sqlite3_finalize(version);
        version = nullptr;
        return step_rc;
    });
    if (found < 0) return fail("schema version");
    // Another schema's entries are dropped: they were computed by another build anyway. The
    // version is written only when it changes: a database already at this schema is opened
    // without a write (a write here would cost a commit now and a checkpoint at the close).
    const std::string setup = std::string(found != kSchemaVersion && found != 0 ? "DROP TABLE IF EXISTS entries; " : "") + kSchema +
        (found != kSchemaVersion ? "; PRAGMA user_version=" + std::to_string(kSchemaVersion) : std::string());
    if ((rc = exec_retrying(m_db, setup.c_str())) != SQLITE_OK) return fail("schema");
    if ((rc = sqlite3_prepare_v2(m_db,
                                 "SELECT size, mtime_ns, ctime_ns, version, value FROM entries WHERE kind=?1 AND device=?2 AND inode=?3 AND "
                                 "detail=?4",
                                 -1, &m_lookup, nullptr)) != SQLITE_OK)
        return fail("lookup", rc == SQLITE_ERROR);
    if ((rc = sqlite3_prepare_v2(m_db,
                                 "INSERT OR REPLACE INTO entries(kind, device, inode, detail, size, mtime_ns, ctime_ns, version, value) "
                                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                                 -1, &m_store, nullptr)) != SQLITE_OK)
        return fail("store", rc == SQLITE_ERROR);
    return true;
}

void CacheDatabase::lost(const std::string& why) {
    m_warnings.push_back("the cache database " + m_path + " failed (" + why + "); working uncached from here on");
    m_pending.clear();
    close();
}

std::vector<std::string> CacheDatabase::take_warnings() {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out(m_warnings.begin() + static_cast<std::ptrdiff_t>(m_warnings_taken), m_warnings.end());
    m_warnings_taken = m_warnings.size();
    return out;
}

std::optional<std::string> CacheDatabase::lookup(CacheKind kind, const FileStamp& file, std::string_view detail) {
    std::lock_guard lock(m_mutex);
    if (!m_db) return std::nullopt;
    sqlite3_reset(m_lookup);
    sqlite3_bind_int(m_lookup, 1, static_cast<int>(kind));
    sqlite3_bind_int64(m_lookup, 2, as_int(file.device));
    sqlite3_bind_int64(m_lookup, 3, as_int(file.inode));
    sqlite3_bind_text(m_lookup, 4, detail.data(), static_cast<int>(detail.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(m_lookup);
    std::optional<std::string> out;
    if (rc == SQLITE_ROW) {
        const auto text = [&](int column) {
            const void* p = sqlite3_column_blob(m_lookup, column);
            return std::string(static_cast<const char*>(p ? p : ""), static_cast<size_t>(sqlite3_column_bytes(m_lookup, column)));
        };
        if (sqlite3_column_int64(m_lookup, 0) == as_int(file.size) && sqlite3_column_int64(m_lookup, 1) == file.mtime_ns &&
            sqlite3_column_int64(m_lookup, 2) == file.ctime_ns && text(3) == m_version)
            out = text(4);
    } else if (rc != SQLITE_DONE && rc != SQLITE_BUSY) {
        lost(sqlite3_errmsg(m_db));
        return std::nullopt;
    }
    sqlite3_reset(m_lookup);
    return out;
}

void CacheDatabase::store(CacheKind kind, const FileStamp& file, std::string_view detail, std::string value) {
    std::lock_guard lock(m_mutex);
    if (!m_db) return;
    m_pending.push_back({kind, file, std::string(detail), std::move(value)});
    if (m_pending.size() >= kFlushEvery) flush_locked();
}

void CacheDatabase::flush() {
    std::lock_guard lock(m_mutex);
    flush_locked();
}

void CacheDatabase::flush_locked() {
    if (!m_db || m_pending.empty()) return;
    // BEGIN IMMEDIATE takes the write lock up front, so a busy database waits here (busy timeout)
    // rather than failing halfway through the transaction.
    if (sqlite3_exec(m_db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
        // Another writer held the database past the timeout: these answers are dropped, not wrong.
        m_pending.clear();
        return;
    }
    for (const Pending& p : m_pending) {
        sqlite3_reset(m_store);
        sqlite3_bind_int(m_store, 1, static_cast<int>(p.kind));
        sqlite3_bind_int64(m_store, 2, as_int(p.file.device));
        sqlite3_bind_int64(m_store, 3, as_int(p.file.inode));
        sqlite3_bind_text(m_store, 4, p.detail.data(), static_cast<int>(p.detail.size()), SQLITE_STATIC);
        sqlite3_bind_int64(m_store, 5, as_int(p.file.size));
        sqlite3_bind_int64(m_store, 6, p.file.mtime_ns);
        sqlite3_bind_int64(m_store, 7, p.file.ctime_ns);
        sqlite3_bind_text(m_store, 8, m_version.data(), static_cast<int>(m_version.size()), SQLITE_STATIC);
        sqlite3_bind_blob(m_store, 9, p.value.data(), static_cast<int>(p.value.size()), SQLITE_STATIC);
        if (sqlite3_step(m_store) != SQLITE_DONE) {
            const std::string why = sqlite3_errmsg(m_db);
            sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
            lost(why);
            return;
        }
    }
    sqlite3_reset(m_store);
    m_pending.clear();
    if (sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        const std::string why = sqlite3_errmsg(m_db);
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
        lost(why);
    }
}

std::vector<CacheKindCount> CacheDatabase::entry_counts() {
    std::lock_guard lock(m_mutex);
    flush_locked();
    std::vector<CacheKindCount> out;
    for (CacheKind kind : kCacheKinds) out.push_back({kind, 0});
    if (!m_db) return out;
    sqlite3_stmt* count = nullptr;
    if (sqlite3_prepare_v2(m_db, "SELECT kind, COUNT(*) FROM entries GROUP BY kind", -1, &count, nullptr) != SQLITE_OK) return out;
    while (sqlite3_step(count) == SQLITE_ROW)
        for (CacheKindCount& c : out)
            if (static_cast<int>(c.kind) == sqlite3_column_int(count, 0)) c.entries = static_cast<uint64_t>(sqlite3_column_int64(count, 1));
    sqlite3_finalize(count);
    return out;
}

uint64_t CacheDatabase::bytes() const {
    uint64_t total = 0;
    if (m_path.empty()) return 0;
    for (const char* suffix : {"", "-wal", "-shm"}) {
        struct stat st {};
        if (::stat((m_path + suffix).c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
    }
    return total;
}

Status CacheDatabase::clear() {
    std::lock_guard lock(m_mutex);
    m_pending.clear();
    if (!m_db) {
        // Nothing to clear when there is no database (--no-cache, or none made yet); one that
        // exists but could not be opened for writing keeps what it holds: that is no success.
        struct stat st {};
        if (m_path.empty() || ::stat(m_path.c_str(), &st) != 0) return ok_status();
        return Error{ErrorCode::E_PERMISSION, "", std::nullopt,
                     "cannot clear " + m_path + ": the database could not be opened for writing; nothing was removed from it"};
    }
    if (sqlite3_exec(m_db, "DELETE FROM entries", nullptr, nullptr, nullptr) != SQLITE_OK)
        return Error{ErrorCode::E_IO, "", std::nullopt, "cannot clear " + m_path + ": " + sqlite3_errmsg(m_db)};
    // Giving the space back is a courtesy: another process reading at the same time keeps it.
    sqlite3_exec(m_db, "VACUUM", nullptr, nullptr, nullptr);
    sqlite3_exec(m_db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    return ok_status();
}

}  // namespace mlens
