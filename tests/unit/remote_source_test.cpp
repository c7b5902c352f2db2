// Remote sources against loopback servers: the requests and bytes an open costs, per-tensor
// fetches, and the servers that ignore Range, stall, drop the connection, change the file or
// redirect a Hub request to another host.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "large_gguf.h"
#include "loopback_server.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/remote/http_client.h"
#include "mlens/open/target.h"
#include "mlens/remote/remote_source.h"
#include "registry_fixture.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kDemo = MLENS_DEMO_DIR;

std::string as_text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// A vocabulary of 262144 tokens ("tok_0" ...) with scores and token types: a 6.4 MiB header.
std::vector<uint8_t> vocab_262k() {
    test::LargeGguf spec;
    spec.tokens = 262144;
    spec.token_types = true;
    spec.tensors = 10;
    return test::large_gguf_bytes(spec);
}

std::vector<std::string> ranges_of(const test::LoopbackServer& server) {
    std::vector<std::string> out;
    for (const test::LoggedRequest& r : server.log()) out.push_back(r.range);
    return out;
}

}  // namespace

TEST_CASE("a 6.4 MiB GGUF header opens in 3 requests and its own bytes", "[remote]") {
    test::PrivateHttpCache cache;
    const std::vector<uint8_t> bytes = vocab_262k();
    REQUIRE(bytes.size() == 6705632);
    test::LoopbackServer server;
    server.serve("/vocab.gguf", as_text(bytes));
    auto model = open_model(server.url("/vocab.gguf"));
    REQUIRE(model);
    CHECK(model->error_count() == 0);
    CHECK(model->tensors.size() == 10);
    CHECK(model->files[0].path == server.url("/vocab.gguf"));
    // 512 KiB, then three times what the run holds: 2 MiB, then 8 MiB (clamped to the file).
    CHECK(ranges_of(server) == std::vector<std::string>{"bytes=0-524287", "bytes=524288-2097151", "bytes=2097152-6705631"});
    CHECK(server.body_bytes() == bytes.size());
}

TEST_CASE("reading one tensor of a remote model fetches that tensor's bytes and no others", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/tiny.gguf", kDemo + "/tiny-llama-f32.gguf"));
    auto model = open_model(server.url("/tiny.gguf"));
    REQUIRE(model);
    const size_t last = model->tensors.size() - 1;
    const TensorInfo& t = model->tensors[last];
    REQUIRE(t.n_bytes);
    REQUIRE(t.data_offset > 2 * 1024 * 1024);
    server.clear_log();
    std::vector<uint8_t> data(*t.n_bytes);
    // Read in 64 KiB steps, as the analyses stream a tensor: one request, for the tensor only.
    for (uint64_t at = 0; at < data.size(); at += 65536) {
        const uint64_t n = std::min<uint64_t>(65536, data.size() - at);
        REQUIRE(model->read_tensor_bytes(last, at, n, data.data() + at));
    }
    const auto log = server.log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].range == "bytes=" + std::to_string(t.data_offset) + "-" + std::to_string(t.data_offset + *t.n_bytes - 1));
    CHECK(server.body_bytes() == *t.n_bytes);
    const std::vector<uint8_t> local = test::read_whole_file(kDemo + "/tiny-llama-f32.gguf");
    CHECK(std::equal(data.begin(), data.end(), local.begin() + static_cast<std::ptrdiff_t>(t.data_offset)));
}

TEST_CASE("a server that ignores Range is refused at its first answer", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::ignore_range);
    server.serve("/big.gguf", std::string(16u << 20, 'x'));
    const HttpTotals before = http_totals();
    const Target t = resolve(server.url("/big.gguf"));
    CHECK(t.kind == TargetKind::not_a_model);
    CHECK(t.problem.code == ErrorCode::E_NO_RANGE);
    CHECK(t.problem.message == server.url("/big.gguf") +
                                   ": the server ignores Range requests (it answered 200 with the whole file); the transfer was "
                                   "stopped at its first bytes");
    CHECK(http_totals().bytes - before.bytes == 0);
    CHECK(server.log().size() == 1);
}

