#include "loopback_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mlens::test {

namespace {

// The span "bytes=A-B" or "bytes=A-" names in a file of `size` bytes; false when it names none.
bool parse_range(const std::string& header, uint64_t size, uint64_t& first, uint64_t& last) {
    unsigned long long a = 0, b = 0;
    if (std::sscanf(header.c_str(), "bytes=%llu-%llu", &a, &b) == 2) {
        first = a;
        last = std::min<uint64_t>(b, size - 1);
    } else if (std::sscanf(header.c_str(), "bytes=%llu-", &a) == 1) {
        first = a;
        last = size - 1;
    } else {
        return false;
    }
    return size > 0 && first <= last;
}

}  // namespace

LoopbackServer::LoopbackServer(const std::string& address, Serving serving)
    : m_address(address), m_serving(serving), m_server(std::make_unique<httplib::Server>()) {
    m_server->Get(".*", [this](const httplib::Request& req, httplib::Response& res) { answer(&req, &res); });
    // A kept-alive connection holds its worker, and stop() waits for it, this long after the last
    // request: a test ends a second after its last answer, not five (httplib's default).
    m_server->set_keep_alive_timeout(1);
    m_port = m_server->bind_to_any_port(address);
    // The socket listens once bound; waiting for the accept loop makes stop() certain to end it.
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    while (!m_server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

LoopbackServer::~LoopbackServer() {
    m_stopping->store(true);
    m_server->stop();
    m_thread.join();
}

void LoopbackServer::serve(const std::string& url_path, std::string bytes) {
    std::lock_guard lock(m_mutex);
    File file;
    file.bytes = std::move(bytes);
    file.etag = "\"v" + std::to_string(m_next_etag++) + "\"";
    m_files[url_path] = std::move(file);
}

void LoopbackServer::fail_paths_containing(const std::string& part, int status) {
    std::lock_guard lock(m_mutex);
    m_failing_part = part;
    m_failing_status = status;
}

void LoopbackServer::set_validators(const std::string& url_path, std::string etag, std::string last_modified, std::string date) {
    std::lock_guard lock(m_mutex);
    File& file = m_files[url_path];
    file.etag = std::move(etag);
    file.last_modified = std::move(last_modified);
    file.date = std::move(date);
}

bool LoopbackServer::serve_file(const std::string& url_path, const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return false;
    std::ostringstream text;
    text << in.rdbuf();
    serve(url_path, text.str());
    return true;
}

void LoopbackServer::redirect_to(const std::string& base) {
    std::lock_guard lock(m_mutex);
    m_redirect = base;
}

void LoopbackServer::require_bearer(const std::string& token) {
    std::lock_guard lock(m_mutex);
    m_bearer = token;
    File answer;
    answer.bytes = "{\"token\": \"" + token + "\"}";
    answer.etag = "\"token\"";
    m_files["/token"] = std::move(answer);
}

std::string LoopbackServer::base_url() const { return "http://" + m_address + ":" + std::to_string(m_port); }

std::vector<LoggedRequest> LoopbackServer::log() const {
    std::lock_guard lock(m_mutex);
    return m_log;
}

uint64_t LoopbackServer::body_bytes() const {
    uint64_t total = 0;
    for (const LoggedRequest& r : log()) total += r.body_bytes;
    return total;
}

void LoopbackServer::clear_log() {
    std::lock_guard lock(m_mutex);
    m_log.clear();
}

void LoopbackServer::answer(const void* request, void* response) {
    const auto& req = *static_cast<const httplib::Request*>(request);
    auto& res = *static_cast<httplib::Response*>(response);
    // The answers below set their own status and Content-Range: httplib must not cut the body again.
    const_cast<httplib::Request&>(req).ranges.clear();
    LoggedRequest logged;
    logged.target = req.target;
    logged.range = req.get_header_value("Range");
    logged.authorization = req.has_header("Authorization");
    std::lock_guard lock(m_mutex);
    auto record = [&](int status, uint64_t bytes) {
        logged.status = status;
        logged.body_bytes = bytes;
        m_log.push_back(logged);
    };
    if (!m_redirect.empty()) {
        res.status = 302;
        res.set_header("Location", m_redirect + req.target);
        auto stopping = m_stopping;
        res.set_chunked_content_provider("text/html", [stopping](size_t, httplib::DataSink& sink) {
            const std::string page(64 << 10, 'r');
            while (!stopping->load())
                if (!sink.write(page.data(), page.size())) return false;
            return false;
        });
        return record(302, 0);
    }
    if (!m_bearer.empty() && req.path.rfind("/v2/", 0) == 0 && req.get_header_value("Authorization") != "Bearer " + m_bearer) {
        // /v2/NAMESPACE/MODEL/... names the repository the token is for.
        const size_t model_end = req.path.find('/', req.path.find('/', 4) + 1);
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer realm=\"" + base_url() + "/token\",service=\"loopback-registry\",scope=\"repository:" +
                                               req.path.substr(4, model_end - 4) + ":pull\"");
        return record(401, 0);
    }
    if (!m_failing_part.empty() && req.path.find(m_failing_part) != std::string::npos) {
        res.status = m_failing_status;
        return record(m_failing_status, 0);
    }
    auto found = m_files.find(req.target);
    if (found == m_files.end()) found = m_files.find(req.path);
    if (found == m_files.end()) {
        res.status = 404;
        return record(404, 0);
    }
    File& file = found->second;
    if (m_serving == Serving::unavailable_first && !file.answered) {
        file.answered = true;
        res.status = 503;
        return record(503, 0);
    }
    if (m_serving == Serving::throttled_first && !file.answered) {
        file.answered = true;
        res.status = 429;
        res.set_header("Retry-After", "1");
        res.set_content(std::string(2u << 20, 'p'), "text/html");
        return record(429, 2u << 20);
    }
    const std::string if_range = req.get_header_value("If-Range");
    uint64_t first = 0, last = file.bytes.empty() ? 0 : file.bytes.size() - 1;
    const bool validated = if_range.empty() || m_serving == Serving::ignore_if_range || (!file.etag.empty() && if_range == file.etag) ||
        (!file.last_modified.empty() && if_range == file.last_modified);
    const bool ranged = m_serving != Serving::ignore_range && !logged.range.empty() && validated;
    if (ranged && !parse_range(logged.range, file.bytes.size(), first, last)) {
        res.status = 416;
        res.set_header("Content-Range", "bytes */" + std::to_string(file.bytes.size()));
        return record(416, 0);
    }
    if (ranged && m_serving == Serving::shifted_after_first && file.answered && first < last) ++first;
    res.status = ranged ? 206 : 200;
    if (!file.etag.empty()) res.set_header("ETag", file.etag);
    if (!file.last_modified.empty()) res.set_header("Last-Modified", file.last_modified);
    if (!file.date.empty()) res.set_header("Date", file.date);
    if (ranged)
        res.set_header("Content-Range",
                       "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(file.bytes.size()));
    const uint64_t length = file.bytes.empty() ? 0 : last - first + 1;
    const bool cut = m_serving == Serving::stall || (m_serving == Serving::drop_mid_body && !file.answered);
    auto body = std::make_shared<std::string>(file.bytes.substr(first, length));
    if (m_serving == Serving::trickle || m_serving == Serving::slow) {
        auto stopping = m_stopping;
        const bool trickle = m_serving == Serving::trickle;
        res.set_content_provider(length, "application/octet-stream", [body, stopping, trickle](size_t offset, size_t, httplib::DataSink& sink) {
            for (int i = 0; i < (trickle ? 10 : 50) && !stopping->load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            return !stopping->load() && sink.write(body->data() + offset, std::min<size_t>(trickle ? 1 : 4096, body->size() - offset));
        });
        record(res.status, length);
    } else if (cut) {
        const uint64_t half = length / 2;
        auto stopping = m_stopping;
        const bool stall = m_serving == Serving::stall;
        res.set_content_provider(length, "application/octet-stream",
                                 [body, half, stopping, stall](size_t offset, size_t, httplib::DataSink& sink) {
                                     if (offset < half) sink.write(body->data() + offset, half - offset);
                                     while (stall && !stopping->load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                     return false;
                                 });
        record(res.status, half);
    } else if (ranged && m_serving == Serving::encoded_ranges) {
        res.set_header("Content-Encoding", "gzip");
        res.set_content(body->substr(0, length / 2), "application/octet-stream");
        record(res.status, length / 2);
    } else {
        res.set_content(*body, "application/octet-stream");
        record(res.status, length);
    }
    const bool first_answer = !file.answered;
    file.answered = true;
    if (m_serving == Serving::change_after_first && first_answer) {
        for (size_t i = 64; i < file.bytes.size(); ++i) file.bytes[i] = static_cast<char>(~file.bytes[i]);
        file.etag = "\"v" + std::to_string(m_next_etag++) + "\"";
    }
}

std::vector<std::string> serve_store_as_registry(LoopbackServer& server, const std::string& root) {
    namespace fs = std::filesystem;
    std::vector<std::string> models;
    for (const auto& host : fs::directory_iterator(root + "/manifests"))
        for (const auto& name_space : fs::directory_iterator(host.path()))
            for (const auto& model : fs::directory_iterator(name_space.path()))
                for (const auto& tag : fs::directory_iterator(model.path())) {
                    const std::string repository = "/v2/" + name_space.path().filename().string() + "/" + model.path().filename().string();
                    server.serve_file(repository + "/manifests/" + tag.path().filename().string(), tag.path().string());
                    for (const auto& blob : fs::directory_iterator(root + "/blobs")) {
                        std::string name = blob.path().filename().string();
                        server.serve_file(repository + "/blobs/sha256:" + name.substr(7), blob.path().string());
                    }
                    models.push_back(name_space.path().filename().string() + "/" + model.path().filename().string() + ":" +
                                     tag.path().filename().string());
                }
    std::sort(models.begin(), models.end());
    return models;
}

}  // namespace mlens::test
