// The cache database (io/cache_database.h) and the store check's use of it (store_check.h):
// answers keyed by file identity, invalidated by every change to the file, shared by processes,
// rebuilt when unreadable, skipped when the folder cannot be written, and never different from a
// fresh check.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <fstream>

#include "build_paths.h"
#include "broken_store.h"
#include "cli_runner.h"
#include <sqlite3.h>

#include "mlens/io/cache_database.h"
#include "mlens/io/cache_entries.h"
#include "mlens/ollama/store_listing.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

void write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
}

FileStamp stamp_of(const std::string& path) {
    std::optional<FileStamp> id = file_stamp(path);
    REQUIRE(id);
    return *id;
}

// Stores "answer" for `path` and reports whether a fresh connection finds it again.
bool remembered(const std::string& folder, const FileStamp& stored, const FileStamp& asked) {
    CacheDatabase::open(folder)->store(CacheKind::blob_digest, stored, "sha256", "answer");
    return CacheDatabase::open(folder)->lookup(CacheKind::blob_digest, asked, "sha256") == std::optional<std::string>("answer");
}

// Every verdict of a listing as text: model, verdict, digests, each reason's line.
std::string verdicts(const StoreListing& l) {
    std::string out = "digests " + std::to_string(l.digests_verified) + "\n";
    for (const ModelListing& m : l.models) {
        out += m.ref.name.display() + " " + verdict_name(m.check.verdict()) + " " + std::to_string(m.check.digests_verified) + " " +
            m.check.reason_text() + " loads " + (m.loads ? m.loads->label() : std::string("-")) + "\n";
        for (const Diagnostic& d : m.check.reasons) out += "  " + d.to_line() + "\n";
    }
    return out;
}

// What a listing shows beside the verdicts: each row's manifest facts and config fields, and
// which blob files are referenced.
std::string rows(const StoreListing& l) {
    std::string out;
    for (const ModelListing& m : l.models)
        out += m.ref.name.display() + " " + m.ref.path + " " + std::to_string(m.ref.modified) + " " + std::to_string(m.ref.file_size) + " " +
            (m.size ? std::to_string(*m.size) : "-") + " " + m.format + " " + m.family + " " + m.parameter_size + " " + m.quantization + "\n";
    for (const ListedBlobFile& f : l.blob_files) out += f.file.name + " " + std::to_string(f.referenced) + "\n";
    return out;
}

std::string report_text(const StoreCheckReport& r) {
    std::string out = std::to_string(r.blobs_checked) + " blobs, " + std::to_string(r.bytes_hashed) + " bytes\n";
    for (const Diagnostic& d : r.diagnostics) out += d.to_line() + "\n";
    return out;
}