TEST_CASE("a Hub request redirected to another host keeps the token on the Hub's host", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer cdn("127.0.0.2");
    REQUIRE(cdn.serve_file("/org/repo/resolve/main/tiny-q4.gguf", kDemo + "/tiny-llama-q4_0.gguf"));
    test::LoopbackServer hub("127.0.0.1");
    hub.redirect_to(cdn.base_url());
    test::ScopedEnv endpoint("HF_ENDPOINT", hub.base_url());
    test::ScopedEnv token("HF_TOKEN", std::string("hf_secret_token"));
    auto model = open_model("hf://org/repo/tiny-q4.gguf");
    REQUIRE(model);
    CHECK(model->error_count() == 0);
    REQUIRE_FALSE(hub.log().empty());
    for (const test::LoggedRequest& r : hub.log()) CHECK(r.authorization);
    REQUIRE_FALSE(cdn.log().empty());
    for (const test::LoggedRequest& r : cdn.log()) CHECK_FALSE(r.authorization);
    // The header's run of fetches, 512 KiB and 1.5 MiB, all from the CDN.
    CHECK(cdn.body_bytes() == 2097152);
}

TEST_CASE("redirects stop after five", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer loop("127.0.0.1");
    loop.redirect_to(loop.base_url());
    const Target t = resolve(loop.url("/m.gguf"));
    CHECK(t.problem.code == ErrorCode::E_HTTP);
    CHECK(t.problem.message == loop.url("/m.gguf") + ": more than 5 redirects");
    CHECK(loop.log().size() == 6);
}

TEST_CASE("a redirect to a file:// or ftp:// URL is the server's answer, not followed", "[remote]") {
    for (const std::string target : {"file:///etc", "ftp://127.0.0.1"}) {
        test::PrivateHttpCache cache;
        test::LoopbackServer server("127.0.0.1");
        server.redirect_to(target);
        const Target t = resolve(server.url("/m.gguf"));
        CHECK(t.problem.code == ErrorCode::E_HTTP);
        CHECK(t.problem.message == server.url("/m.gguf") + ": redirected to " + target + "/m.gguf: not an http:// or https:// URL; not followed");
        CHECK(server.log().size() == 1);
    }
}

TEST_CASE("a range answered in a Content-Encoding never asked for says so", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::encoded_ranges);
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/tiny-llama-q4_0.gguf"));
    const Target t = resolve(server.url("/m.gguf"));
    CHECK(t.problem.code == ErrorCode::E_HTTP);
    CHECK(t.problem.message == server.url("/m.gguf") +
              ": asked for bytes 0-524287, the server answered 206 with Content-Range \"bytes 0-524287/3085696\" and 262144 body bytes in "
              "Content-Encoding gzip, never asked for");
}

TEST_CASE("a stalled transfer, or a trickle of a few bytes a second, stops after the stall time", "[remote]") {
    for (const test::Serving serving : {test::Serving::stall, test::Serving::trickle}) {
        test::PrivateHttpCache cache;
        test::LoopbackServer server("127.0.0.1", serving);
        server.serve("/m.gguf", as_text(test::read_whole_file(kDemo + "/ollama-gemma3.gguf")));
        test::ScopedEnv stall("MLENS_HTTP_STALL_SECONDS", std::string("1"));
        const auto start = std::chrono::steady_clock::now();
        const Target t = resolve(server.url("/m.gguf"));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK(t.problem.code == ErrorCode::E_NETWORK);
        CHECK(t.problem.message == server.url("/m.gguf") + ": the transfer stalled (under 1 KiB/s for 1 s)");
        CHECK(seconds < 10);
        CHECK(server.log().size() == 1);
    }
}

TEST_CASE("a Content-Range names a total only when it is exactly one that 64 bits hold", "[remote]") {
    auto total = [](const std::string& value) {
        HttpResponse r;
        r.headers = {{"content-range", value}};
        return r.content_range_total();
    };
    CHECK(total("bytes 0-524287/3085696") == 3085696u);
    CHECK(total("bytes */0") == 0u);
    CHECK(total("bytes 0-0/18446744073709551615") == UINT64_MAX);
    for (const char* bad : {"bytes 0-524287/18446744073709551617", "bytes 0-524287/18446744073709551616", "bytes */18446744073709551616",
                            "bytes 5-4/10", "bytes 0-1/2x", "bytes 0-1/", "bytes -1/2", "bytes +0-1/2", "items 0-1/2", "bytes 0-1/*", ""})
        CHECK_FALSE(total(bad));
}

// The network time limit for one test, lifted when it ends.
struct ScopedNetworkTimeLimit {
    explicit ScopedNetworkTimeLimit(double seconds) { set_network_time_limit(seconds); }
    ~ScopedNetworkTimeLimit() { set_network_time_limit(0); }
};

