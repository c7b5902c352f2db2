// LoopbackServer: an HTTP server on a loopback address (cpp-httplib), started by a test, serving
// files from memory with Range requests, logging every request it answers.
//
// Behaviour (Serving):
//  - ranges: GET with "Range: bytes=A-B" answers 206 with that range (clamped to the file) and
//    Content-Range; without Range, 200 with the whole file; If-Range with another validator than
//    the file's ETag answers 200 with the whole file (RFC 9110). Every answer has the file's ETag.
//  - ignore_range: always 200 with the whole file.
//  - stall: sends the first half of the range, then nothing until the server stops.
//  - drop_mid_body: the first answer of each path sends half its body and closes the connection;
//    later ones are whole (a client that retries gets its bytes).
//  - change_after_first: after the first answer for a path, that file's content and ETag change
//    (every byte from offset 64 on is flipped).
//  - unavailable_first: the first request for each path answers 503 Service Unavailable; later
//    ones are served as by `ranges`.
//  - shifted_after_first: the first answer for each path as by `ranges`; later ranged answers
//    start one byte after the asked start (their Content-Range says so), as a broken proxy may.
//  - throttled_first: the first request for each path answers 429 Too Many Requests with
//    "Retry-After: 1" and a 2 MiB error page; later ones are served as by `ranges`.
//  - trickle: sends the range one byte every 200 ms.
//  - slow: sends the range 4 KiB every second, above any stall rate but never done quickly.
//  - ignore_if_range: as `ranges`, but If-Range is ignored (a range of whatever the file is now).
//  - encoded_ranges: ranged answers say "Content-Encoding: gzip" and carry half the range's bytes
//    (the length of a compressed range) under the Content-Range of the whole range.
// require_bearer(token) makes it a registry that wants a token: a request under /v2/ without
// "Authorization: Bearer TOKEN" answers 401 with "WWW-Authenticate: Bearer realm=BASE/token,
// service=loopback-registry,scope=repository:NAMESPACE/MODEL:pull", and /token answers
// {"token": TOKEN} (its query, service and scope, is in the log's target).
// A file is found by the request's path and query first, then by its path alone, so "/dl?f=a"
// and "/dl?f=b" may be two files. set_validators(url_path, etag, last_modified, date) sets the
// validators a file's answers carry: its ETag ("" for none; If-Range matches it or the
// Last-Modified), and Last-Modified and Date headers when not empty.
// redirect_to(base) makes every request answer 302 to base + the same target (the Hub's resolve
// endpoint sending clients to its CDN on another host), with a body that never ends (until the
// client stops reading it or the server stops). serve() may be called before or while the
// server runs; the log is the answers in order.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_paths.h"

namespace httplib {
class Server;
}

namespace mlens::test {

enum class Serving {
    ranges,
    ignore_range,
    stall,
    drop_mid_body,
    change_after_first,
    unavailable_first,
    shifted_after_first,
    throttled_first,
    trickle,
    slow,
    ignore_if_range,
    encoded_ranges
};

struct LoggedRequest {
    std::string target;  // path and query
    std::string range;  // the Range header, empty when absent
    bool authorization = false;  // an Authorization header came
    int status = 0;
    uint64_t body_bytes = 0;  // the body bytes the answer carries (all of them, even when dropped)
};

class LoopbackServer {
public:
    explicit LoopbackServer(const std::string& address = "127.0.0.1", Serving serving = Serving::ranges);
    ~LoopbackServer();
    LoopbackServer(const LoopbackServer&) = delete;
    LoopbackServer& operator=(const LoopbackServer&) = delete;

    // Serves `bytes` at `url_path` ("/models/a.gguf").
    void serve(const std::string& url_path, std::string bytes);
    // Serves the file at `file` (read now) at `url_path`; false when it cannot be read.
    bool serve_file(const std::string& url_path, const std::string& file);
    void set_validators(const std::string& url_path, std::string etag, std::string last_modified, std::string date);
    void redirect_to(const std::string& base);
    // Every request whose path contains `part` answers `status` (an error, no body).
    void fail_paths_containing(const std::string& part, int status);
    void require_bearer(const std::string& token);

    std::string base_url() const;  // "http://127.0.0.1:PORT"
    std::string url(const std::string& url_path) const { return base_url() + url_path; }

    std::vector<LoggedRequest> log() const;
    uint64_t body_bytes() const;  // the sum over the log
    void clear_log();

private:
    struct File {
        std::string bytes;
        std::string etag;
        bool answered = false;
        std::string last_modified, date;
    };
    void answer(const void* request, void* response);

    std::string m_address;
    Serving m_serving;
    int m_port = 0;
    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::map<std::string, File> m_files;
    std::string m_redirect;
    std::string m_failing_part;  // fail_paths_containing
    int m_failing_status = 0;
    std::string m_bearer;
    std::vector<LoggedRequest> m_log;
    std::shared_ptr<std::atomic<bool>> m_stopping = std::make_shared<std::atomic<bool>>(false);
    int m_next_etag = 1;
};

// Serves the Ollama store at `root` as a registry does: each manifest
// manifests/HOST/NAMESPACE/MODEL/TAG at /v2/NAMESPACE/MODEL/manifests/TAG and every blob
// blobs/sha256-HEX at /v2/NAMESPACE/MODEL/blobs/sha256:HEX of each model. Returns the models
// served, as "NAMESPACE/MODEL:TAG".
std::vector<std::string> serve_store_as_registry(LoopbackServer& server, const std::string& root);

// A cache folder of its own (XDG_CACHE_HOME pointed at a fresh folder) while it lives, so remote
// opens of a test, and of the mlens processes it starts, neither see nor fill the user's cache.
struct PrivateHttpCache {
    TempDir folder;
    ScopedEnv xdg{"XDG_CACHE_HOME", folder.path()};
};

}  // namespace mlens::test
