// The range cache's entries are named by a 64-bit digest of the URL: an entry found under a URL's
// name that was stored for another URL (a digest both share) is a miss for it, and left to its own;
// an entry opened before its folder was made again for another URL neither reads nor writes there.
// What runs killed while storing left (temporaries, an entry folder without its entry file) is
// counted, and removed by clear, eviction and a newer version; a live writer's temporary stays.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "loopback_server.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/remote/range_cache.h"
#include "mlens/remote/remote_source.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// The only entry folder in the cache.
std::string only_entry_folder() {
    std::vector<std::string> folders;
    for (const auto& item : std::filesystem::directory_iterator(default_cache_folder()))
        if (item.is_directory()) folders.push_back(item.path().string());
    REQUIRE(folders.size() == 1);
    return folders[0];
}

// Makes the entry at `folder` another URL's: the same name, size and validator, that URL in its
// "entry" file and other bytes in its range files.
void give_entry_to(const std::string& folder, const std::string& url) {
    std::ifstream in(folder + "/entry");
    std::string stored_url, size, validator;
    REQUIRE(std::getline(in, stored_url));
    REQUIRE(std::getline(in, size));
    REQUIRE(std::getline(in, validator));
    in.close();
    std::ofstream(folder + "/entry", std::ios::trunc) << url << "\n" << size << "\n" << validator << "\n";
    for (const auto& item : std::filesystem::directory_iterator(folder)) {
        if (item.path().filename() == "entry") continue;
        std::vector<uint8_t> bytes = test::read_whole_file(item.path().string());
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(~b);
        test::write_whole_file(item.path().string(), bytes);
    }
}

// The owner stamp of a process that is gone: this process's pid with another start time.
std::string gone_owner() { return test::gone_owner_stamp(::getpid()); }

// A writer's temporary of `target` in `folder` (as SafeFileWriter names it) holding `bytes` bytes.
std::string temporary(const std::string& folder, const std::string& target, const std::string& owner, size_t bytes) {
    const std::string path = folder + "/." + target + ".tmp-" + owner + "-a1b2c3";
    test::write_whole_file(path, std::vector<uint8_t>(bytes, 't'));
    return path;
}

}  // namespace

TEST_CASE("a cache entry stored for another URL under the same name is a miss and stays that URL's", "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    const std::string file = std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf";
    REQUIRE(server.serve_file("/a.gguf", file));
    const std::vector<uint8_t> bytes = test::read_whole_file(file);
    RemoteOptions options;
    options.cache = RangeCache::open();
    REQUIRE(open_remote(server.url("/a.gguf"), options));
    give_entry_to(only_entry_folder(), server.url("/b.gguf"));
    CHECK_FALSE(options.cache->has_url(server.url("/a.gguf")));

    server.clear_log();
    auto source = open_remote(server.url("/a.gguf"), options);
    REQUIRE(source);
    std::vector<uint8_t> head(4096);
    REQUIRE((*source)->read(0, head.size(), head.data()));
    CHECK(std::equal(head.begin(), head.end(), bytes.begin()));
    const auto log = server.log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].range == "bytes=0-524287");

    options.cache->forget(server.url("/a.gguf"));
    const std::vector<CacheEntryInfo> entries = options.cache->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].url == server.url("/b.gguf"));
    CHECK(entries[0].bytes == bytes.size());
}

TEST_CASE("an entry made again for another URL is neither read nor written by the entry opened before", "[remote][cache]") {
    test::PrivateHttpCache cache;
    const std::string a = "http://127.0.0.1:9/a.gguf", b = "http://127.0.0.1:9/b.gguf";
    auto ranges = RangeCache::open();
    auto entry = ranges->open_entry(a, 8, "\"v1\"");
    REQUIRE(entry);
    REQUIRE(entry->store(0, std::vector<uint8_t>(4, 'a')));
    give_entry_to(only_entry_folder(), b);
    const std::optional<StoredRange> stored = entry->range_at(0);
    REQUIRE(stored);
    uint8_t byte = 0;
    CHECK_FALSE(entry->read(*stored, 0, 1, &byte));
    CHECK_FALSE(entry->store(4, std::vector<uint8_t>(4, 'a')));
    CHECK_FALSE(ranges->open_entry(a, 8, "\"v1\""));
    const std::vector<CacheEntryInfo> entries = ranges->contents().entries;
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].url == b);
    CHECK(entries[0].ranges == 1);
}

TEST_CASE("clearing the range cache removes only what the cache wrote - never a user's files or what a link leads to", "[remote][cache]") {
    namespace fs = std::filesystem;
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open();
    auto entry = ranges->open_entry("http://127.0.0.1:9/a.gguf", 8, "\"v1\"");
    REQUIRE(entry);
    REQUIRE(entry->store(0, std::vector<uint8_t>(4, 'a')));
    const std::string folder = default_cache_folder(), own = only_entry_folder();
    // A user's files beside the entries and inside one, and a link shaped as an entry folder to a
    // folder that looks like an entry.
    test::TempDir elsewhere;
    const std::vector<std::string> kept = {folder + "/notes.txt", folder + "/projects/thesis.tex", own + "/mine.txt",
                                           elsewhere.file("looks/entry"), elsewhere.file("looks/0-4")};
    for (const std::string& path : kept) {
        fs::create_directories(fs::path(path).parent_path());
        test::write_whole_file(path, std::vector<uint8_t>(3, 'u'));
    }
    fs::create_directory_symlink(elsewhere.file("looks"), folder + "/0123456789abcdef-0123456789abcdef");
    REQUIRE(ranges->clear());
    for (const std::string& path : kept) CHECK(fs::exists(path));
    CHECK_FALSE(fs::exists(own + "/entry"));
    CHECK_FALSE(fs::exists(own + "/0-4"));
    CHECK(ranges->contents().entries.empty());

    // A cache folder that is a link to a user's folder: its files stay too.
    test::TempDir user;
    test::write_whole_file(user.file("thesis.tex"), std::vector<uint8_t>(3, 'u'));
    fs::create_directories(user.file("sub"));
    test::write_whole_file(user.file("sub/data.csv"), std::vector<uint8_t>(3, 'u'));
    fs::create_directory_symlink(user.path(), elsewhere.file("http"));
    REQUIRE(RangeCache::open(elsewhere.file("http"))->clear());
    CHECK(fs::exists(user.file("thesis.tex")));
    CHECK(fs::exists(user.file("sub/data.csv")));
}

