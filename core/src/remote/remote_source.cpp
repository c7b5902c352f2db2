#include "mlens/remote/remote_source.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include "held_ranges.h"
#include "mlens/remote/range_cache.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

std::atomic<uint64_t> g_budget{0};  // 0: no limit
std::atomic<uint64_t> g_fetched_since_budget{0};

// Takes `bytes` from the download budget; false (nothing taken) when they do not fit.
bool take_from_budget(uint64_t bytes, std::string& why) {
    const uint64_t budget = g_budget.load();
    if (budget == 0) return true;
    const uint64_t before = g_fetched_since_budget.fetch_add(bytes);
    if (before + bytes <= budget) return true;
    g_fetched_since_budget.fetch_sub(bytes);
    why = "fetching " + std::to_string(bytes) + " more bytes would pass the download limit of " + std::to_string(budget) +
          " bytes (" + std::to_string(before) + " fetched)";
    return false;
}

// Gives back to the budget bytes taken for a request and not received.
void return_to_budget(uint64_t bytes) {
    if (g_budget.load() != 0) g_fetched_since_budget.fetch_sub(bytes);
}

// What the budget still allows; UINT64_MAX without a budget.
uint64_t budget_left() {
    const uint64_t budget = g_budget.load();
    if (budget == 0) return UINT64_MAX;
    const uint64_t fetched = g_fetched_since_budget.load();
    return fetched < budget ? budget - fetched : 0;
}

// The name a URL's ranges are kept under (range_cache.h): display_url, plus for a URL with a
// query a digest of it (FNV-1a 64): two queries may be two files, and the query itself, which may
// carry a token, is not kept.
std::string cache_name(const std::string& url) {
    const size_t start = url.find('?');
    if (start == std::string::npos) return display_url(url);
    const size_t end = std::min(url.find('#', start), url.size());
    return display_url(url) + "?query-" + fnv_hex(std::string_view(url).substr(start + 1, end - start - 1));
}

// The version a response names: its strong ETag, else its Last-Modified ("" without either).
std::string validator_of(const HttpResponse& r) {
    std::string etag = r.header("etag");
    if (!etag.empty() && etag.rfind("W/", 0) != 0) return etag;
    return r.header("last-modified");
}

// The ETag of an answer when it is weak ("W/..."), else "": never a validator, but a change of it
// is a change of the file.
std::string weak_etag_of(const HttpResponse& r) {
    std::string etag = r.header("etag");
    return etag.rfind("W/", 0) == 0 ? etag : std::string();
}

// Whether that version may be stored: not for a file modified in the second its answer was made
// (Last-Modified not a whole second before Date, or no Date to tell): such a date is weak (RFC 9110
// 8.8.2.2), and an ETag made from the same clock (nginx's "<mtime>-<size>") would name a change
// later in that second the same.
bool storable_version(const HttpResponse& r) {
    const std::string modified = r.header("last-modified");
    if (modified.empty()) return true;
    const time_t at = curl_getdate(modified.c_str(), nullptr), date = curl_getdate(r.header("date").c_str(), nullptr);
    return at != -1 && date != -1 && date - at >= 1;
}

class RemoteSource final : public ByteSource {
public:
    RemoteSource(std::string url, const RemoteOptions& options, uint64_t size, std::string validator, std::string weak_etag,
                 std::optional<CacheEntry> entry, std::vector<uint8_t> first)
        : ByteSource(display_url(url), size),
          m_url(std::move(url)),
          m_options(options),
          m_validator(std::move(validator)),
          m_weak_etag(std::move(weak_etag)),
          m_entry(std::move(entry)) {
        m_run_end = first.size();
        m_run_bytes = first.size();
        if (!first.empty()) {
            if (m_entry) (void)m_entry->store(0, first);
            // Under the lock: from its construction, another source's read may drop ranges here.
            std::lock_guard lock(m_mutex);
            m_held.hold(0, std::move(first));
        }
    }

    bool read(uint64_t offset, uint64_t length, void* dst) const override { return read_bounded(offset, length, dst, std::nullopt); }

