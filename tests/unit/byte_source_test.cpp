// ByteSource over files: bounds-checked reads, and the descriptor pool that lets thousands of
// files be open as sources at once (an Ollama model with a blob per tensor) without running into
// the open-files limit.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mlens/io/byte_source.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

size_t open_descriptors() {
    size_t n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++n;
        ::closedir(d);
    }
    return n;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("the descriptor pool holds a quarter of the soft open-files limit, between 4 and 1024", "[io]") {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    const uint64_t soft = limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
    CHECK(descriptor_pool_capacity() == std::clamp<uint64_t>(soft / 4, 4, 1024));
}

TEST_CASE("twice as many file sources as the pool holds stay readable with a bounded number of descriptors", "[io]") {
    TempDir dir;
    const size_t before = open_descriptors();
    const size_t capacity = descriptor_pool_capacity();
    const int files = static_cast<int>(capacity) * 2 + 100;
    std::vector<ByteSourcePtr> sources;
    for (int i = 0; i < files; ++i) {
        std::string path = dir.file("blob-" + std::to_string(i));
        write_text(path, "blob " + std::to_string(i) + " payload");
        auto s = open_file(path);
        REQUIRE(s);
        sources.push_back(*s);
    }
    CHECK(open_descriptors() - before <= capacity);
    // Every source reads its own bytes, in an order that makes the pool reopen files.
    for (int round = 0; round < 2; ++round)
        for (int i = files - 1; i >= 0; i -= 7) {
            std::string expected = "blob " + std::to_string(i);
            std::string got(expected.size(), '\0');
            REQUIRE(sources[i]->read(0, got.size(), got.data()));
            CHECK(got == expected);
        }
    CHECK(open_descriptors() - before <= capacity);
    sources.clear();
    CHECK(open_descriptors() == before);
}

TEST_CASE("a closed descriptor is not reopened on another file swapped in under the same name", "[io]") {
    TempDir dir;
    std::string path = dir.file("victim");
    write_text(path, "original bytes");
    auto victim = open_file(path);
    REQUIRE(victim);
    // Push the victim's descriptor out of the pool with other sources' reads.
    std::vector<ByteSourcePtr> others;
    for (size_t i = 0; i < descriptor_pool_capacity() + 50; ++i) {
        std::string p = dir.file("other-" + std::to_string(i));
        write_text(p, "x");
        auto s = open_file(p);
        REQUIRE(s);
        char c = 0;
        REQUIRE((*s)->read(0, 1, &c));
        others.push_back(*s);
    }
    // The replacement exists before the original is gone, so it cannot reuse its inode.
    write_text(path + ".new", "replaced bytes");
    REQUIRE(std::rename((path + ".new").c_str(), path.c_str()) == 0);
    char buf[8] = {};
    CHECK_FALSE((*victim)->read(0, sizeof buf, buf));
    CHECK_FALSE((*victim)->read(100, 1, buf));  // out of bounds is refused before any reopen
}