TEST_CASE("the network time limit stops a transfer that never stalls and refuses every request after it", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::slow);
    server.serve("/m.gguf", as_text(test::read_whole_file(kDemo + "/ollama-gemma3.gguf")));
    const ScopedNetworkTimeLimit limit(1.5);
    const auto start = std::chrono::steady_clock::now();
    const Target t = resolve(server.url("/m.gguf"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(t.problem.code == ErrorCode::E_NETWORK);
    CHECK(t.problem.message == server.url("/m.gguf") + ": the network time limit of 1.5 s ran out");
    CHECK(seconds >= 1.4);
    CHECK(seconds < 6);
    CHECK(server.log().size() == 1);
    // After the limit nothing is sent.
    CHECK(resolve(server.url("/m.gguf")).problem.message == t.problem.message);
    CHECK(server.log().size() == 1);
}

TEST_CASE("a retry never waits past the network time limit", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::unavailable_first);
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    test::ScopedEnv retry("MLENS_HTTP_RETRY_MS", std::string("20000"));
    const ScopedNetworkTimeLimit limit(1);
    const auto start = std::chrono::steady_clock::now();
    const Target t = resolve(server.url("/m.gguf"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(t.problem.message == server.url("/m.gguf") + ": the network time limit of 1 s ran out");
    CHECK(seconds < 5);
    const std::vector<test::LoggedRequest> log = server.log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].status == 503);
}

// The held limit for one test, put back when it ends.
struct ScopedHeldLimit {
    explicit ScopedHeldLimit(uint64_t bytes) { set_remote_held_limit(bytes); }
    ~ScopedHeldLimit() { set_remote_held_limit(kHeldBytes); }
};

// `size` bytes that differ from file to file (`seed`) and from place to place.
std::string patterned(size_t size, uint32_t seed) {
    std::string out(size, '\0');
    uint32_t x = seed * 2654435761u + 1;
    for (char& c : out) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    return out;
}

TEST_CASE("remote sources hold at most the held limit together, dropping the least recently used ranges of any", "[remote]") {
    test::LoopbackServer server;
    std::vector<std::string> files;
    for (uint32_t i = 0; i < 3; ++i) {
        files.push_back(patterned(3u << 20, i));
        server.serve("/f" + std::to_string(i), files.back());
    }
    const ScopedHeldLimit limit(4u << 20);
    const uint64_t before = remote_held_bytes();
    std::vector<ByteSourcePtr> sources;
    for (uint32_t i = 0; i < 3; ++i) {
        auto source = open_remote(server.url("/f" + std::to_string(i)), RemoteOptions{});
        REQUIRE(source);
        sources.push_back(*source);
    }
    CHECK(remote_held_bytes() - before == 3 * kFirstFetchBytes);
    std::string bytes(3u << 20, '\0');
    for (uint32_t round = 0; round < 2; ++round)
        for (uint32_t i = 0; i < 3; ++i) {
            server.clear_log();
            REQUIRE(sources[i]->read_ahead(0, bytes.size(), bytes.data(), bytes.size()));
            CHECK(bytes == files[i]);
            // Each whole read drops the ranges of the others, least recently used first: the
            // second read drops the third file's first bytes (held since its open) and then the
            // first file, so that from the third read on every file is fetched whole again.
            CHECK(remote_held_bytes() - before <= (4u << 20));
            CHECK(server.body_bytes() == (round == 0 && i < 2 ? (3u << 20) - kFirstFetchBytes : 3u << 20));
        }
    sources.clear();
    CHECK(remote_held_bytes() == before);
}

TEST_CASE("reads of several remote sources at once, under a held limit that drops ranges all the time, give their files' bytes", "[remote]") {
    test::LoopbackServer server;
    std::vector<std::string> files;
    std::vector<ByteSourcePtr> sources;
    for (uint32_t i = 0; i < 3; ++i) {
        files.push_back(patterned(2u << 20, 10 + i));
        server.serve("/f" + std::to_string(i), files.back());
    }
    for (uint32_t i = 0; i < 3; ++i) {
        auto source = open_remote(server.url("/f" + std::to_string(i)), RemoteOptions{});
        REQUIRE(source);
        sources.push_back(*source);
    }
    const ScopedHeldLimit limit(1u << 20);
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (uint32_t t = 0; t < 4; ++t)
        readers.emplace_back([&, t] {
            uint32_t x = t + 1;
            std::string got(64u << 10, '\0');
            for (int k = 0; k < 60; ++k) {
                x = x * 1664525u + 1013904223u;
                const uint32_t file = (x >> 8) % 3;
                const uint64_t offset = (x >> 12) % ((2u << 20) - got.size());
                if (!sources[file]->read(offset, got.size(), got.data()) || got != files[file].substr(offset, got.size())) ++wrong;
            }
        });
    for (std::thread& r : readers) r.join();
    CHECK(wrong == 0);
}

