// The range cache's lock held by another process (range_cache.h): a step waits for it until the
// network time limit runs out, or at most 5 seconds without one, then goes on without the cache and
// says so; `cache --clear` fails with E_BUSY when the limit runs out, and then clears nothing. A
// wait is said once after 2 seconds. The holder here is the test itself: a flock belongs to the open file, so the cache of
// this process and of the mlens it runs wait for it as for another process.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "build_paths.h"
#include "cli_runner.h"
#include "loopback_server.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/range_cache.h"
#include "test_paths.h"
#include "time_limit.h"

using namespace mlens;

namespace {

const std::string kUrl = "http://127.0.0.1:9/a.gguf";

// Holds the lock of the cache folder (the test's private one) from construction until release(),
// at the latest `seconds` later: a wait that the lock should have cut short ends, late, instead of
// hanging the test.
class HeldLock {
public:
    explicit HeldLock(double seconds) {
        std::filesystem::create_directories(default_cache_folder());
        m_fd = ::open((default_cache_folder() + "/lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        REQUIRE(m_fd >= 0);
        REQUIRE(::flock(m_fd, LOCK_EX) == 0);
        m_releaser = std::thread([this, seconds] {
            std::unique_lock lock(m_mutex);
            m_released.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return m_done; });
            ::flock(m_fd, LOCK_UN);
        });
    }
    ~HeldLock() {
        release();
        m_releaser.join();
        ::close(m_fd);
    }
    void release() {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_released.notify_all();
    }

private:
    int m_fd = -1;
    std::mutex m_mutex;
    std::condition_variable m_released;
    bool m_done = false;
    std::thread m_releaser;
};

// A network time limit while it lives.
struct ScopedTimeLimit {
    explicit ScopedTimeLimit(double seconds) { set_network_time_limit(seconds); }
    ~ScopedTimeLimit() { set_network_time_limit(0); }
};

}  // namespace

TEST_CASE("with a network time limit, a held cache lock is waited for until the limit runs out, then the cache is passed by",
          "[remote][cache]") {
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open();
    auto entry = ranges->open_entry(kUrl, 64, "\"v1\"");
    REQUIRE(entry);
    const std::string lock = default_cache_folder() + "/lock";
    {
        HeldLock held(20);
        const ScopedTimeLimit limit(0.5);
        const auto start = std::chrono::steady_clock::now();
        CHECK_FALSE(ranges->open_entry("http://127.0.0.1:9/b.gguf", 64, "\"v1\""));
        CHECK_FALSE(entry->store(0, std::vector<uint8_t>(4, 'a')));
        const Status cleared = ranges->clear();
        REQUIRE_FALSE(cleared);
        CHECK(cleared.error().code == ErrorCode::E_BUSY);
        CHECK(cleared.error().message ==
              "the range cache's lock " + lock + " was held by another process until the network time limit of 0.5 s ran out");
        CHECK(test::seconds_since(start) < 5);
        CHECK(take_range_cache_warnings() ==
              std::vector<std::string>{
                  "the range cache's lock " + lock +
                  " was held by another process until the network time limit of 0.5 s ran out; remote ranges are not kept"});
    }
    // The lock let go, the entry stores again.
    REQUIRE(entry->store(0, std::vector<uint8_t>(4, 'a')));
    REQUIRE(ranges->contents().entries.size() == 1);
    CHECK(ranges->contents().entries[0].ranges == 1);
}

TEST_CASE("without a time limit, a held cache lock is waited for and the wait is said once after 2 seconds", "[remote][cache]") {
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open();
    std::mutex mutex;
    std::vector<std::string> notices;
    set_temp_notice_sink([&](const std::string& text) {
        std::lock_guard lock(mutex);
        notices.push_back(text);
    });
    const auto start = std::chrono::steady_clock::now();
    std::optional<CacheEntry> entry;
    {
        HeldLock held(2.6);
        entry = ranges->open_entry(kUrl, 64, "\"v1\"");
    }
    set_temp_notice_sink(nullptr);
    CHECK(test::seconds_since(start) >= 2.5);
    REQUIRE(entry);  // the wait ended with the lock, and the cache in use
    CHECK(notices ==
          std::vector<std::string>{"waiting for the range cache's lock " + default_cache_folder() + "/lock, which another process holds"});
}

TEST_CASE("without a time limit, a lock held past 5 seconds is passed by: the step goes on without the cache, and says so",
          "[remote][cache]") {
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open();
    const auto start = std::chrono::steady_clock::now();
    {
        HeldLock held(7);
        CHECK_FALSE(ranges->open_entry(kUrl, 64, "\"v1\""));
    }
    CHECK(test::seconds_since(start) >= 4.9);
    CHECK(take_range_cache_warnings() ==
          std::vector<std::string>{"the range cache's lock " + default_cache_folder() +
                                   "/lock was held by another process for 5 s; remote ranges are not kept"});
    // The lock let go, the cache is used again.
    CHECK(ranges->open_entry(kUrl, 64, "\"v1\""));
}

TEST_CASE("mlens says it waits for a range cache lock another process holds, and --max-time ends the wait", "[remote][cache][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf"));
    const std::string lock = default_cache_folder() + "/lock";
    {
        HeldLock held(2.6);
        const test::CliRun run = test::run_mlens({"info", server.url("/q4.gguf")});
        CHECK(run.exit_status == 0);
        CHECK(run.err.find("mlens: note: waiting for the range cache's lock " + lock + ", which another process holds\n") !=
              std::string::npos);
    }
    HeldLock held(20);
    const auto start = std::chrono::steady_clock::now();
    const test::CliRun run = test::run_mlens({"--max-time", "2", "info", server.url("/q4.gguf")});
    CHECK(test::seconds_since(start) < 10);
    CHECK(run.exit_status == 1);
    CHECK(run.err.find("warning: cache: the range cache's lock " + lock +
                       " was held by another process until the network time limit of 2 s ran out; remote ranges are not kept\n") !=
          std::string::npos);
}

TEST_CASE("mlens cache --clear clears nothing while another process holds the range cache's lock past --max-time", "[remote][cache][cli]") {
    test::PrivateHttpCache cache;
    REQUIRE(test::run_mlens({"fsck", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf"}).exit_status == 0);
    auto fsck_summaries = [] {
        const nlohmann::json j = test::run_mlens_json({"cache", "--json"});
        return j["database"]["entries"]["fsck_summaries"].get<uint64_t>();
    };
    REQUIRE(fsck_summaries() == 1);
    {
        HeldLock held(20);
        const test::CliRun run = test::run_mlens({"--max-time", "0.5", "cache", "--clear"});
        CHECK(run.exit_status == 1);
        CHECK(run.err.find("E_BUSY") != std::string::npos);
    }
    CHECK(fsck_summaries() == 1);
    REQUIRE(test::run_mlens({"cache", "--clear"}).exit_status == 0);
    CHECK(fsck_summaries() == 0);
}
