#include "mlens/remote/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr size_t kIdleHandlesPerOrigin = 4;
// A transfer slower than this for HttpOptions::stall_seconds has stalled: a trickle of a few
// bytes a second would otherwise hold a command for days.
constexpr long kStallBytesPerSecond = 1024;
// libcurl's timer may end a transfer this many milliseconds before the time limit's clock does.
constexpr long kTimeLimitSlackMs = 100;
// A network time limit this long or longer is none.
constexpr double kLongestTimeLimitSeconds = 365.0 * 24 * 3600;
// The longest wait a Retry-After may ask for before the next attempt.
constexpr long kMaxRetryAfterSeconds = 30;

thread_local JobContext* t_transfer_job = nullptr;

using Clock = std::chrono::steady_clock;

// The network time limit (set_network_time_limit): when it ends, and its length for messages.
struct TimeLimit {
    std::mutex mutex;
    std::optional<Clock::time_point> end;
    double seconds = 0;
};

TimeLimit& time_limit() {
    static TimeLimit limit;
    return limit;
}

}  // namespace

std::optional<long> network_time_left_ms() {
    TimeLimit& limit = time_limit();
    std::lock_guard lock(limit.mutex);
    if (!limit.end) return std::nullopt;
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(*limit.end - Clock::now()).count());
}

std::string network_time_limit_text() {
    double seconds = 0;
    {
        TimeLimit& limit = time_limit();
        std::lock_guard lock(limit.mutex);
        seconds = limit.seconds;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return "the network time limit of " + std::string(text) + " s ran out";
}

namespace {

std::atomic<uint64_t> g_requests{0};
std::atomic<uint64_t> g_bytes{0};

// Idle curl handles by origin: a handle keeps its connections alive, so the next request to the
// same origin reuses them.
class HandlePool {
public:
    ~HandlePool() {
        for (auto& [origin, handles] : m_idle)
            for (CURL* h : handles) curl_easy_cleanup(h);
    }
    CURL* take(const std::string& origin) {
        std::lock_guard lock(m_mutex);
        auto& handles = m_idle[origin];
        if (handles.empty()) return curl_easy_init();
        CURL* h = handles.back();
        handles.pop_back();
        curl_easy_reset(h);
        return h;
    }
    void give_back(const std::string& origin, CURL* h) {
        std::lock_guard lock(m_mutex);
        auto& handles = m_idle[origin];
        if (handles.size() < kIdleHandlesPerOrigin)
            handles.push_back(h);
        else
            curl_easy_cleanup(h);
    }

private:
    std::mutex m_mutex;
    std::map<std::string, std::vector<CURL*>> m_idle;
};

HandlePool& handle_pool() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    static HandlePool pool;
    return pool;
}

// One attempt's answer as it arrives.
struct Transfer {
    const HttpRequest* request = nullptr;
    JobContext* job = nullptr;
    long status = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<uint8_t> body;
    bool whole_file_answer = false;  // 200 to a ranged request: stopped at its first bytes
    bool too_large = false;
    bool body_unwanted = false;  // a redirect's or an error's body: stopped at its first bytes
};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
    return std::string(s);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    if (line.substr(0, 5) == "HTTP/") {
        // A new answer (after a 100 Continue, or a proxy's CONNECT): its headers start again.
        t->headers.clear();
        const size_t space = line.find(' ');
        t->status = space == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(space + 1, 3)).c_str(), nullptr, 10);
        return size * count;
    }
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos)
        t->headers.emplace_back(lower(std::string(line.substr(0, colon))), trimmed(line.substr(colon + 1)));
    return size * count;
}

// Whether the caller takes an answer of this status as it is (HttpRequest::accept_status).
bool accepts(const HttpRequest& request, long status) {
    return std::find(request.accept_status.begin(), request.accept_status.end(), status) != request.accept_status.end();
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    // A redirect's or an error's body is not wanted: the transfer stops at it (an endless or
    // oversized one then costs nothing), and the status is the answer.
    if (t->status >= 300 && !accepts(*t->request, t->status)) {
        t->body_unwanted = true;
        return 0;
    }
    if (t->request->range && t->status == 200) {
        t->whole_file_answer = true;
        return 0;
    }
    if (t->body.size() + n > t->request->max_body) {
        t->too_large = true;
        return 0;
    }
    t->body.insert(t->body.end(), data, data + n);
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return job_cancelled(static_cast<Transfer*>(user)->job) ? 1 : 0;
}

