// Blob lookups through a listed blobs/ (store_lookup.h): the listing's metadata stands in for a
// stat of each blob, so every lookup must come out exactly as one that asks the file system —
// for healthy blobs, missing ones, FIFOs, directories, symlinks inside and outside the root,
// legacy names and hard links — and when blobs/ is a symlink the listing is not used at all. A
// blobs/ of thousands of entries (stat'ed on several threads) is listed as a small one is.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "broken_store.h"
#include "build_paths.h"
#include "mlens/ollama/store_lookup.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace fs = std::filesystem;

namespace {

std::string lookup_text(const BlobLookup& b) {
    std::string out = b.name + " ";
    if (b.error) out += std::string(code_name(b.error->code)) + " " + b.error->message;
    out += " " + b.path + " " + std::to_string(b.size) + " " + std::to_string(b.modified) + " " + std::to_string(b.device) + ":" +
        std::to_string(b.inode) + " " + std::to_string(b.mtime_ns) + " " + std::to_string(b.ctime_ns) + " " + std::to_string(b.legacy_name);
    for (const Error& w : b.warnings) out += "\n  " + std::string(code_name(w.code)) + " " + w.message;
    return out;
}

std::vector<std::string> names(const std::vector<BlobFile>& files) {
    std::vector<std::string> out;
    for (const BlobFile& f : files) out.push_back(f.name + " " + std::to_string(f.regular) + " " + std::to_string(f.size));
    return out;
}

// Every digest the store's manifests name, and one no blob has.
std::vector<BlobDigest> digests_of(const Store& store) {
    std::vector<BlobDigest> out = {*parse_blob_digest("sha256:" + std::string(64, 'e'))};
    for (const ManifestRef& ref : store.scan().manifests) {
        const StoredManifest m = store.read_manifest(ref);
        if (m.manifest.has_config && m.manifest.config.blob) out.push_back(*m.manifest.config.blob);
        for (const ManifestLayer& l : m.manifest.layers)
            if (l.blob) out.push_back(*l.blob);
    }
    return out;
}

// Lookups through the listing against lookups of their own; returns how many blobs were found.
size_t compare_lookups(const Store& store) {
    const BlobDirectory listed = open_listed_blob_directory(store);
    const BlobDirectory plain = open_blob_directory(store);
    CHECK(plain.listed.empty());
    CHECK(names(listed.files) == names(store.blob_files()));
    size_t found = 0;
    for (const BlobDigest& d : digests_of(store)) {
        const BlobLookup a = find_blob_in(store, listed, d), b = find_blob_in(store, plain, d);
        CHECK(lookup_text(a) == lookup_text(b));
        found += a.found();
    }
    return found;
}

}  // namespace

