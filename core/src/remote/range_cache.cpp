#include "mlens/remote/range_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "folder_lock.h"
#include "mlens/io/byte_source.h"
#include "mlens/io/cache_database.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/io/text_file.h"

namespace mlens {

std::string fnv_hex(std::string_view text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

namespace {

struct CacheWarnings {
    std::mutex mutex;
    std::vector<std::string> texts;
    size_t taken = 0;
};

CacheWarnings& cache_warnings() {
    static CacheWarnings warnings;
    return warnings;
}

void warn(const std::string& text) {
    CacheWarnings& w = cache_warnings();
    std::lock_guard lock(w.mutex);
    if (std::find(w.texts.begin(), w.texts.end(), text) == w.texts.end()) w.texts.push_back(text);
}

namespace fs = std::filesystem;

constexpr uint64_t kDefaultMaxBytes = 4ull << 30;

std::string url_key(const std::string& url) { return fnv_hex(url); }

std::string version_key(uint64_t size, const std::string& validator) { return fnv_hex(std::to_string(size) + "\n" + validator); }

std::string entry_text(const std::string& url, uint64_t size, const std::string& validator) {
    return url + "\n" + std::to_string(size) + "\n" + validator + "\n";
}

// The text of the "entry" file in `folder`; nullopt when there is none.
// An entry file is three short lines; anything longer was not written by entry_text.
constexpr uint64_t kMaxEntryFileBytes = 1u << 20;

std::optional<std::string> stored_entry_text(const std::string& folder) {
    Result<std::string> text = read_text_file(folder + "/entry", kMaxEntryFileBytes);
    if (!text) return std::nullopt;
    return std::move(text).value();
}

// The URL, size and validator an entry_text names; nullopt for any other text.
std::optional<CacheEntryInfo> parse_entry_text(const std::string& text) {
    const size_t url_end = text.find('\n');
    const size_t size_end = url_end == std::string::npos ? url_end : text.find('\n', url_end + 1);
    const size_t validator_end = size_end == std::string::npos ? size_end : text.find('\n', size_end + 1);
    if (validator_end == std::string::npos || validator_end + 1 != text.size()) return std::nullopt;
    CacheEntryInfo info;
    info.url = text.substr(0, url_end);
    const char* size_first = text.data() + url_end + 1;
    const char* size_last = text.data() + size_end;
    if (size_first == size_last || std::from_chars(size_first, size_last, info.size).ptr != size_last) return std::nullopt;
    info.validator = text.substr(size_end + 1, validator_end - size_end - 1);
    return info;
}

bool names_url(const std::string& text, const std::string& url) {
    const std::optional<CacheEntryInfo> info = parse_entry_text(text);
    return info && info->url == url;
}

std::optional<StoredRange> range_of_name(const std::string& name) {
    unsigned long long first = 0, length = 0;
    char tail = 0;
    if (std::sscanf(name.c_str(), "%llu-%llu%c", &first, &length, &tail) != 2 || length == 0) return std::nullopt;
    if (name != std::to_string(first) + "-" + std::to_string(length)) return std::nullopt;
    return StoredRange{first, length};
}

std::vector<StoredRange> ranges_in(const std::string& folder) {
    std::vector<StoredRange> out;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        if (auto r = range_of_name(it->path().filename().string()); r && it->symlink_status(ec).type() == fs::file_type::regular) out.push_back(*r);
    std::sort(out.begin(), out.end(), [](const StoredRange& a, const StoredRange& b) { return a.first < b.first; });
    return out;
}

Status write_file(const std::string& path, const void* data, uint64_t length) {
    OutputGuard guard;
    auto writer = SafeFileWriter::create(path, guard);
    if (!writer) return writer.error();
    if (Status s = writer->write(data, length); !s) return s;
    return writer->commit();
}

void touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

// Whether `name` is what an entry folder is called (url_key "-" version_key: 16 lower-case hex
// digits, a dash, 16 more).
bool is_entry_name(const std::string& name) {
    if (name.size() != 33 || name[16] != '-') return false;
    for (size_t i = 0; i < name.size(); ++i)
        if (i != 16 && !((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
    return true;
}

// Whether `item` is a folder of the cache's own: named as an entry is, a folder and not a link to one.
bool is_entry_folder(const fs::directory_entry& item) {
    std::error_code ec;
    return is_entry_name(item.path().filename().string()) && item.symlink_status(ec).type() == fs::file_type::directory;
}

// The temporaries of the cache's own in an entry folder whose writing process is gone (a run
// killed while it stored an entry file or a range): SafeFileWriter's files of a target named
// "entry" or as a range is. A live writer's are not among them.
std::vector<StaleTemporary> stale_temporaries_in(const std::string& folder) {
    std::vector<StaleTemporary> out = stale_temporaries(folder);
    std::erase_if(out, [](const StaleTemporary& s) {
        return s.temp.kind != TempKind::writer_file || (s.temp.target != "entry" && !range_of_name(s.temp.target));
    });
    return out;
}

Status remove_stale_temporaries(const std::string& folder) {
    std::error_code ec;
    for (const StaleTemporary& stale : stale_temporaries_in(folder))
        if (!fs::remove(folder + "/" + stale.name, ec) && ec)
            return Error{ErrorCode::E_IO, "", std::nullopt, "cannot remove " + folder + "/" + stale.name + ": " + ec.message()};
    return ok_status();
}

// Removes what the cache wrote in an entry folder (its entry file, range files and the
// temporaries of writers that are gone), then the folder if that leaves it empty. Nothing else in
// it is touched, and no link is followed: a folder that is not the cache's own keeps what it holds.
Status remove_entry_folder(const std::string& folder) {
    std::error_code ec;
    for (const StoredRange& r : ranges_in(folder))
        if (!fs::remove(folder + "/" + std::to_string(r.first) + "-" + std::to_string(r.length), ec) && ec)
            return Error{ErrorCode::E_IO, "", std::nullopt, "cannot remove a range of " + folder + ": " + ec.message()};
    if (Status s = remove_stale_temporaries(folder); !s) return s;
    if (fs::symlink_status(folder + "/entry", ec).type() == fs::file_type::regular && !fs::remove(folder + "/entry", ec) && ec)
        return Error{ErrorCode::E_IO, "", std::nullopt, "cannot remove " + folder + "/entry: " + ec.message()};
    if (fs::is_empty(folder, ec)) fs::remove(folder, ec);
    return ok_status();
}

// A folder of the cache's own: an entry, or what is left of one without its "entry" file.
struct EntryFolder {
    std::string path;
    std::optional<CacheEntryInfo> info;  // nullopt: no "entry" file
    uint64_t leftover_bytes = 0;  // stale temporaries, and the range files of a folder without an "entry" file
    int64_t used = 0;
};

// The entry folders, and the entry-named folders that have no "entry" file; a folder whose
// "entry" file is not one the cache writes is not the cache's own and is left out.
std::vector<EntryFolder> entry_folders(const std::string& folder) {
    std::vector<EntryFolder> out;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        if (!is_entry_folder(*it)) continue;
        EntryFolder e;
        e.path = it->path().string();
        std::error_code status_ec;
        if (fs::symlink_status(e.path + "/entry", status_ec).type() != fs::file_type::not_found) {
            const std::optional<std::string> text = stored_entry_text(e.path);
            e.info = text ? parse_entry_text(*text) : std::nullopt;
            if (!e.info) continue;
        }
        for (const StoredRange& r : ranges_in(e.path)) {
            if (!e.info) {
                e.leftover_bytes += r.length;
                continue;
            }
            ++e.info->ranges;
            e.info->bytes += r.length;
        }
        for (const StaleTemporary& stale : stale_temporaries_in(e.path)) e.leftover_bytes += stale.bytes;
        struct stat st {};
        if (::stat((e.path + "/entry").c_str(), &st) == 0) e.used = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
        out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const EntryFolder& a, const EntryFolder& b) {
        return (a.info ? a.info->url : std::string()) < (b.info ? b.info->url : std::string());
    });
    return out;
}

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

std::string default_cache_folder() { return default_cache_root() + "/http"; }

uint64_t default_cache_max_bytes() {
    const std::string v = environment("MLENS_HTTP_CACHE_BYTES");
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return kDefaultMaxBytes;
    return std::strtoull(v.c_str(), nullptr, 10);
}

std::optional<StoredRange> CacheEntry::range_at(uint64_t offset) const {
    auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), offset, [](uint64_t o, const StoredRange& r) { return o < r.first; });
    if (it == m_ranges.begin()) return std::nullopt;
    --it;
    if (offset - it->first < it->length) return *it;
    return std::nullopt;
}

std::optional<StoredRange> CacheEntry::range_after(uint64_t offset) const {
    auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), offset, [](uint64_t o, const StoredRange& r) { return o < r.first; });
    if (it == m_ranges.end()) return std::nullopt;
    return *it;
}