std::string header_of(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view name) {
    for (const auto& [key, value] : headers)
        if (key == name) return value;
    return {};
}

const char* reason_phrase(long status) {
    switch (status) {
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 410: return "Gone";
        case 416: return "Range Not Satisfiable";
        case 429: return "Too Many Requests";
        case 500: return "Internal Server Error";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        case 504: return "Gateway Timeout";
        default: return "";
    }
}

Error http_error(ErrorCode code, const std::string& url, const std::string& what) {
    return Error{code, "", std::nullopt, escape_for_display(display_url(url)) + ": " + what};
}

Error status_error(long status, const std::string& url) {
    std::string what = "HTTP " + std::to_string(status);
    if (*reason_phrase(status)) what += std::string(" ") + reason_phrase(status);
    return http_error(status == 404 || status == 410 ? ErrorCode::E_NOT_FOUND : ErrorCode::E_HTTP, url, what);
}

bool dropped_connection(CURLcode rc) {
    return rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_PARTIAL_FILE || rc == CURLE_GOT_NOTHING;
}

// A Content-Range value (RFC 9110 14.4): "bytes FIRST-LAST/TOTAL" or "bytes */TOTAL", each number
// decimal digits that fit 64 bits and FIRST <= LAST; nullopt for anything else (a total past
// 2^64 - 1 included, which a lenient parse would clamp to a size).
struct ContentRange {
    std::optional<std::pair<uint64_t, uint64_t>> span;  // FIRST, LAST; none for "*"
    uint64_t total = 0;
};

std::optional<ContentRange> parse_content_range(std::string_view value) {
    if (!value.starts_with("bytes ")) return std::nullopt;
    value.remove_prefix(6);
    auto number = [&value](uint64_t& out) {
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
        if (ec != std::errc() || end == value.data()) return false;
        value.remove_prefix(static_cast<size_t>(end - value.data()));
        return true;
    };
    ContentRange out;
    if (value.starts_with("*/")) {
        value.remove_prefix(2);
    } else {
        uint64_t first = 0, last = 0;
        if (!number(first) || !value.starts_with("-")) return std::nullopt;
        value.remove_prefix(1);
        if (!number(last) || !value.starts_with("/") || first > last) return std::nullopt;
        value.remove_prefix(1);
        out.span = std::make_pair(first, last);
    }
    if (!number(out.total) || !value.empty()) return std::nullopt;
    return out;
}

// What is wrong with the answer to a ranged request, as the error says it after "asked for bytes
// A-B, "; empty when it is a 206 of exactly that range (a range past the end of the file is
// answered up to its last byte) with as many body bytes.
std::string ranged_answer_problem(const Transfer& t, const ByteSpan& range) {
    if (t.status != 206) return "the server answered " + std::to_string(t.status);
    const std::string value = header_of(t.headers, "content-range");
    const std::string answered = "the server answered 206 with Content-Range \"" + escape_for_display(value, 80) + "\"";
    const std::optional<ContentRange> parsed = parse_content_range(value);
    if (!parsed || !parsed->span || parsed->total == 0) return answered;
    const auto [first, last] = *parsed->span;
    const uint64_t expected_last = std::min<uint64_t>(range.first + range.length - 1, parsed->total - 1);
    if (first != range.first || last != expected_last) return answered;
    if (t.body.size() == expected_last - first + 1) return {};
    const std::string encoding = header_of(t.headers, "content-encoding");
    return answered + " and " + std::to_string(t.body.size()) + " body bytes" +
        (encoding.empty() || encoding == "identity" ? std::string()
                                                     : " in Content-Encoding " + escape_for_display(encoding, 40) + ", never asked for");
}

// Whether the answer to a ranged request is a 416 that says the range starts at or past the end
// of the file: its Content-Range "bytes */LENGTH" (RFC 9110 14.4) names a length of at most the
// range's first byte (0 for an empty file).
bool range_past_end_answer(const Transfer& t, const ByteSpan& range) {
    if (t.status != 416) return false;
    const std::optional<ContentRange> parsed = parse_content_range(header_of(t.headers, "content-range"));
    return parsed && !parsed->span && range.first >= parsed->total;
}

// Where a redirect's Location (absolute, or relative to `url`) sends, by libcurl's URL parser;
// empty when there is none or it does not parse.
std::string resolved_location(const std::string& url, const std::string& location) {
    if (location.empty()) return {};
    CURLU* u = curl_url();
    if (!u) return {};
    std::string out;
    char* text = nullptr;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK && curl_url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_URL, &text, 0) == CURLUE_OK) {
        out = text;
        curl_free(text);
    }
    curl_url_cleanup(u);
    return out;
}