// A copy of the demo store plus the damaged models of broken_store.h.
struct MixedStore {
    TempDir dir, outside;
    std::string root = dir.file("store");
    MixedStore() {
        fs::copy(kDemoStore, root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        OllamaStoreBuilder b(root);
        write_broken_store(b, outside.path());
    }
};

// The value of the row `label` of a two-column text table ("label   value"), or "" when absent.
std::string row_value(const std::string& out, const std::string& label) {
    for (const std::string& line : lines_of(out))
        if (line.starts_with(label + "  ")) return line.substr(line.find_first_not_of(' ', label.size()));
    return {};
}

// Runs `body` in a child process as user nobody when this one is root (so permissions bite) and
// returns its exit status.
template <typename F>
int as_unprivileged_child(F body) {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (::geteuid() == 0 && (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)) ::_exit(90);
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("a cached answer is found only while the file keeps its identity", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("cache"), file = dir.file("blob");
    write_text(file, "0123456789");
    const FileStamp first = stamp_of(file);
    CHECK(remembered(folder, first, first));

    SECTION("touch") {
        struct timespec times[2] = {{0, UTIME_NOW}, {1'600'000'000, 123}};
        REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
        CHECK(stamp_of(file).mtime_ns != first.mtime_ns);
        CHECK(!remembered(folder, first, stamp_of(file)));
    }
    SECTION("truncate") {
        REQUIRE(::truncate(file.c_str(), 4) == 0);
        CHECK(stamp_of(file).size == 4);
        CHECK(!remembered(folder, first, stamp_of(file)));
    }
    SECTION("replace by rename") {
        write_text(dir.file("new"), "0123456789");
        REQUIRE(::rename(dir.file("new").c_str(), file.c_str()) == 0);
        CHECK(stamp_of(file).inode != first.inode);
        CHECK(!remembered(folder, first, stamp_of(file)));
    }
    SECTION("inode reuse") {
        // The file is removed and another of the same size and modification time created; when
        // the file system hands out the same inode again, the change time still tells them apart.
        REQUIRE(::unlink(file.c_str()) == 0);
        write_text(file, "abcdefghij");
        struct timespec times[2] = {{0, UTIME_OMIT}, {first.mtime_ns / 1'000'000'000, first.mtime_ns % 1'000'000'000}};
        REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
        FileStamp again = stamp_of(file);
        CHECK(again.mtime_ns == first.mtime_ns);
        CHECK(again.size == first.size);
        INFO("inode reused: " << (again.inode == first.inode));
        CHECK(again.ctime_ns != first.ctime_ns);
        CHECK(!remembered(folder, first, again));
        // The same device, inode, size and modification time with another change time: a miss.
        FileStamp reused = first;
        reused.ctime_ns += 1;
        CHECK(!remembered(folder, first, reused));
    }
    SECTION("another kind or detail") {
        CHECK(!CacheDatabase::open(folder)->lookup(CacheKind::blob_header, first, "sha256"));
        CHECK(!CacheDatabase::open(folder)->lookup(CacheKind::blob_digest, first, "header:model"));
    }
}

TEST_CASE("a database of garbage bytes is rebuilt with a warning", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("cache");
    fs::create_directories(folder);
    std::string garbage(8192, '\0');
    for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 251);
    write_text(folder + "/cache.sqlite", garbage);
    auto db = CacheDatabase::open(folder);
    CHECK(db->enabled());
    REQUIRE(db->warnings().size() == 1);
    CHECK(db->warnings()[0].find("could not be read") != std::string::npos);
    CHECK(db->warnings()[0].find("rebuilt") != std::string::npos);
    // Said once.
    CHECK(db->take_warnings().size() == 1);
    CHECK(db->take_warnings().empty());
    const FileStamp id{1, 2, 3, 4, 5};
    db->store(CacheKind::fsck_summary, id, "fsck", "{}");
    db->flush();
    CHECK(CacheDatabase::open(folder)->lookup(CacheKind::fsck_summary, id, "fsck") == std::optional<std::string>("{}"));
    CHECK(CacheDatabase::open(folder)->warnings().empty());
}

TEST_CASE("a database whose entries table is another program's is rebuilt with a warning", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("cache");
    fs::create_directories(folder);
    sqlite3* other = nullptr;
    REQUIRE(sqlite3_open((folder + "/cache.sqlite").c_str(), &other) == SQLITE_OK);
    REQUIRE(sqlite3_exec(other, "CREATE TABLE entries(name TEXT, note TEXT); INSERT INTO entries VALUES('a', 'b')", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(other);
    auto db = CacheDatabase::open(folder);
    CHECK(db->enabled());
    REQUIRE(db->warnings().size() == 1);
    CHECK(db->warnings()[0].find("rebuilt empty") != std::string::npos);
    const FileStamp id{1, 2, 3, 4, 5};
    db->store(CacheKind::fsck_summary, id, "fsck", "{}");
    db->flush();
    CHECK(CacheDatabase::open(folder)->lookup(CacheKind::fsck_summary, id, "fsck") == std::optional<std::string>("{}"));
}

TEST_CASE("a database file that cannot be written works uncached and says so", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("cache");
    fs::create_directories(folder);
    const FileStamp id{1, 2, 3, 4, 5};
    {
        auto db = CacheDatabase::open(folder);
        db->store(CacheKind::blob_digest, id, "sha256", "x");
    }
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    REQUIRE(::chmod(folder.c_str(), 0777) == 0);
    REQUIRE(::chmod((folder + "/cache.sqlite").c_str(), 0444) == 0);
    const int status = as_unprivileged_child([&] {
        auto db = CacheDatabase::open(folder);
        if (db->enabled()) return 1;
        if (db->warnings().size() != 1 || db->warnings()[0].find("cannot be written") == std::string::npos) return 2;
        if (db->lookup(CacheKind::blob_digest, id, "sha256")) return 3;
        // Clearing it removes nothing, and says so: no success.
        const Status cleared = db->clear();
        return cleared ? 4 : cleared.error().code == ErrorCode::E_PERMISSION ? 0 : 5;
    });
    CHECK(status == 0);
    CHECK(CacheDatabase::open(folder)->lookup(CacheKind::blob_digest, id, "sha256") == std::optional<std::string>("x"));
}

TEST_CASE("a cache folder that cannot be written works uncached and says so", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("readonly");
    fs::create_directories(folder);
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    REQUIRE(::chmod(folder.c_str(), 0555) == 0);
    const int status = as_unprivileged_child([&] {
        auto db = CacheDatabase::open(folder);
        if (db->enabled()) return 1;
        if (db->warnings().size() != 1 || db->warnings()[0].find("working uncached") == std::string::npos) return 2;
        const FileStamp id{1, 2, 3, 4, 5};
        db->store(CacheKind::blob_digest, id, "sha256", "x");
        db->flush();
        if (db->lookup(CacheKind::blob_digest, id, "sha256")) return 3;
        return fs::exists(folder + "/cache.sqlite") ? 4 : 0;
    });
    CHECK(status == 0);
}

TEST_CASE("a cached store check is the fresh one, and a changed blob is judged afresh", "[cache][ollama]") {
    MixedStore store;
    TempDir cache_dir;
    auto opened = Store::open(store.root);
    REQUIRE(opened);
    const auto cache = CacheDatabase::open(cache_dir.path());
    const StoreListing fresh = list_store(*opened, full_check(nullptr)).value;
    const StoreCheckReport fresh_report = check_store(*opened, full_check(nullptr)).value;

    // Nothing cached yet: the cache-only listing knows the errors found without reading a blob
    // and says "not yet verified" for the rest.
    const StoreListing cold = list_store(*opened, cached_check(*cache)).value;
    size_t unverified = 0;
    for (const ModelListing& m : cold.models) {
        unverified += m.check.verdict() == Verdict::unverified;
        CHECK(!m.loads);
    }
    CHECK(unverified > 0);
    CHECK(!cold.digests_verified);
    CHECK(rows(cold) == rows(fresh));

    const StoreListing filling = list_store(*opened, full_check(cache.get())).value;
    CHECK(verdicts(filling) == verdicts(fresh));
    const StoreListing cached = list_store(*opened, full_check(cache.get())).value;
    CHECK(verdicts(cached) == verdicts(fresh));
    CHECK(report_text(check_store(*opened, full_check(cache.get())).value) == report_text(fresh_report));
    const auto counts = cache->entry_counts();
    CHECK(counts[0].entries > 0);
    CHECK(counts[1].entries > 0);

    // Once filled, the cache-only listing has every verdict the full check gives, the loadability
    // verdicts included.
    const StoreListing warm = list_store(*opened, cached_check(*cache)).value;
    CHECK(verdicts(warm) == verdicts(fresh));
    REQUIRE(warm.models.size() == fresh.models.size());
    for (size_t i = 0; i < warm.models.size(); ++i) {
        INFO(warm.models[i].ref.name.display());
        CHECK(warm.models[i].check.verdict() == fresh.models[i].check.verdict());
        CHECK(warm.models[i].check.reason_text() == fresh.models[i].check.reason_text());
        CHECK(warm.models[i].check.digests_verified);
    }
    CHECK(warm.digests_verified);
    CHECK(rows(warm) == rows(fresh));
    // The whole store reads the cache by device at once; one model looks its blobs up one by one:
    // the same answers.
    for (const ModelListing& m : warm.models) {
        INFO(m.ref.name.display());
        const ModelCheck one = check_store_model(*opened, m.ref.name, cached_check(*cache));
        CHECK(one.reason_text() == m.check.reason_text());
        CHECK(one.digests_verified == m.check.digests_verified);
    }

    // A blob overwritten in place with other bytes of the same size: a miss, judged afresh.
    std::string largest;
    uintmax_t largest_size = 0;
    for (const auto& e : fs::directory_iterator(store.root + "/blobs"))
        if (e.is_regular_file() && !e.is_symlink() && e.file_size() > largest_size) {
            largest = e.path().string();
            largest_size = e.file_size();
        }
    REQUIRE(!largest.empty());
    {
        std::fstream f(largest, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(0);
        f.write("XXXX", 4);
    }
    const StoreListing changed_fresh = list_store(*opened, full_check(nullptr)).value;
    const StoreListing changed_cached = list_store(*opened, full_check(cache.get())).value;
    CHECK(verdicts(changed_cached) == verdicts(changed_fresh));
    CHECK(verdicts(changed_cached) != verdicts(fresh));
}

TEST_CASE("a cached listing is the fresh one for digests sharing a prefix, names that are no digest and two digests of one file",
          "[cache][ollama]") {
    TempDir dir, cache_dir;
    const std::string root = dir.file("store");
    fs::create_directories(root);
    OllamaStoreBuilder b(root);
    b.add_tiny();
    const std::string config = config_json("safetensors", "llama", "F32");
    // Two blob names whose digests share their first 62 hex digits (and 8-byte slot key), each
    // holding bytes of another digest: both are mismatches, each of its own.
    const std::string shared(62, 'c');
    std::vector<LayerSpec> twins;
    for (const char* tail : {"01", "02"}) {
        const std::string hex = shared + tail, bytes = std::string("twin ") + tail;
        write_text(root + "/blobs/sha256-" + hex, bytes);
        twins.push_back(LayerSpec(std::string(kTensorMediaType), "sha256:" + hex, bytes.size(), std::nullopt, std::string("twin.") + tail));
    }
    b.add_model("twins", twins, config);
    // A layer naming its blob in uppercase hex (not a digest), the file of that name beside the
    // blobs, and a file whose name is 63 hex digits and a 'g'.
    const LayerSpec upper_source = b.blob(kLicenseMediaType, "an uppercase license");
    std::string upper_hex = upper_source.digest.substr(7);
    for (char& c : upper_hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    write_text(root + "/blobs/sha256-" + upper_hex, "an uppercase license");
    write_text(root + "/blobs/sha256-" + std::string(63, 'a') + "g", "no digest");
    b.add_model("upper", {LayerSpec(std::string(kLicenseMediaType), "sha256:" + upper_hex, upper_source.size)}, config);
    // Two digests of one file: the second name a symlink to the first; and a missing blob.
    const LayerSpec first = b.blob(kLicenseMediaType, "one file under two names");
    const std::string alias_hex = std::string(64, 'd');
    fs::create_symlink("sha256-" + first.digest.substr(7), root + "/blobs/sha256-" + alias_hex);
    const LayerSpec alias(std::string(kLicenseMediaType), "sha256:" + alias_hex, first.size);
    const LayerSpec missing(std::string(kLicenseMediaType), "sha256:" + std::string(64, 'e'), 3);
    b.add_model("aliases", {alias, first, missing}, config);

    auto opened = Store::open(root);
    REQUIRE(opened);
    const auto cache = CacheDatabase::open(cache_dir.path());
    const StoreListing fresh = list_store(*opened, full_check(nullptr)).value;
    const StoreListing filling = list_store(*opened, full_check(cache.get())).value;
    const StoreListing warm = list_store(*opened, cached_check(*cache)).value;
    CHECK(verdicts(filling) == verdicts(fresh));
    CHECK(rows(warm) == rows(fresh));
    REQUIRE(warm.models.size() == fresh.models.size());
    for (size_t i = 0; i < warm.models.size(); ++i) {
        INFO(warm.models[i].ref.name.display());
        CHECK(warm.models[i].check.verdict() == fresh.models[i].check.verdict());
        CHECK(warm.models[i].check.reason_text() == fresh.models[i].check.reason_text());
    }
    // What each model is told, exactly.
    std::map<std::string, std::vector<std::string>> codes;
    for (const ModelListing& m : warm.models)
        for (const Diagnostic& d : m.check.reasons) codes[m.ref.name.display()].push_back(std::string(code_name(d.code)) + " " + d.field);
    CHECK(codes["twins:latest"] == std::vector<std::string>{
                                       "E_DIGEST_MISMATCH manifests/registry.ollama.ai/library/twins/latest layers[0].digest",
                                       "E_DIGEST_MISMATCH manifests/registry.ollama.ai/library/twins/latest layers[1].digest",
                                       "HeaderTooSmall blobs/sha256-" + shared + "01 header",
                                       "HeaderTooSmall blobs/sha256-" + shared + "02 header"});
    CHECK(codes["upper:latest"] == std::vector<std::string>{"E_BAD_DIGEST manifests/registry.ollama.ai/library/upper/latest layers[0].digest"});
    CHECK(codes["aliases:latest"] == std::vector<std::string>{
                                         "E_BLOB_MISSING manifests/registry.ollama.ai/library/aliases/latest layers[2]",
                                         "E_DIGEST_MISMATCH manifests/registry.ollama.ai/library/aliases/latest layers[0].digest"});
    CHECK(codes["tiny:latest"].empty());
    // The twins are told apart: each one's own bytes were hashed.
    for (const ModelListing& m : warm.models)
        if (m.ref.name.display() == "twins:latest") {
            REQUIRE(m.check.reasons.size() == 4);
            CHECK(m.check.reasons[0].message.find("actual sha256:" + sha256_hex(std::string("twin 01"))) != std::string::npos);
            CHECK(m.check.reasons[1].message.find("actual sha256:" + sha256_hex(std::string("twin 02"))) != std::string::npos);
        }
    // Which files the listing calls referenced: the twins, the alias and its target, not the
    // uppercase name nor the one with a 'g'.
    std::map<std::string, bool> referenced;
    for (const ListedBlobFile& f : warm.blob_files) referenced[f.file.name] = f.referenced;
    CHECK(referenced.at("sha256-" + shared + "01"));
    CHECK(referenced.at("sha256-" + shared + "02"));
    CHECK(referenced.at("sha256-" + alias_hex));
    CHECK(referenced.at("sha256-" + first.digest.substr(7)));
    CHECK(!referenced.at("sha256-" + upper_hex));
    CHECK(!referenced.at("sha256-" + std::string(63, 'a') + "g"));
}

TEST_CASE("the entries of a device read at once answer as lookups do", "[cache]") {
    TempDir dir;
    auto db = CacheDatabase::open(dir.path());
    const FileStamp a{7, 100, 10, 1000, 2000}, b{7, 101, 10, 1000, 2000}, other_device{8, 100, 10, 1000, 2000};
    db->store(CacheKind::blob_header, a, "header:tensor", "[]");
    db->store(CacheKind::blob_header, a, "header:model", "[1]");
    db->store(CacheKind::blob_digest, a, "sha256", "digest a");
    db->store(CacheKind::blob_header, other_device, "header:tensor", "elsewhere");
    db->flush();
    db->store(CacheKind::blob_header, b, "header:tensor", "pending");  // not flushed yet: read_cached_entries writes it first
    const CachedEntries headers = read_cached_entries(*db, CacheKind::blob_header, 7);
    CHECK(headers.size() == 3);
    for (const auto& [stamp, detail] : std::vector<std::pair<FileStamp, std::string>>{
             {a, "header:tensor"}, {a, "header:model"}, {b, "header:tensor"}, {b, "header:model"}, {a, "sha256"}}) {
        const std::optional<std::string> looked_up = db->lookup(CacheKind::blob_header, stamp, detail);
        const std::optional<std::string_view> found = headers.find(stamp, detail);
        INFO(stamp.inode << " " << detail);
        CHECK(looked_up.has_value() == found.has_value());
        if (found && looked_up) CHECK(*found == *looked_up);
    }
    CHECK(*headers.find(a, "header:model") == "[1]");
    CHECK(*headers.find(b, "header:tensor") == "pending");
    // Any other size, modification or change time of the same inode is a miss.
    for (FileStamp changed : {FileStamp{7, 100, 11, 1000, 2000}, FileStamp{7, 100, 10, 1001, 2000}, FileStamp{7, 100, 10, 1000, 2001}})
        CHECK(!headers.find(changed, "header:tensor"));
    CHECK(!headers.find(other_device, "header:tensor"));
    CHECK(read_cached_entries(*db, CacheKind::blob_digest, 7).size() == 1);
    CHECK(read_cached_entries(*db, CacheKind::blob_header, 8).size() == 1);
    CHECK(read_cached_entries(*db, CacheKind::fsck_summary, 7).size() == 0);
    CHECK(read_cached_entries(*CacheDatabase::disabled(), CacheKind::blob_header, 7).size() == 0);
}

TEST_CASE("long values shared by many entries are each answered whole", "[cache]") {
    // Three verdict-sized texts given to 3,000 entries in turn, one a prefix of another, and
    // values just below and at the length from which equal texts are kept once.
    const std::string verdict(CachedEntries::kSharedValueBytes + 200, 'v');
    const std::string longer = verdict + "w";
    const std::string other = std::string(CachedEntries::kSharedValueBytes, 'o');
    const std::string below = std::string(CachedEntries::kSharedValueBytes - 1, 'b');
    const std::vector<const std::string*> values = {&verdict, &longer, &other, &below};
    CachedEntries entries;
    for (uint64_t inode = 0; inode < 3000; ++inode) entries.add({7, inode, 1, 2, 3}, "loads", *values[inode % values.size()]);
    entries.add({7, 5000, 1, 2, 3}, "sha256", "digest");
    CHECK(entries.size() == 3001);
    for (uint64_t inode = 0; inode < 3000; ++inode) {
        const std::optional<std::string_view> found = entries.find({7, inode, 1, 2, 3}, "loads");
        REQUIRE(found);
        CHECK(*found == *values[inode % values.size()]);
    }
    CHECK(*entries.find({7, 5000, 1, 2, 3}, "sha256") == "digest");
    CHECK(!entries.find({7, 5000, 1, 2, 3}, "loads"));
}

TEST_CASE("two processes fill the cache at once", "[cache]") {
    TempDir dir;
    const std::string folder = dir.file("cache");
    constexpr int kPerProcess = 3000;
    std::vector<pid_t> children;
    for (int p = 0; p < 2; ++p) {
        pid_t pid = ::fork();
        if (pid == 0) {
            auto db = CacheDatabase::open(folder);
            for (int i = 0; i < kPerProcess; ++i) {
                // Half the keys are the other process's too: the same answer, stored twice.
                const uint64_t inode = static_cast<uint64_t>(i % 2 ? i : p * kPerProcess + i + 1'000'000);
                db->store(CacheKind::blob_digest, {7, inode, 1, 2, 3}, "sha256", "v" + std::to_string(inode));
                if (i % 500 == 0) db->flush();
            }
            db->flush();
            ::_exit(db->enabled() && db->warnings().empty() ? 0 : 1);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    auto db = CacheDatabase::open(folder);
    CHECK(db->entry_counts()[0].entries == kPerProcess / 2 + 2 * (kPerProcess / 2));
    for (uint64_t inode : {1ull, 2999ull, 1'000'000ull, 1'000'000ull + kPerProcess})
        CHECK(db->lookup(CacheKind::blob_digest, {7, inode, 1, 2, 3}, "sha256") == std::optional<std::string>("v" + std::to_string(inode)));
}

TEST_CASE("mlens check on a store twice at once, with the cache and with --no-cache, prints one answer", "[cache][cli]") {
    MixedStore store;
    TempDir cache_dir;
    ScopedEnv xdg("XDG_CACHE_HOME", cache_dir.path());
    const CliRun uncached = run_mlens({"check", store.root, "--no-cache"});
    CHECK(!fs::exists(cache_dir.path() + "/modellens"));
    MlensProcess a({"check", store.root}), b({"check", store.root});
    const CliRun ra = a.wait(), rb = b.wait();
    for (const CliRun* r : {&ra, &rb}) {
        CHECK(r->exit_status == uncached.exit_status);
        CHECK(r->out == uncached.out);
        CHECK(r->err == uncached.err);
    }
    CHECK(fs::exists(cache_dir.path() + "/modellens/cache.sqlite"));
    const CliRun again = run_mlens({"check", store.root});
    CHECK(again.out == uncached.out);
    CHECK(again.err == uncached.err);
    for (const char* command : {"store", "show"}) {
        const std::vector<std::string> args = std::string(command) == "store"
            ? std::vector<std::string>{"store", store.root, "--verify"}
            : std::vector<std::string>{"show", "tiny-moe:int4", "--store", store.root, "--json"};
        std::vector<std::string> no_cache = args;
        no_cache.push_back("--no-cache");
        const CliRun with = run_mlens(args), without = run_mlens(no_cache);
        INFO(command);
        CHECK(with.out == without.out);
        CHECK(with.exit_status == without.exit_status);
    }
}

TEST_CASE("mlens store --cached lists from the cache - mlens cache counts and clears it", "[cache][cli]") {
    MixedStore store;
    TempDir cache_dir;
    ScopedEnv xdg("XDG_CACHE_HOME", cache_dir.path());
    const CliRun cold = run_mlens({"store", store.root, "--cached"});
    CHECK(cold.out.find("not yet verified") != std::string::npos);
    REQUIRE(run_mlens({"store", store.root, "--verify"}).exit_status == 1);
    const CliRun warm = run_mlens({"store", store.root, "--cached", "--json"});
    const nlohmann::json j = nlohmann::json::parse(warm.out);
    for (const nlohmann::json& m : j["models"]) {
        INFO(m["name"]);
        CHECK(m["verdict"] != "unverified");
        CHECK(m["digests_verified"] == true);
        CHECK(m["loads"].is_null() == (m["verdict"] == "rejected"));  // the verdict --verify stored
    }
    const CliRun listed = run_mlens({"cache"});
    CHECK(listed.exit_status == 0);
    CHECK(row_value(listed.out, "cache folder") == cache_dir.path() + "/modellens");
    CHECK(row_value(listed.out, "database").starts_with("cache.sqlite, "));
    CHECK(std::stoull(row_value(listed.out, "blob digests")) > 0);
    CHECK(std::stoull(row_value(listed.out, "blob header verdicts")) > 0);
    CHECK(row_value(listed.out, "fsck summaries") == "0");
    CHECK(std::stoull(row_value(listed.out, "model loadability verdicts")) > 0);
    CHECK(row_value(listed.out, "remote ranges") == "0 entries, 0 B (0 bytes)");
    const CliRun cleared = run_mlens({"cache", "--clear"});
    CHECK(cleared.exit_status == 0);
    CHECK(cleared.out.starts_with("removed "));
    CHECK(cleared.out.find(" and 0 range entries of 0 B (0 bytes) from " + cache_dir.path() + "/modellens\n") != std::string::npos);
    auto db = CacheDatabase::open(cache_dir.path() + "/modellens");
    for (const CacheKindCount& c : db->entry_counts()) CHECK(c.entries == 0);
    CHECK(run_mlens({"store", store.root, "--cached"}).out == cold.out);
}

TEST_CASE("a cache folder that cannot be made: mlens works uncached and says so once", "[cache][cli]") {
    MixedStore store;
    TempDir dir;
    write_text(dir.file("not-a-folder"), "x");
    ScopedEnv xdg("XDG_CACHE_HOME", dir.file("not-a-folder"));
    const CliRun run = run_mlens({"store", store.root, "--verify"});
    ScopedEnv unset("XDG_CACHE_HOME", dir.file("fresh"));
    const CliRun reference = run_mlens({"store", store.root, "--verify", "--no-cache"});
    CHECK(run.out == reference.out);
    size_t said = 0;
    for (const std::string& line : run.err_lines()) said += line.starts_with("warning: cache: ") && line.find("working uncached") != std::string::npos;
    CHECK(said == 1);
}