TEST_CASE("a file served with only a weak ETag that changes is E_REMOTE_CHANGED - its two versions never mixed", "[remote]") {
    test::LoopbackServer server;
    const std::string before = patterned(3u << 20, 1), after = patterned(3u << 20, 2);
    server.serve("/w.gguf", before);
    server.set_validators("/w.gguf", "W/\"v1\"", "", "");
    auto source = open_remote(server.url("/w.gguf"), RemoteOptions{});
    REQUIRE(source);
    server.serve("/w.gguf", after);
    server.set_validators("/w.gguf", "W/\"v2\"", "", "");
    std::string bytes(1u << 20, '\0');
    CHECK_FALSE((*source)->read(2u << 20, bytes.size(), bytes.data()));
    CHECK((*source)->read_failure() == "E_REMOTE_CHANGED: " + server.url("/w.gguf") + ": the file changed on the server since it was opened");
    // The same weak ETag proves nothing either way: read as served.
    auto again = open_remote(server.url("/w.gguf"), RemoteOptions{});
    REQUIRE(again);
    REQUIRE((*again)->read(2u << 20, bytes.size(), bytes.data()));
    CHECK(bytes == after.substr(2u << 20, bytes.size()));
}

TEST_CASE("a 429 with a large page is tried again after its Retry-After - never E_TOO_LARGE", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::throttled_first);
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    test::ScopedEnv retry("MLENS_HTTP_RETRY_MS", std::string("10"));
    const auto start = std::chrono::steady_clock::now();
    auto model = open_model(server.url("/m.gguf"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(model);
    CHECK(model->error_count() == 0);
    CHECK(seconds >= 1.0);  // the Retry-After, not the 10 ms backoff
    const std::vector<test::LoggedRequest> log = server.log();
    REQUIRE(log.size() >= 2);
    CHECK(log[0].status == 429);
    CHECK(log[1].status == 206);
}

TEST_CASE("a connection dropped mid-body is tried again", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::drop_mid_body);
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    test::ScopedEnv retry("MLENS_HTTP_RETRY_MS", std::string("10"));
    auto model = open_model(server.url("/m.gguf"));
    REQUIRE(model);
    CHECK(model->error_count() == 0);
    CHECK(ranges_of(server) == std::vector<std::string>{"bytes=0-524287", "bytes=0-524287"});
}

namespace {

// A read past what the open fetched fails: the file at `url` changed since `source` opened it.
void check_changed_on_server(const ByteSource& source, const std::string& url) {
    uint8_t fresh[16];
    CHECK_FALSE(source.read(3u << 20, 16, fresh));
    CHECK(source.read_failure() == "E_REMOTE_CHANGED: " + url + ": the file changed on the server since it was opened");
}

}  // namespace

TEST_CASE("a file that changes on the server is detected and never mixed", "[remote]") {
    test::PrivateHttpCache cache;
    const std::vector<uint8_t> bytes = vocab_262k();
    test::LoopbackServer server("127.0.0.1", test::Serving::change_after_first);
    server.serve("/vocab.gguf", as_text(bytes));
    auto source = open_remote(server.url("/vocab.gguf"), RemoteOptions{});
    REQUIRE(source);
    uint8_t held[16];
    CHECK((*source)->read(100, 16, held));
    CHECK(std::equal(held, held + 16, bytes.begin() + 100));
    check_changed_on_server(**source, server.url("/vocab.gguf"));
    const auto log = server.log();
    REQUIRE(log.size() == 2);
    CHECK(log[1].status == 200);
}