// The outcome of one attempt at one URL: an answer, a redirect to follow, or a failure that may
// be worth another attempt.
struct Attempt {
    std::optional<HttpResponse> response;
    std::string redirect;
    std::optional<Error> error;
    bool retry = false;
    int retry_after_ms = 0;  // the wait a 429 or 5xx answer asked for (Retry-After in seconds)
};

// A Retry-After of delay-seconds, in milliseconds, at most kMaxRetryAfterSeconds; 0 for none or
// an HTTP date (then the usual backoff applies).
int retry_after_ms(const std::string& value) {
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 6) return 0;
    return static_cast<int>(std::min<long>(std::stol(value), kMaxRetryAfterSeconds)) * 1000;
}

Attempt attempt(const HttpRequest& request, const std::string& url, const HttpOptions& options, JobContext* job) {
    auto parsed = parse_http_url(url);
    if (!parsed) return {std::nullopt, {}, parsed.error(), false};
    const std::optional<long> left_ms = network_time_left_ms();
    if (left_ms && *left_ms <= 0) return {std::nullopt, {}, http_error(ErrorCode::E_NETWORK, url, network_time_limit_text()), false};
    const std::string origin = parsed->origin();
    HandlePool& pool = handle_pool();
    CURL* h = pool.take(origin);
    if (!h) return {std::nullopt, {}, http_error(ErrorCode::E_NO_MEMORY, url, "cannot start a transfer"), false};
    Transfer t;
    t.request = &request;
    t.job = job;
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
    if (request.credential && request.credential->origin == origin)
        headers = curl_slist_append(headers, ("Authorization: " + request.credential->authorization).c_str());
    std::string range_text;
    if (request.range) range_text = std::to_string(request.range->first) + "-" + std::to_string(request.range->first + request.range->length - 1);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "modellens");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, options.connect_seconds);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, kStallBytesPerSecond);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, options.stall_seconds);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left_ms.value_or(0L));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (request.range) curl_easy_setopt(h, CURLOPT_RANGE, range_text.c_str());
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    g_requests.fetch_add(1, std::memory_order_relaxed);
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_WRITE_ERROR && t.body_unwanted) rc = CURLE_OK;  // stopped on purpose, after the headers
    Attempt a;
    if (rc == CURLE_OK && t.status >= 300 && t.status < 400) a.redirect = resolved_location(url, header_of(t.headers, "location"));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    curl_slist_free_all(headers);
    pool.give_back(origin, h);

    auto fail = [&a](Error e, bool retry = false) {
        a.error = std::move(e);
        a.retry = retry;
        return a;
    };
    const bool sent_if_range = !header_of(request.headers, "If-Range").empty();
    if (t.whole_file_answer || (rc == CURLE_OK && request.range && t.status == 200)) {
        if (sent_if_range) return fail(http_error(ErrorCode::E_REMOTE_CHANGED, url, "the file changed on the server since it was opened"));
        return fail(http_error(ErrorCode::E_NO_RANGE, url,
                               "the server ignores Range requests (it answered 200 with the whole file); the transfer was stopped at "
                               "its first bytes"));
    }
    if (t.too_large)
        return fail(http_error(ErrorCode::E_TOO_LARGE, url, "the answer is larger than the " + std::to_string(request.max_body) + " bytes expected"));
    if (rc == CURLE_ABORTED_BY_CALLBACK) return fail(cancelled_error("download"));
    if (rc == CURLE_OPERATION_TIMEDOUT && left_ms && network_time_left_ms().value_or(kTimeLimitSlackMs + 1) <= kTimeLimitSlackMs)
        return fail(http_error(ErrorCode::E_NETWORK, url, network_time_limit_text()));
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return fail(http_error(ErrorCode::E_NETWORK, url,
                               t.status ? "the transfer stalled (under 1 KiB/s for " + std::to_string(options.stall_seconds) + " s)"
                                        : std::string("timed out: ") + curl_easy_strerror(rc)));
    if (dropped_connection(rc)) return fail(http_error(ErrorCode::E_NETWORK, url, std::string("connection dropped: ") + curl_easy_strerror(rc)), true);
    if (rc != CURLE_OK) return fail(http_error(ErrorCode::E_NETWORK, url, curl_easy_strerror(rc)));
    if (!a.redirect.empty()) return a;
    if (t.status >= 500 || t.status == 429) {
        a.retry_after_ms = retry_after_ms(header_of(t.headers, "retry-after"));
        return fail(status_error(t.status, url), true);
    }
    const bool accepted = accepts(request, t.status) || (request.range && range_past_end_answer(t, *request.range));
    if (!accepted && (t.status < 200 || t.status >= 300)) return fail(status_error(t.status, url));
    if (request.range && !accepted)
        if (const std::string problem = ranged_answer_problem(t, *request.range); !problem.empty())
            return fail(http_error(ErrorCode::E_HTTP, url, "asked for bytes " + range_text + ", " + problem));
    HttpResponse response;
    response.status = t.status;
    response.url = url;
    response.headers = std::move(t.headers);
    response.body = std::move(t.body);
    a.response = std::move(response);
    return a;
}