    bool read_ahead(uint64_t offset, uint64_t length, void* dst, uint64_t ahead_end) const override {
        return read_bounded(offset, length, dst, ahead_end);
    }

    std::string read_failure() const override {
        std::lock_guard lock(m_mutex);
        return m_failure;
    }

    std::string reference_query() const override { return url_query(m_url); }

private:
    bool read_bounded(uint64_t offset, uint64_t length, void* dst, std::optional<uint64_t> ahead_end) const {
        if (!contains(offset, length)) return false;
        std::lock_guard lock(m_mutex);
        const uint64_t end = offset + length;
        for (uint64_t pos = offset; pos < end;) {
            if (const uint64_t held_end = m_held.end_of_range_at(pos)) {
                pos = held_end;
                continue;
            }
            // A gap from pos to the next held range (or the read's end): fetch it and what the
            // read-ahead rule adds, up to the next held range.
            uint64_t limit = std::min(size(), m_held.next_start(pos));
            if (load_stored(pos, limit)) continue;
            if (m_entry)
                if (auto stored = m_entry->range_after(pos)) limit = std::min(limit, stored->first);
            const uint64_t needed = std::min(end, limit) - pos;
            uint64_t want = 0;
            if (ahead_end)
                want = *ahead_end > pos ? *ahead_end - pos : needed;
            else
                want = pos == m_run_end && m_run_bytes > 0 ? 3 * m_run_bytes : kFirstFetchBytes;
            // Read-ahead never spends the download budget that what is asked for needs.
            want = std::min({std::max(want, needed), limit - pos, std::max(budget_left(), needed)});
            // Read-ahead stops at the end of the first request; what was asked for is fetched whole.
            const uint64_t n = std::max(needed, std::min(want, kMaxFetchBytes));
            if (m_fetching_ended) return false;
            if (!fetch(pos, n)) return false;
            pos += n;
        }
        m_held.copy_out(offset, length, static_cast<uint8_t*>(dst));
        m_held.settle();
        return true;
    }

    // Holds what the cache stores from pos on (up to limit); false when it stores nothing there.
    bool load_stored(uint64_t pos, uint64_t limit) const {
        if (!m_entry) return false;
        auto stored = m_entry->range_at(pos);
        if (!stored) return false;
        std::vector<uint8_t> bytes(std::min(stored->first + stored->length, limit) - pos);
        if (!m_entry->read(*stored, pos, bytes.size(), bytes.data())) return false;
        m_held.hold(pos, std::move(bytes));
        return true;
    }

    // Fetches [pos, pos+n) in requests of at most kMaxFetchBytes.
    bool fetch(uint64_t pos, uint64_t n) const {
        for (uint64_t done = 0; done < n;) {
            const uint64_t part = std::min(n - done, kMaxFetchBytes);
            if (!fetch_one(pos + done, part)) return false;
            done += part;
        }
        return true;
    }

    bool fetch_one(uint64_t pos, uint64_t length) const {
        std::string why;
        if (!take_from_budget(length, why)) return failed(Error{ErrorCode::E_DOWNLOAD_LIMIT, "", pos, why});
        HttpRequest request;
        request.url = m_url;
        request.range = ByteSpan{pos, length};
        request.max_body = length;
        request.credential = m_options.credential;
        if (!m_validator.empty()) request.headers.emplace_back("If-Range", m_validator);
        auto response = http_get(request, m_options.http);
        if (!response) return failed(response.error());
        const std::string validator = validator_of(*response);
        const auto total = response->content_range_total();
        // An answer without the validator the file was opened with cannot be told to be of the
        // same version (a server that drops its ETag may serve another file): it is not used. Nor
        // is one of another size, or of another weak ETag than a file opened with one had: for a
        // file opened without a validator, the checks there are.
        const std::string etag = response->header("etag");
        const bool weak_etag_changed = !m_weak_etag.empty() && !etag.empty() && etag != m_weak_etag;
        if (validator != m_validator || weak_etag_changed || !total || *total != size())
            return failed(Error{ErrorCode::E_REMOTE_CHANGED, "", pos,
                                escape_for_display(path()) + ": the file changed on the server since it was opened"});
        m_run_bytes = pos == m_run_end ? m_run_bytes + length : length;
        m_run_end = pos + length;
        if (m_entry) (void)m_entry->store(pos, response->body);
        m_held.hold(pos, std::move(response->body));
        return true;
    }