TEST_CASE("an answer without the validator the file was opened with is never used", "[remote]") {
    // A server that ignores If-Range and, for a file that changed, drops its ETag.
    test::PrivateHttpCache cache;
    const std::vector<uint8_t> bytes = vocab_262k();
    test::LoopbackServer server("127.0.0.1", test::Serving::ignore_if_range);
    server.serve("/vocab.gguf", as_text(bytes));
    auto source = open_remote(server.url("/vocab.gguf"), RemoteOptions{});
    REQUIRE(source);
    std::string other = as_text(bytes);
    for (size_t i = 64; i < other.size(); ++i) other[i] = static_cast<char>(~other[i]);
    server.serve("/vocab.gguf", other);
    server.set_validators("/vocab.gguf", "", "", "");
    check_changed_on_server(**source, server.url("/vocab.gguf"));
}

TEST_CASE("a remote file that does not exist is a missing target", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    const Target t = resolve(server.url("/none.gguf?sig=secret"));
    CHECK(t.kind == TargetKind::missing);
    CHECK(t.problem.code == ErrorCode::E_NOT_FOUND);
    CHECK(t.problem.message == server.url("/none.gguf") + ": HTTP 404 Not Found");
}

TEST_CASE("a second open is served from the cache after a one-byte validation request", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q8.gguf", kDemo + "/tiny-llama-q8_0.gguf"));
    auto first = open_model(server.url("/q8.gguf"));
    REQUIRE(first);
    const size_t first_requests = server.log().size();
    server.clear_log();
    auto second = open_model(server.url("/q8.gguf"));
    REQUIRE(second);
    CHECK(second->tensors.size() == first->tensors.size());
    CHECK(ranges_of(server) == std::vector<std::string>{"bytes=0-0"});
    CHECK(server.body_bytes() == 1);
    CHECK(first_requests == 2);
    const std::vector<CacheEntryInfo> entries = RangeCache::open()->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].url == server.url("/q8.gguf"));
    CHECK(entries[0].size == 5182848);
    CHECK(entries[0].validator == "\"v1\"");
}

TEST_CASE("a file that changed on the server gets a new cache entry, never the old ranges", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    REQUIRE(open_model(server.url("/m.gguf")));
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-qwen25vl.gguf"));
    server.clear_log();
    auto model = open_model(server.url("/m.gguf"));
    REQUIRE(model);
    auto local = open_model(kDemo + "/ollama-qwen25vl.gguf");
    REQUIRE(local);
    CHECK(model->tensors.size() == local->tensors.size());
    CHECK(model->files[0].source->size() == 727680);
    // The header lies in the first 512 KiB: the open fetches nothing past it.
    CHECK(ranges_of(server) == std::vector<std::string>{"bytes=0-0", "bytes=0-524287"});
    const std::vector<CacheEntryInfo> entries = RangeCache::open()->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].validator == "\"v2\"");
    CHECK(entries[0].bytes == 524288);
}

TEST_CASE("the cache keeps under its bound by removing the least recently used entries", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/a.gguf", kDemo + "/ollama-gemma3.gguf"));
    REQUIRE(server.serve_file("/b.gguf", kDemo + "/ollama-qwen25vl.gguf"));
    RemoteOptions options;
    options.cache = RangeCache::open(default_cache_folder(), 1000000);
    auto a = open_remote(server.url("/a.gguf"), options);
    REQUIRE(a);
    auto b = open_remote(server.url("/b.gguf"), options);
    REQUIRE(b);
    std::vector<uint8_t> all((*b)->size());
    REQUIRE((*b)->read(0, all.size(), all.data()));
    const std::vector<CacheEntryInfo> entries = options.cache->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].url == server.url("/b.gguf"));
    CHECK(entries[0].bytes == 727680);
    REQUIRE(options.cache->clear());
    CHECK(options.cache->contents().entries.empty());
}

TEST_CASE("an ollama:// model opens through the registry's 401 challenge, its token, manifest and blobs", "[remote][ollama]") {
    test::RegistryFixture served("registry-token-1");
    const test::LoopbackServer& registry = served.registry;
    const Target t = resolve("ollama://tiny-llama:q4_0");
    CHECK(t.kind == TargetKind::registry_model);
    CHECK(t.registry == registry.base_url());
    CHECK(registry.log().empty());
    auto remote = open_target(t);
    REQUIRE(remote);
    auto local = open_model(kDemo + "/ollama-store/tiny-llama:q4_0");
    REQUIRE(local);
    CHECK(remote->error_count() == 0);
    CHECK(remote->tensors.size() == local->tensors.size());
    CHECK(remote->metadata.size() == local->metadata.size());
    const auto log = registry.log();
    REQUIRE(log.size() >= 4);
    CHECK(log[0].target == "/v2/library/tiny-llama/manifests/q4_0");
    CHECK(log[0].status == 401);
    CHECK_FALSE(log[0].authorization);
    CHECK(log[1].target == "/token?service=loopback-registry&scope=repository%3Alibrary%2Ftiny-llama%3Apull");
    CHECK_FALSE(log[1].authorization);
    CHECK(log[2].target == "/v2/library/tiny-llama/manifests/q4_0");
    CHECK(log[2].status == 200);
    for (size_t i = 2; i < log.size(); ++i) {
        CHECK(log[i].authorization);
        CHECK(log[i].status / 100 == 2);
    }
}