long environment_number(const char* name, long fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return (*end == '\0' && n >= 0) ? n : fallback;
}

// Waits `ms` milliseconds, or less when the job is cancelled or the time limit ends meanwhile.
void back_off(int ms, JobContext* job) {
    const std::optional<long> left_ms = network_time_left_ms();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(left_ms ? std::min<long>(ms, std::max(0L, *left_ms)) : ms);
    while (std::chrono::steady_clock::now() < until && !job_cancelled(job)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

HttpOptions http_options_from_environment() {
    HttpOptions o;
    o.connect_seconds = environment_number("MLENS_HTTP_CONNECT_SECONDS", o.connect_seconds);
    o.stall_seconds = environment_number("MLENS_HTTP_STALL_SECONDS", o.stall_seconds);
    o.retries = static_cast<int>(environment_number("MLENS_HTTP_RETRIES", o.retries));
    o.retry_delay_ms = static_cast<int>(environment_number("MLENS_HTTP_RETRY_MS", o.retry_delay_ms));
    return o;
}

std::string HttpResponse::header(std::string_view name) const { return header_of(headers, name); }

std::optional<uint64_t> HttpResponse::content_range_total() const {
    const std::optional<ContentRange> parsed = parse_content_range(header("content-range"));
    if (!parsed) return std::nullopt;
    return parsed->total;
}

void set_network_time_limit(double seconds) {
    TimeLimit& limit = time_limit();
    std::lock_guard lock(limit.mutex);
    limit.seconds = seconds;
    // Past a year is no limit a run could meet (and far past it would not fit the clock).
    if (seconds > 0 && seconds < kLongestTimeLimitSeconds)
        limit.end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    else
        limit.end.reset();
}

ScopedTransferJob::ScopedTransferJob(JobContext* job) : m_previous(t_transfer_job) { t_transfer_job = job; }

ScopedTransferJob::~ScopedTransferJob() { t_transfer_job = m_previous; }

Result<HttpResponse> http_get(const HttpRequest& request, const HttpOptions& options, JobContext* job) {
    if (!job) job = t_transfer_job;
    std::string url = request.url;
    int redirects = 0;
    int retries_left = options.retries;
    int delay_ms = options.retry_delay_ms;
    for (;;) {
        if (job_cancelled(job)) return cancelled_error("download");
        Attempt a = attempt(request, url, options, job);
        if (a.response) return std::move(*a.response);
        if (!a.redirect.empty()) {
            if (++redirects > options.max_redirects)
                return http_error(ErrorCode::E_HTTP, request.url, "more than " + std::to_string(options.max_redirects) + " redirects");
            // Only http:// and https:// are followed: a redirect elsewhere (file://, ftp://) is the
            // server's answer, named as one (the target as display_url shows it).
            if (auto target = parse_http_url(a.redirect); !target)
                return http_error(ErrorCode::E_HTTP, url, "redirected to " + target.error().message + "; not followed");
            url = a.redirect;
            continue;
        }
        if (!a.retry || retries_left-- <= 0) return *a.error;
        back_off(std::max(delay_ms, a.retry_after_ms), job);
        delay_ms *= 2;
    }
}

bool is_transport_failure(const Error& error) { return error.code == ErrorCode::E_NETWORK || error.code == ErrorCode::E_HTTP; }

void TransferBatch::note(const Error& error) {
    if (!m_failure && is_transport_failure(error)) m_failure = error;
}

std::optional<Error> TransferBatch::skipped() const {
    if (!m_failure) return std::nullopt;
    return Error{m_failure->code, "", std::nullopt, "not fetched after an earlier " + m_item + " failed: " + m_failure->message};
}

HttpTotals http_totals() { return {g_requests.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)}; }

}  // namespace mlens