    bool failed(const Error& e) const {
        m_failure = code_name(e.code);
        m_failure += ": " + e.message;
        m_fetching_ended = e.code != ErrorCode::E_CANCELLED;
        return false;
    }

    const std::string m_url;
    const RemoteOptions m_options;
    const std::string m_validator;
    const std::string m_weak_etag;  // the open's ETag when it was weak ("W/..."), else ""
    mutable std::optional<CacheEntry> m_entry;  // where fetched ranges are kept; nullopt: no cache
    mutable std::mutex m_mutex;
    mutable HeldRanges m_held{m_mutex};  // under m_mutex
    mutable uint64_t m_run_end = 0;  // where the last fetch ended
    mutable uint64_t m_run_bytes = 0;  // what the run of fetches ending there fetched
    mutable std::string m_failure;
    mutable bool m_fetching_ended = false;  // a fetch failed (not by cancellation): m_failure says how
};

}  // namespace

namespace {

// The answer to the first bytes of `url`: `length` of them from 0, checked for a Content-Range.
Result<HttpResponse> fetch_head(const std::string& url, const RemoteOptions& options, uint64_t length, JobContext* job) {
    std::string why;
    length = std::max<uint64_t>(1, std::min(length, budget_left()));
    if (!take_from_budget(length, why)) return Error{ErrorCode::E_DOWNLOAD_LIMIT, "", std::nullopt, why};
    HttpRequest request;
    request.url = url;
    request.range = ByteSpan{0, length};
    request.max_body = length;
    request.credential = options.credential;
    auto response = http_get(request, options.http, job);
    // A file shorter than the request sent less than was taken from the budget.
    if (response && response->body.size() < length) return_to_budget(length - response->body.size());
    if (response && !response->content_range_total())
        return Error{ErrorCode::E_HTTP, "", std::nullopt, escape_for_display(display_url(url)) + ": the answer has no Content-Range with the file's size"};
    return response;
}

}  // namespace

Result<ByteSourcePtr> open_remote(const std::string& url, const RemoteOptions& options, JobContext* job) {
    const std::string shown = cache_name(url);
    if (options.cache && options.cache->has_url(shown)) {
        // One byte tells the current version; when it is stored, or the file is empty, nothing else
        // is fetched now.
        auto check = fetch_head(url, options, 1, job);
        if (!check) return check.error();
        const uint64_t size = *check->content_range_total();
        const std::string validator = validator_of(*check);
        auto entry = options.cache->open_entry(shown, size, storable_version(*check) ? validator : "");
        if (size == 0 || (entry && entry->range_at(0)))
            return ByteSourcePtr(std::make_shared<RemoteSource>(url, options, size, validator, weak_etag_of(*check), std::move(entry),
                                                                 std::vector<uint8_t>{}));
    }
    auto response = fetch_head(url, options, kFirstFetchBytes, job);
    if (!response) return response.error();
    const uint64_t size = *response->content_range_total();
    const std::string validator = validator_of(*response);
    std::optional<CacheEntry> entry =
        options.cache ? options.cache->open_entry(shown, size, storable_version(*response) ? validator : "") : std::nullopt;
    return ByteSourcePtr(std::make_shared<RemoteSource>(url, options, size, validator, weak_etag_of(*response), std::move(entry),
                                                         std::move(response->body)));
}

uint64_t download_budget() { return g_budget.load(); }

uint64_t download_budget_left() { return budget_left(); }

void set_download_budget(uint64_t bytes) {
    g_budget.store(bytes);
    g_fetched_since_budget.store(0);
}

}  // namespace mlens