TEST_CASE("a registry token with a line break is refused, not sent as header lines of its own", "[remote][ollama]") {
    // The token endpoint's JSON is {"token": "registry-token\r\nX-Injected: 1"}.
    test::RegistryFixture served("registry-token\\r\\nX-Injected: 1");
    const test::LoopbackServer& registry = served.registry;
    auto reference = parse_registry_reference("tiny-llama:q4_0");
    REQUIRE(reference);
    auto manifest = fetch_registry_manifest(*reference);
    REQUIRE_FALSE(manifest);
    CHECK(manifest.error().code == ErrorCode::E_HTTP);
    CHECK(manifest.error().message.find("gave a token with spaces, control characters") != std::string::npos);
    const auto log = registry.log();
    REQUIRE(log.size() == 2);  // the challenge and the token: the manifest is not asked for again
    CHECK(log[1].target.rfind("/token?", 0) == 0);
}

TEST_CASE("after a blob the registry fails to deliver, no other blob is asked for", "[remote][ollama]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    registry.fail_paths_containing("/blobs/", 503);
    test::ScopedEnv retry("MLENS_HTTP_RETRY_MS", std::string("10"));
    auto model = open_target(resolve("ollama://tiny-mlx:mixed"));
    // The open fails with that blob's error (or, had it gone on, a model with every layer failed).
    if (!model) {
        CHECK(model.error().code == ErrorCode::E_HTTP);
        CHECK(model.error().message.find("HTTP 503") != std::string::npos);
    } else {
        CHECK(model->error_count() > 1);
    }
    std::set<std::string> blobs_asked;
    for (const test::LoggedRequest& r : registry.log())
        if (r.target.find("/blobs/") != std::string::npos) blobs_asked.insert(r.target);
    CHECK(blobs_asked.size() == 1);  // that blob, with its retries
}

TEST_CASE("ollama:// references name the registry, namespace, model and tag", "[remote][ollama]") {
    test::ScopedEnv unset("OLLAMA_REGISTRY", std::nullopt);
    auto plain = parse_registry_reference("gemma3");
    REQUIRE(plain);
    CHECK(plain->base == "https://registry.ollama.ai");
    CHECK(plain->name.full() == "registry.ollama.ai/library/gemma3:latest");
    auto hosted = parse_registry_reference("example.com:5000/team/m:v2");
    REQUIRE(hosted);
    CHECK(hosted->base == "https://example.com:5000");
    CHECK(hosted->name.full() == "example.com:5000/team/m:v2");
    test::ScopedEnv bare("OLLAMA_REGISTRY", std::string("mirror.example"));
    CHECK(parse_registry_reference("gemma3:4b")->base == "https://mirror.example");
    CHECK_FALSE(parse_registry_reference("bad name"));
}

