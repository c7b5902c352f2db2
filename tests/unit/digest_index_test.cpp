// DigestIndex and sha256_bytes (digest_index.h): digests told apart however long the prefix
// they share, the grammar's lowercase hex only, a table that never grows past its capacity; and
// the directory names the store lists (posix_dir.h) in std::string's order, however they share
// their first bytes.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../core/src/ollama/posix_dir.h"
#include "mlens/io/unique_fd.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/digest_index.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

Sha256Bytes key_of(const std::string& hex) {
    const std::optional<Sha256Bytes> key = sha256_bytes(hex);
    REQUIRE(key);
    return *key;
}

}  // namespace

TEST_CASE("sha256_bytes reads 64 lowercase hex digits and nothing else", "[ollama]") {
    const std::optional<Sha256Bytes> key = sha256_bytes("00ff10a0" + std::string(56, '9'));
    REQUIRE(key);
    CHECK((*key)[0] == 0x00);
    CHECK((*key)[1] == 0xff);
    CHECK((*key)[2] == 0x10);
    CHECK((*key)[3] == 0xa0);
    CHECK((*key)[31] == 0x99);
    // Every byte value, in every place, back from its hex.
    for (int round = 0; round < 8; ++round) {
        Sha256Bytes bytes{};
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(round * 32 + i);
        CHECK(sha256_bytes(to_hex(bytes.data(), bytes.size())) == std::optional<Sha256Bytes>(bytes));
    }
    for (size_t at = 0; at < 64; ++at)
        for (char bad : {'A', 'F', 'g', '/', ':', '`', '\x80'}) {
            std::string hex(64, '5');
            hex[at] = bad;
            CHECK(!sha256_bytes(hex));
        }
    CHECK(!sha256_bytes(std::string(63, 'a')));
    CHECK(!sha256_bytes(std::string(65, 'a')));
    CHECK(!sha256_bytes(std::string(63, 'a') + "A"));  // uppercase is not the digest grammar
    CHECK(!sha256_bytes(std::string(63, 'a') + "g"));
    CHECK(!sha256_bytes(std::string(63, 'a') + ":"));
    CHECK(!sha256_bytes(std::string(62, 'a') + "\xC3\xA9"));
    CHECK(!sha256_bytes(std::string(63, 'a') + std::string(1, '\0')));
}

TEST_CASE("a DigestIndex tells apart digests sharing any prefix", "[ollama]") {
    // 300 digests that share their first 62 digits two by two, and 256 that differ only in their
    // last byte: every one lands in the same first slot or next to it.
    std::vector<std::string> hexes;
    for (int i = 0; i < 256; ++i) {
        char tail[3];
        std::snprintf(tail, sizeof tail, "%02x", i);
        hexes.push_back(std::string(62, '7') + tail);
    }
    for (int i = 0; i < 150; ++i) {
        char head[9];
        std::snprintf(head, sizeof head, "%08x", i * 2654435761u);
        hexes.push_back(std::string(head) + std::string(54, 'b') + "00");
        hexes.push_back(std::string(head) + std::string(54, 'b') + "01");
    }
    DigestIndex index(hexes.size());
    for (size_t i = 0; i < hexes.size(); ++i) {
        const auto [value, inserted] = index.insert(key_of(hexes[i]), static_cast<uint32_t>(i));
        CHECK(inserted);
        CHECK(value == i);
    }
    CHECK(index.size() == hexes.size());
    for (size_t i = 0; i < hexes.size(); ++i) CHECK(index.find(key_of(hexes[i])) == std::optional<uint32_t>(static_cast<uint32_t>(i)));
    // Inserting one again keeps the first value; a digest never inserted is not found.
    CHECK(index.insert(key_of(hexes[5]), 9999) == std::pair<uint32_t, bool>{5, false});
    CHECK(!index.find(key_of(std::string(64, '8'))));
    CHECK(!index.find(key_of(std::string(61, '7') + "100")));
}

TEST_CASE("a DigestIndex holds at most its capacity", "[ollama]") {
    DigestIndex index(2);
    CHECK(index.insert(key_of(std::string(64, '1')), 1).second);
    CHECK(index.insert(key_of(std::string(64, '2')), 2).second);
    CHECK(index.insert(key_of(std::string(64, '3')), 3) == std::pair<uint32_t, bool>{DigestIndex::kNoValue, false});
    CHECK(!index.find(key_of(std::string(64, '3'))));
    CHECK(index.find(key_of(std::string(64, '2'))) == std::optional<uint32_t>(2));
    CHECK(index.size() == 2);
    const DigestIndex empty;
    CHECK(!empty.find(key_of(std::string(64, '1'))));
}

TEST_CASE("directory names come sorted as strings, however long the prefix they share", "[ollama]") {
    TempDir dir;
    std::vector<std::string> names = {"sha256-",         "sha256-a",        "sha256-ab",        "sha256-abcdefgh", "sha256-abcdefgh1",
                                      "sha256-abcdefgg", "sha256-abcdefgi", "sha256-abcdefgh0", "sha256-\xC3\xA9", "sha256-~",
                                      "sha256-A",        "sha256-abcdefg",  "sha256-abcdefgh10"};
    for (const std::string& n : names) std::ofstream(dir.file(n)) << n;
    const UniqueFd fd = open_directory_at(AT_FDCWD, dir.path());
    REQUIRE(fd.valid());
    bool truncated = true;
    int error = -1;
    const DirectoryNames listed = read_directory_names(fd.get(), 100, truncated, &error);
    CHECK(!truncated);
    CHECK(error == 0);
    std::vector<std::string> got;
    for (size_t i = 0; i < listed.size(); ++i) got.emplace_back(listed.name(i));
    std::sort(names.begin(), names.end());
    CHECK(got == names);
    // Names that share no prefix at all.
    for (const char* n : {"b", "a", "ab", "\x7f"}) std::ofstream(dir.file(n)) << n;
    for (const char* n : {"b", "a", "ab", "\x7f"}) names.emplace_back(n);
    std::sort(names.begin(), names.end());
    const DirectoryNames all = read_directory_names(fd.get(), 100, truncated, &error);
    got.clear();
    for (size_t i = 0; i < all.size(); ++i) got.emplace_back(all.name(i));
    CHECK(got == names);
    // At most max_entries names.
    const DirectoryNames three = read_directory_names(fd.get(), 3, truncated, &error);
    CHECK(three.size() == 3);
    CHECK(truncated);
}