TEST_CASE("a listed blobs/ resolves every blob as a lookup of its own", "[ollama]") {
    TempDir dir, outside;
    const std::string root = dir.file("store");
    fs::copy(std::string(MLENS_DEMO_DIR) + "/ollama-store", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    OllamaStoreBuilder b(root);
    write_broken_store(b, outside.path());
    // A blob under its legacy name, one reached by a symlink inside the root, one hard-linked.
    const LayerSpec legacy = b.blob(kLicenseMediaType, "legacy license");
    const std::string hex = legacy.digest.substr(7);
    fs::rename(root + "/blobs/sha256-" + hex, root + "/blobs/sha256:" + hex);
    const LayerSpec linked = b.blob(kLicenseMediaType, "linked license");
    const std::string linked_hex = linked.digest.substr(7);
    fs::create_directories(root + "/elsewhere");
    fs::rename(root + "/blobs/sha256-" + linked_hex, root + "/elsewhere/blob");
    fs::create_symlink("../elsewhere/blob", root + "/blobs/sha256-" + linked_hex);
    const LayerSpec hard = b.blob(kLicenseMediaType, "hard license");
    fs::create_hard_link(root + "/blobs/sha256-" + hard.digest.substr(7), root + "/hard-copy");
    const LayerSpec config = b.blob(kImageConfigMediaType, config_json("gguf", "llama", "F32"));
    b.write_manifest("registry.ollama.ai/library/lookups/latest", manifest_json(config, {legacy, linked, hard}));

    auto store = Store::open(root);
    REQUIRE(store);
    const BlobDirectory listed = open_listed_blob_directory(*store);
    CHECK(listed.listed.size() == listed.files.size());
    for (const BlobFile& f : listed.files) CHECK(listed.listed_stat(f.name) != nullptr);
    CHECK(listed.listed_stat("sha256-absent") == nullptr);
    CHECK(listed.files.size() > 20);
    CHECK(compare_lookups(*store) > 20);
}

TEST_CASE("a blobs/ that is a symlink is looked up without its listing", "[ollama]") {
    TempDir dir;
    const std::string root = dir.file("store");
    fs::copy(std::string(MLENS_DEMO_DIR) + "/ollama-store", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::rename(root + "/blobs", root + "/real-blobs");
    fs::create_directory_symlink("real-blobs", root + "/blobs");
    auto store = Store::open(root);
    REQUIRE(store);
    const BlobDirectory listed = open_listed_blob_directory(*store);
    CHECK(listed.listed.empty());
    CHECK(listed.files.empty());
    CHECK(compare_lookups(*store) > 5);
}

TEST_CASE("a store spells a path under its root with one slash, however the store was named", "[ollama]") {
    TempDir dir;
    const std::string root = dir.file("store");
    fs::copy(std::string(MLENS_DEMO_DIR) + "/ollama-store", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    auto store = Store::open(root + "//");
    REQUIRE(store);
    const std::string canonical = fs::canonical(root).string();
    CHECK(store->root() == canonical);
    CHECK(store->path_of("blobs") == canonical + "/blobs");
    CHECK(store->path_of("blobs/").append("sha256-x") == canonical + "/blobs/sha256-x");
    const StoreScan scan = store->scan();
    REQUIRE_FALSE(scan.manifests.empty());
    CHECK(fs::is_regular_file(store->path_of(scan.manifests.front().path)));
}

TEST_CASE("a blobs/ of thousands of entries is listed in name order, each with its own stat", "[ollama]") {
    TempDir dir;
    const std::string root = dir.file("store");
    fs::create_directories(root + "/manifests");
    fs::create_directories(root + "/blobs");
    // 2,100 blob names spread over the whole hex range (more than one stat thread's share), their
    // sizes telling them apart, plus names that are no blob.
    std::vector<std::string> expected;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < 2100; ++i) {
        std::string name = "sha256-";
        for (int digit = 0; digit < 64; ++digit) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            name += "0123456789abcdef"[state >> 60];
        }
        std::ofstream(root + "/blobs/" + name) << std::string(i % 97, 'x');
        expected.push_back(name + " 1 " + std::to_string(i % 97));
    }
    for (const char* other : {"sha256-12345", "notes.txt", "sha256:0", "sha256-fff", "sha256-A0f", "sha256-ffg0"}) {
        std::ofstream(root + "/blobs/" + other) << other;
        expected.push_back(std::string(other) + " 1 " + std::to_string(std::strlen(other)));
    }
    fs::create_directory(root + "/blobs/sha256-dir");
    expected.push_back("sha256-dir 0 0");
    std::sort(expected.begin(), expected.end(), [](const std::string& a, const std::string& b) {
        return a.substr(0, a.find(' ')) < b.substr(0, b.find(' '));
    });

    auto store = Store::open(root);
    REQUIRE(store);
    const BlobDirectory listed = open_listed_blob_directory(*store);
    CHECK(names(listed.files) == expected);
    REQUIRE(listed.listed.size() == listed.files.size());
    CHECK(listed.listed_index.size() == 2100);  // every blob name indexed by its digest, no other name
    size_t same = 0;
    for (size_t i = 0; i < listed.files.size(); ++i) {
        struct stat st {};
        REQUIRE(::fstatat(listed.fd.get(), listed.files[i].name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0);
        const struct stat* seen = listed.listed_stat(listed.files[i].name);
        REQUIRE(seen != nullptr);
        same += seen == &listed.listed[i] && seen->st_ino == st.st_ino && seen->st_size == st.st_size && seen->st_mode == st.st_mode;
    }
    CHECK(same == listed.files.size());
    CHECK(listed.listed_stat("sha256-" + std::string(64, 'f')) == nullptr);
    CHECK(listed.listed_stat("sha256-") == nullptr);
    CHECK(listed.listed_stat("sha256-ff") == nullptr);
    CHECK(listed.listed_stat("sha256-fffa") == nullptr);
    CHECK(listed.listed_stat("") == nullptr);
}