TEST_CASE("a cancelled job stops a transfer made on its thread, even through a ByteSource read", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::stall);
    server.serve("/m.gguf", as_text(test::read_whole_file(kDemo + "/ollama-gemma3.gguf")));
    JobContext job;
    std::thread canceller([&job] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        job.cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    Target t;
    {
        const ScopedTransferJob transfers(&job);
        t = resolve(server.url("/m.gguf"));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    canceller.join();
    CHECK(t.problem.code == ErrorCode::E_CANCELLED);
    CHECK(seconds < 5);
}

TEST_CASE("a 5xx answer is tried again after a wait, and a lasting one fails with its status", "[remote]") {
    test::PrivateHttpCache cache;
    test::ScopedEnv wait("MLENS_HTTP_RETRY_MS", std::string("10"));
    test::LoopbackServer server("127.0.0.1", test::Serving::unavailable_first);
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    auto model = open_model(server.url("/m.gguf"));
    REQUIRE(model);
    const auto log = server.log();
    REQUIRE(log.size() == 2);
    CHECK(log[0].status == 503);
    CHECK(log[1].status == 206);
    test::ScopedEnv none("MLENS_HTTP_RETRIES", std::string("0"));
    REQUIRE(server.serve_file("/n.gguf", kDemo + "/ollama-gemma3.gguf"));
    const Target t = resolve(server.url("/n.gguf"));
    CHECK(t.problem.code == ErrorCode::E_HTTP);
    CHECK(t.problem.message == server.url("/n.gguf") + ": HTTP 503 Service Unavailable");
}

TEST_CASE("a version named by a date of the second its answer was made is never stored", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    // Modified in the second the answer was made: a change later in that second would keep the
    // same Last-Modified (and an ETag made from the same clock).
    const std::string date = "Tue, 01 Dec 2026 10:00:00 GMT";
    for (const std::string& etag : {std::string(), std::string("\"1700000000-5a0\"")}) {
        server.set_validators("/m.gguf", etag, date, date);
        REQUIRE(open_model(server.url("/m.gguf")));
        CHECK(RangeCache::open()->contents().entries.empty());
        // Without a Date to tell, nor.
        server.set_validators("/m.gguf", etag, date, "");
        REQUIRE(open_model(server.url("/m.gguf")));
        CHECK(RangeCache::open()->contents().entries.empty());
    }
    // Modified a second before: stored, under the ETag when there is one, else the date.
    server.set_validators("/m.gguf", "", "Tue, 01 Dec 2026 09:59:59 GMT", date);
    REQUIRE(open_model(server.url("/m.gguf")));
    std::vector<CacheEntryInfo> entries = RangeCache::open()->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].validator == "Tue, 01 Dec 2026 09:59:59 GMT");
    server.clear_log();
    REQUIRE(open_model(server.url("/m.gguf")));
    CHECK(ranges_of(server) == std::vector<std::string>{"bytes=0-0"});
}

TEST_CASE("two queries of one path are two files in the cache, whatever their validators", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    // Two files of one size that differ in one tensor byte, served under one ETag (as a server may
    // give every answer of one resource).
    const std::vector<uint8_t> file = test::read_whole_file(kDemo + "/ollama-gemma3.gguf");
    auto local = open_model(kDemo + "/ollama-gemma3.gguf");
    REQUIRE(local);
    const TensorInfo& first = local->tensors[0];
    std::string a(file.begin(), file.end()), b = a;
    b[first.data_offset] = static_cast<char>(~b[first.data_offset]);
    server.serve("/dl?f=a", a);
    server.serve("/dl?f=b", b);
    server.set_validators("/dl?f=a", "\"same\"", "", "");
    server.set_validators("/dl?f=b", "\"same\"", "", "");
    for (int round = 0; round < 2; ++round) {
        for (const auto& [query, bytes] : {std::pair{"/dl?f=a", &a}, std::pair{"/dl?f=b", &b}}) {
            auto model = open_model(server.url(query));
            REQUIRE(model);
            uint8_t byte = 0;
            REQUIRE(model->read_tensor_bytes(0, 0, 1, &byte));
            CHECK(byte == static_cast<uint8_t>((*bytes)[first.data_offset]));
        }
    }
    const std::vector<CacheEntryInfo> entries = RangeCache::open()->contents().entries;
    REQUIRE(entries.size() == 2);
    for (const CacheEntryInfo& e : entries) {
        CHECK(e.url.rfind(server.url("/dl?query-"), 0) == 0);  // a digest of the query, not the query
        CHECK(e.url.find("f=") == std::string::npos);
    }
}

TEST_CASE("a download limit below the header fails the open with E_DOWNLOAD_LIMIT, never a verdict on the file", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q8.gguf", kDemo + "/tiny-llama-q8_0.gguf"));
    // The header is about 725 KB; 16 bytes name the format, and the magic is read in a window of 64 KiB.
    for (uint64_t budget : {uint64_t{4}, uint64_t{16}, uint64_t{100}, uint64_t{1} << 10, uint64_t{600} << 10}) {
        INFO("--max-download " << budget);
        set_download_budget(budget);
        auto model = open_model(server.url("/q8.gguf"));
        set_download_budget(0);
        REQUIRE_FALSE(model);
        CHECK(model.error().code == ErrorCode::E_DOWNLOAD_LIMIT);
        CHECK(model.error().message.find("download limit") != std::string::npos);
    }
}