TEST_CASE("what runs killed while storing left is counted and cleared - a live writer's temporary and a user's files stay",
          "[remote][cache]") {
    namespace fs = std::filesystem;
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open();
    auto entry = ranges->open_entry("http://127.0.0.1:9/a.gguf", 64, "\"v1\"");
    REQUIRE(entry);
    REQUIRE(entry->store(0, std::vector<uint8_t>(4, 'a')));
    const std::string own = only_entry_folder(), folder = default_cache_folder();
    const std::string killed = temporary(own, "4-8", gone_owner(), 8);
    const std::string writing = temporary(own, "12-8", owner_stamp(), 8);  // this process still writes it
    const std::string users = temporary(own, "notes.txt", gone_owner(), 3);  // not a file the cache writes
    // An entry folder whose entry file is gone: a range and a killed run's temporary.
    const std::string orphan = folder + "/0123456789abcdef-fedcba9876543210";
    fs::create_directories(orphan);
    test::write_whole_file(orphan + "/0-16", std::vector<uint8_t>(16, 'r'));
    temporary(orphan, "entry", gone_owner(), 32);

    CHECK(ranges->contents().leftover_bytes == 8 + 16 + 32);
    REQUIRE(ranges->contents().entries.size() == 1);
    CHECK(ranges->contents().entries[0].bytes == 4);
    const test::CliRun listed = test::run_mlens({"cache"});
    CHECK(listed.out.find("left by stopped runs        56 B (56 bytes), removed by --clear\n") != std::string::npos);
    CHECK(test::run_mlens_json({"cache", "--json"})["remote_ranges"]["leftover_bytes"] == 56);

    const test::CliRun cleared = test::run_mlens({"cache", "--clear"});
    CHECK(cleared.exit_status == 0);
    CHECK(cleared.out.starts_with(
        "removed 0 database entries and 1 range entry of 4 B (4 bytes) and 56 B (56 bytes) left by stopped runs from "));
    CHECK_FALSE(fs::exists(killed));
    CHECK_FALSE(fs::exists(orphan));
    CHECK(fs::exists(writing));
    CHECK(fs::exists(users));
    CHECK(fs::exists(own));  // it still holds them
    CHECK(ranges->contents().leftover_bytes == 0);
}

TEST_CASE("eviction removes what killed runs left in any entry, and a newer version removes the older one whole", "[remote][cache]") {
    namespace fs = std::filesystem;
    test::PrivateHttpCache cache;
    auto ranges = RangeCache::open(default_cache_folder(), 100);
    const std::string a = "http://127.0.0.1:9/a.gguf", b = "http://127.0.0.1:9/b.gguf";
    auto v1 = ranges->open_entry(a, 64, "\"v1\"");
    REQUIRE(v1);
    REQUIRE(v1->store(0, std::vector<uint8_t>(40, 'a')));
    const std::string v1_folder = only_entry_folder();
    temporary(v1_folder, "40-8", gone_owner(), 80);
    // The file changed on the server: its old version goes, the killed run's temporary with it.
    auto v2 = ranges->open_entry(a, 64, "\"v2\"");
    REQUIRE(v2);
    CHECK_FALSE(fs::exists(v1_folder));
    const std::string a_folder = only_entry_folder();
    REQUIRE(v2->store(0, std::vector<uint8_t>(40, 'a')));

    // Another file's entry with a killed run's temporary, and a folder without its entry file: the
    // next store anywhere removes both, and keeps the two entries (48 bytes of ranges, under 100).
    auto other = ranges->open_entry(b, 64, "\"v1\"");
    REQUIRE(other);
    std::string b_folder;
    for (const auto& item : fs::directory_iterator(default_cache_folder()))
        if (item.is_directory() && item.path().string() != a_folder) b_folder = item.path().string();
    const std::string stale = temporary(b_folder, "0-8", gone_owner(), 80);
    const std::string orphan = default_cache_folder() + "/0123456789abcdef-fedcba9876543210";
    fs::create_directories(orphan);
    test::write_whole_file(orphan + "/0-16", std::vector<uint8_t>(16, 'r'));
    CHECK(ranges->contents().leftover_bytes == 96);
    REQUIRE(v2->store(40, std::vector<uint8_t>(8, 'a')));
    CHECK_FALSE(fs::exists(stale));
    CHECK_FALSE(fs::exists(orphan));
    CHECK(ranges->contents().leftover_bytes == 0);
    CHECK(ranges->contents().entries.size() == 2);
}