bool CacheEntry::holds_own_entry() const { return stored_entry_text(m_folder) == m_text; }

bool CacheEntry::read(const StoredRange& range, uint64_t offset, uint64_t length, void* dst) const {
    if (!holds_own_entry()) return false;
    auto source = open_file(m_folder + "/" + std::to_string(range.first) + "-" + std::to_string(range.length));
    if (!source || (*source)->size() != range.length) return false;
    return (*source)->read(offset - range.first, length, dst);
}

Status CacheEntry::store(uint64_t first, const std::vector<uint8_t>& bytes) {
    if (bytes.empty()) return ok_status();
    {
        FolderLock lock(m_cache->folder(), LockWait::may_pass_by);
        if (lock.timed_out()) {
            warn(lock.timed_out_text() + "; remote ranges are not kept");
            return Error{ErrorCode::E_BUSY, "", std::nullopt, lock.timed_out_text()};
        }
        if (!holds_own_entry()) return Error{ErrorCode::E_IO, "", std::nullopt, "the cache entry was removed"};
        if (Status s = write_file(m_folder + "/" + std::to_string(first) + "-" + std::to_string(bytes.size()), bytes.data(), bytes.size()); !s) {
            warn("a range cannot be stored in " + m_cache->folder() + " (" + s.error().message + "); it is fetched again when read again");
            return s;
        }
        touch(m_folder + "/entry");
    }
    StoredRange r{first, bytes.size()};
    m_ranges.insert(std::upper_bound(m_ranges.begin(), m_ranges.end(), r, [](const StoredRange& a, const StoredRange& b) { return a.first < b.first; }), r);
    m_cache->evict();
    return ok_status();
}