TEST_CASE("an answer that starts at another byte than asked fails the open with E_HTTP, never a verdict on the file", "[remote]") {
    test::PrivateHttpCache cache;
    const std::vector<uint8_t> bytes = vocab_262k();
    test::LoopbackServer server("127.0.0.1", test::Serving::shifted_after_first);
    server.serve("/vocab.gguf", as_text(bytes));
    auto model = open_model(server.url("/vocab.gguf"));
    REQUIRE_FALSE(model);
    CHECK(model.error().code == ErrorCode::E_HTTP);
    // The failed request is the source's last: the reader's later reads send none (they sent
    // over 11,000, one per token, before fetching ended at the first failure).
    CHECK(server.log().size() <= 4);
    CHECK(model.error().message.find("asked for bytes 524288-2097151, the server answered 206 with Content-Range \"bytes 524289-2097151/6705632\"") !=
          std::string::npos);
    // The same answer to a later read is that read's failure, by the same code.
    server.serve("/again.gguf", as_text(bytes));
    auto source = open_remote(server.url("/again.gguf"), RemoteOptions{});
    REQUIRE(source);
    uint8_t part[16];
    CHECK_FALSE((*source)->read(5u << 20, 16, part));
    CHECK((*source)->read_failure().starts_with("E_HTTP: "));
    const size_t requests = server.log().size();
    CHECK_FALSE((*source)->read(6u << 20, 16, part));
    CHECK(server.log().size() == requests);
    CHECK((*source)->read(100, 16, part));  // held since the open
    CHECK(std::equal(part, part + 16, bytes.begin() + 100));
}

TEST_CASE("a registry's model of many tensor blobs holds few of them open and opens one again when it is read", "[remote][ollama]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer registry;
    nlohmann::json layers = nlohmann::json::array();
    std::vector<std::string> paths;
    const size_t blobs = kOpenRegistryBlobs + 4;
    for (size_t i = 0; i < blobs; ++i) {
        const std::vector<float> values(4, static_cast<float>(i));
        std::vector<uint8_t> data(sizeof(float) * values.size());
        std::memcpy(data.data(), values.data(), data.size());
        test::SafetensorsBuilder builder;
        builder.tensor("blk." + std::to_string(i) + ".w", "F32", "[4]", data);
        const std::vector<uint8_t> bytes = builder.bytes();
        const std::string digest = "sha256:" + sha256_hex_digest(as_text(bytes));
        paths.push_back("/v2/library/many/blobs/" + digest);
        registry.serve(paths.back(), as_text(bytes));
        layers.push_back({{"mediaType", "application/vnd.ollama.image.tensor"},
                          {"digest", digest},
                          {"size", bytes.size()},
                          {"name", "blk." + std::to_string(i) + ".w"}});
    }
    const std::string config = R"({"model_format":"safetensors","model_family":"llama"})";
    const std::string config_digest = "sha256:" + sha256_hex_digest(config);
    registry.serve("/v2/library/many/blobs/" + config_digest, config);
    const nlohmann::json manifest = {
        {"schemaVersion", 2},
        {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
        {"config", {{"mediaType", "application/vnd.docker.container.image.v1+json"}, {"digest", config_digest}, {"size", config.size()}}},
        {"layers", layers}};
    registry.serve("/v2/library/many/manifests/latest", manifest.dump());
    test::ScopedEnv address("OLLAMA_REGISTRY", registry.base_url());
    auto model = open_target(resolve("ollama://many"));
    REQUIRE(model);
    CHECK(model->error_count() == 0);
    REQUIRE(model->tensors.size() == blobs);
    auto value_of = [&](size_t blob) {
        const TensorInfo* t = model->find_tensor("blk." + std::to_string(blob) + ".w");
        REQUIRE(t);
        float value = -1;
        REQUIRE(model->read_tensor_bytes(static_cast<size_t>(t - model->tensors.data()), 0, sizeof value, &value));
        return value;
    };
    // The blob opened last is still held: its bytes are read without asking the registry.
    registry.clear_log();
    CHECK(value_of(blobs - 1) == static_cast<float>(blobs - 1));
    CHECK(registry.log().empty());
    // The first was let go: reading it opens it again, once, and its bytes are the same.
    CHECK(value_of(0) == 0.0f);
    CHECK(value_of(0) == 0.0f);
    const std::vector<test::LoggedRequest> log = registry.log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].target == paths[0]);
}
