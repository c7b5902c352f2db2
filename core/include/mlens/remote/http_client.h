// HTTP GET through libcurl: the one way ModelLens reads anything over the network.
//
// Contract:
//  - TLS is verified against the system's certificate store (libcurl's defaults, never turned
//    off). Proxies: libcurl honours HTTPS_PROXY/HTTP_PROXY/ALL_PROXY and NO_PROXY from the
//    environment by default, and nothing here changes that.
//  - Connections are kept alive: curl handles are kept per origin (at most four idle ones each)
//    and reused by the next request to that origin.
//  - Redirects are followed by hand, at most HttpOptions::max_redirects (E_HTTP past that), so
//    that the credential (remote_url.h) goes only with a request whose origin is the
//    credential's: a redirect to another origin is requested without it. A redirect to anything
//    but http:// or https:// (file://, ftp://) is not followed: E_HTTP "redirected to TARGET: why;
//    not followed".
//  - Timeouts: connecting may take HttpOptions::connect_seconds; a transfer slower than 1 KiB
//    per second for HttpOptions::stall_seconds is stopped (E_NETWORK, "stalled"). Neither is
//    retried: each already cost its whole time.
//  - Time limit: set_network_time_limit(seconds) (0, the default, or a year or more: none) bounds all the process's
//    transfers together, from the call on: each attempt may take only the time left (libcurl's
//    CURLOPT_TIMEOUT_MS), a retry never waits past it, and no request is sent after it. A transfer
//    it stops, and any asked for after it, is E_NETWORK "the network time limit of N s ran out"
//    (never retried, and a transport failure, so the rest of a batch is not asked for either).
//  - Retries: a 5xx or 429 answer or a connection dropped before the body was whole (libcurl's
//    receive/send errors, partial file, empty reply) is tried again up to HttpOptions::retries
//    times, waiting retry_delay_ms, then twice that, and so on, or the Retry-After seconds the
//    answer asked for when longer (at most 30). The last failure is the error.
//  - The body of a redirect or of an error answer is never read: the transfer stops at its
//    headers, and the status is the answer (an endless or oversized error page costs nothing).
//  - A ranged request (HttpRequest::range) accepts only 206 with a Content-Range of exactly that
//    range; an answer of 200 is a server that ignores Range (or, when If-Range was sent and the
//    validator differs, a file that changed): its transfer is stopped from the write callback at
//    its first body bytes, so at most one receive buffer (< 1 MiB) of it is read; the error is
//    E_NO_RANGE (or E_REMOTE_CHANGED). Any body is capped at HttpRequest::max_body bytes
//    (E_TOO_LARGE past it); the body grows only as bytes arrive, never from Content-Length.
//  - A range that starts at or past the end of the file has nothing to send: a 416 whose
//    Content-Range "bytes */LENGTH" says so (LENGTH at most the range's first byte; 0 for an empty
//    file) is handed back as the answer (status 416, no body, content_range_total() LENGTH), never
//    an error. Any other 416 is E_HTTP, as below.
//  - 4xx answers are E_HTTP ("HTTP 404 Not Found"), E_NOT_FOUND for 404 and 410; except when
//    HttpRequest::accept_status lists the status (the registry's 401 challenge).
//  - A job that is cancelled stops the transfer from the progress callback (E_CANCELLED).
//  - Messages name URLs only through display_url: no credential, no query, ever.
//  - http_totals() counts the requests sent and body bytes received by this process (the CLI's
//    progress line and the app's status bar show them); thread-safe.
//  - Options for tests: http_options_from_environment reads MLENS_HTTP_CONNECT_SECONDS,
//    MLENS_HTTP_STALL_SECONDS, MLENS_HTTP_RETRIES and MLENS_HTTP_RETRY_MS (whole numbers) over the
//    defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlens/job.h"
#include "mlens/remote/remote_url.h"
#include "mlens/result.h"

namespace mlens {

struct HttpOptions {
    long connect_seconds = 15;
    long stall_seconds = 30;
    int retries = 3;
    int retry_delay_ms = 250;
    int max_redirects = 5;
};

HttpOptions http_options_from_environment();

struct ByteSpan {
    uint64_t first = 0;
    uint64_t length = 0;  // > 0
};

struct HttpRequest {
    std::string url;
    std::optional<ByteSpan> range;
    std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Accept, If-Range
    std::optional<Credential> credential;
    uint64_t max_body = 0;  // the most body bytes accepted; a ranged request's is its length
    std::vector<long> accept_status;  // non-2xx statuses handed back instead of failing
};

struct HttpResponse {
    long status = 0;
    std::string url;  // the URL that answered, after redirects
    std::vector<std::pair<std::string, std::string>> headers;  // of the final answer; names in lower case
    std::vector<uint8_t> body;
    // The value of the header `name` (lower case), empty when absent.
    std::string header(std::string_view name) const;
    // The total size a Content-Range "bytes A-B/TOTAL" or "bytes */TOTAL" names; nullopt without
    // one, or for one that is not exactly that (a number past 2^64 - 1, A > B, anything more).
    std::optional<uint64_t> content_range_total() const;
};

Result<HttpResponse> http_get(const HttpRequest& request, const HttpOptions& options, JobContext* job = nullptr);

// Bounds this process's network transfers to `seconds` from now (0: no bound); see the contract.
void set_network_time_limit(double seconds);
// Milliseconds left before the time limit runs out (0 or less once it has); nullopt without one.
std::optional<long> network_time_left_ms();
// What a step the time limit ended says: "the network time limit of N s ran out".
std::string network_time_limit_text();

// Whether an error is the server's or the network's rather than one file's (E_NETWORK, E_HTTP):
// after one, a reader of several files from that server (shards, a registry's blobs) asks for no
// more, each of which would cost its own stall time and retries. A missing file (E_NOT_FOUND) is not.
bool is_transport_failure(const Error& error);

// The transfers of one batch from one server (the shards of a split model, a registry's blobs):
// note() each failure; after the first transport failure (is_transport_failure), skipped() is
// the error every later item gets without being asked for: that failure's code and "not fetched
// after an earlier ITEM failed: " with its message. nullopt while none has failed so.
class TransferBatch {
public:
    explicit TransferBatch(std::string item) : m_item(std::move(item)) {}
    void note(const Error& error);
    std::optional<Error> skipped() const;

private:
    std::string m_item;
    std::optional<Error> m_failure;
};

// While one lives, every transfer made on its thread without a job of its own stops when `job` is
// cancelled (E_CANCELLED): the reads of a remote source inside an open job, say, which reach the
// network through ByteSource::read and carry no job. They nest; the previous job comes back.
class ScopedTransferJob {
public:
    explicit ScopedTransferJob(JobContext* job);
    ~ScopedTransferJob();
    ScopedTransferJob(const ScopedTransferJob&) = delete;
    ScopedTransferJob& operator=(const ScopedTransferJob&) = delete;

private:
    JobContext* m_previous;
};

struct HttpTotals {
    uint64_t requests = 0;
    uint64_t bytes = 0;
};
HttpTotals http_totals();

}  // namespace mlens