namespace {
std::atomic<bool> g_range_cache_enabled{true};

}  // namespace

std::vector<std::string> take_range_cache_warnings() {
    CacheWarnings& w = cache_warnings();
    std::lock_guard lock(w.mutex);
    std::vector<std::string> out(w.texts.begin() + static_cast<std::ptrdiff_t>(w.taken), w.texts.end());
    w.taken = w.texts.size();
    return out;
}

void set_range_cache_enabled(bool enabled) { g_range_cache_enabled.store(enabled); }
bool range_cache_enabled() { return g_range_cache_enabled.load(); }

std::shared_ptr<RangeCache> RangeCache::open(std::string folder, uint64_t max_bytes) {
    return std::shared_ptr<RangeCache>(new RangeCache(std::move(folder), max_bytes));
}

bool RangeCache::has_url(const std::string& url) const {
    const std::string prefix = url_key(url) + "-";
    std::error_code ec;
    for (fs::directory_iterator it(m_folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        if (it->path().filename().string().rfind(prefix, 0) != 0) continue;
        if (const std::optional<std::string> text = stored_entry_text(it->path().string()); text && names_url(*text, url)) return true;
    }
    return false;
}

void RangeCache::remove_versions(const std::string& url, const std::string& keep) {
    const std::string prefix = url_key(url) + "-";
    std::error_code ec;
    std::vector<fs::path> doomed;
    for (fs::directory_iterator it(m_folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string other = it->path().filename().string();
        if (other.rfind(prefix, 0) != 0 || other == keep || !is_entry_folder(*it)) continue;
        if (const std::optional<std::string> text = stored_entry_text(it->path().string()); !text || names_url(*text, url))
            doomed.push_back(it->path());
    }
    for (const fs::path& p : doomed) (void)remove_entry_folder(p.string());
}

void RangeCache::forget(const std::string& url) {
    std::error_code ec;
    if (!fs::is_directory(m_folder, ec)) return;
    FolderLock lock(m_folder, LockWait::may_pass_by);
    if (lock.timed_out()) {
        warn(lock.timed_out_text() + "; ranges that proved wrong stay stored (mlens cache --clear removes them)");
        return;
    }
    remove_versions(url, "");
}

std::optional<CacheEntry> RangeCache::open_entry(const std::string& url, uint64_t size, const std::string& validator) {
    if (validator.empty()) return std::nullopt;
    std::error_code ec;
    fs::create_directories(m_folder, ec);
    if (ec || !fs::is_directory(m_folder, ec)) {
        warn("the cache folder " + m_folder + " cannot be made (" + (ec ? ec.message() : std::string("a file is in its place")) +
             "); remote ranges are not kept");
        return std::nullopt;
    }
    FolderLock lock(m_folder, LockWait::may_pass_by);
    if (lock.timed_out()) {
        warn(lock.timed_out_text() + "; remote ranges are not kept");
        return std::nullopt;
    }
    const std::string name = url_key(url) + "-" + version_key(size, validator);
    remove_versions(url, name);
    CacheEntry entry;
    entry.m_cache = shared_from_this();
    entry.m_folder = m_folder + "/" + name;
    entry.m_text = entry_text(url, size, validator);
    fs::create_directories(entry.m_folder, ec);
    if (ec) {
        warn("a cache entry cannot be made in " + m_folder + " (" + ec.message() + "); remote ranges are not kept");
        return std::nullopt;
    }
    const std::optional<std::string> stored = stored_entry_text(entry.m_folder);
    // Another file's entry under the same name (URLs, sizes or validators of one digest): a miss, left to it.
    if (stored && *stored != entry.m_text) return std::nullopt;
    if (!stored)
        if (Status s = write_file(entry.m_folder + "/entry", entry.m_text.data(), entry.m_text.size()); !s) {
            warn("a cache entry cannot be written in " + m_folder + " (" + s.error().message + "); remote ranges are not kept");
            return std::nullopt;
        }
    touch(entry.m_folder + "/entry");
    entry.m_ranges = ranges_in(entry.m_folder);
    return entry;
}

std::string RangeCache::unusable_reason() const {
    std::error_code ec;
    const fs::file_status status = fs::status(m_folder, ec);
    if (!fs::exists(status) || fs::is_directory(status)) return {};
    return "the cache folder " + m_folder + " cannot be made (a file is in its place); remote ranges are not kept";
}

RangeCache::Contents RangeCache::contents() const {
    Contents out;
    for (EntryFolder& e : entry_folders(m_folder)) {
        out.leftover_bytes += e.leftover_bytes;
        if (e.info) out.entries.push_back(std::move(*e.info));
    }
    return out;
}

Status RangeCache::clear() {
    std::error_code ec;
    if (!fs::is_directory(m_folder, ec)) return ok_status();
    FolderLock lock(m_folder, LockWait::while_held);
    if (lock.timed_out()) return Error{ErrorCode::E_BUSY, "", std::nullopt, lock.timed_out_text()};
    for (const EntryFolder& e : entry_folders(m_folder))
        if (Status s = remove_entry_folder(e.path); !s) return s;
    return ok_status();
}

void RangeCache::evict() {
    FolderLock lock(m_folder, LockWait::may_pass_by);
    if (lock.timed_out()) {
        warn(lock.timed_out_text() + "; the cache is brought back within its bound by a later run");
        return;
    }
    std::vector<EntryFolder> entries;
    uint64_t total = 0;
    // What no entry lists serves no read: it goes first, whatever the bound.
    for (EntryFolder& e : entry_folders(m_folder)) {
        if (!e.info) {
            (void)remove_entry_folder(e.path);
            continue;
        }
        if (e.leftover_bytes) (void)remove_stale_temporaries(e.path);
        total += e.info->bytes;
        entries.push_back(std::move(e));
    }
    std::sort(entries.begin(), entries.end(), [](const EntryFolder& a, const EntryFolder& b) { return a.used < b.used; });
    for (const EntryFolder& e : entries) {
        if (total <= m_max_bytes) break;
        (void)remove_entry_folder(e.path);
        total -= e.info->bytes;
    }
}

}  // namespace mlens
