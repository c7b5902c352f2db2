// SafeFileWriter, the one output path: what it refuses (non-regular targets, inputs through
// symlinks and hard links, two outputs of one operation that are the same file), what it leaves
// behind (nothing on failure), and how it treats another writer's file.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "gguf_builder.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/model/model_inputs.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

Status write_text(const std::string& path, OutputGuard& guard, const std::string& text) {
    return write_files_safely(guard, {{path, text.data(), text.size()}});
}

mode_t kind_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & S_IFMT;
}

}  // namespace

TEST_CASE("an existing target that is not a regular file is refused and never opened", "[output]") {
    test::TempDir dir;
    OutputGuard guard;
    SECTION("a FIFO") {
        REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
        // Opening a FIFO for writing would block forever without a reader: refusing returns at once.
        Status s = write_text(dir.file("fifo"), guard, "x");
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(s.error().message.find("a FIFO") != std::string::npos);
        CHECK(kind_of(dir.file("fifo")) == S_IFIFO);
    }
    SECTION("a character device") {
        // The device node of /dev/null (1, 3), made in the scratch folder.
        if (::mknod(dir.file("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
            WARN("mknod needs root: " << std::strerror(errno));
            return;
        }
        Status s = write_text(dir.file("null"), guard, "x");
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(s.error().message.find("a character device") != std::string::npos);
        CHECK(kind_of(dir.file("null")) == S_IFCHR);
    }
    SECTION("a socket") {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string path = dir.file("sock");
        REQUIRE(path.size() < sizeof addr.sun_path);
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        Status s = write_text(path, guard, "x");
        ::close(fd);
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(kind_of(path) == S_IFSOCK);
    }
    SECTION("a folder, and a path ending in a separator") {
        fs::create_directory(dir.file("sub"));
        Status s = write_text(dir.file("sub"), guard, "x");
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        Status slash = write_text(dir.file("new/"), guard, "x");
        REQUIRE(!slash);
        CHECK(slash.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(kind_of(dir.file("sub")) == S_IFDIR);
    }
    SECTION("a symbolic link to a FIFO, and one that leads nowhere") {
        REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
        fs::create_symlink(dir.file("fifo"), dir.file("to-fifo"));
        Status s = write_text(dir.file("to-fifo"), guard, "x");
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        fs::create_symlink(dir.file("missing"), dir.file("dangling"));
        Status dangling = write_text(dir.file("dangling"), guard, "x");
        REQUIRE(!dangling);
        CHECK(dangling.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(!fs::exists(dir.file("missing")));
        CHECK(fs::is_symlink(dir.file("dangling")));
    }
    CHECK(test::leftovers_in(dir.path()) == 0);
}

TEST_CASE("an output is never an input, through symbolic links, hard links or another spelling", "[output]") {
    test::TempDir dir;
    const std::vector<uint8_t> t1 = test::t1_bytes();
    test::write_whole_file(dir.file("in.gguf"), t1);
    auto model = open_gguf(dir.file("in.gguf"));
    REQUIRE(model);
    fs::create_symlink(dir.file("in.gguf"), dir.file("link.gguf"));
    fs::create_hard_link(dir.file("in.gguf"), dir.file("hard.gguf"));
    fs::create_directory(dir.file("sub"));
    for (const std::string& target :
         {dir.file("in.gguf"), dir.file("link.gguf"), dir.file("hard.gguf"), dir.file("sub/../in.gguf"), dir.path() + "//./in.gguf"}) {
        INFO(target);
        OutputGuard guard = output_guard_for(*model);
        Status s = write_text(target, guard, "not a model");
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_IS_INPUT);
    }
    CHECK(test::read_whole_file(dir.file("in.gguf")) == t1);
    CHECK(fs::is_symlink(dir.file("link.gguf")));
    CHECK(test::leftovers_in(dir.path()) == 0);
}

TEST_CASE("a symbolic link to a regular file is written through and stays a link", "[output]") {
    test::TempDir dir;
    fs::create_directory(dir.file("real"));
    test::write_whole_file(dir.file("real/out.csv"), bytes_of("old\n"));
    ::chmod(dir.file("real/out.csv").c_str(), 0640);
    fs::create_symlink(dir.file("real/out.csv"), dir.file("out.csv"));
    OutputGuard guard;
    REQUIRE(write_text(dir.file("out.csv"), guard, "new\n"));
    CHECK(fs::is_symlink(dir.file("out.csv")));
    CHECK(test::read_whole_file(dir.file("real/out.csv")) == bytes_of("new\n"));
    CHECK((fs::status(dir.file("real/out.csv")).permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    CHECK(test::leftovers_in(dir.path()) == 0);
    CHECK(test::leftovers_in(dir.file("real")) == 0);
}

TEST_CASE("an existing file named as an Ollama blob is never replaced, directly or through a link", "[output][ollama]") {
    test::TempDir dir;
    const std::string blob = dir.file("sha256-" + std::string(64, 'b'));
    test::write_whole_file(blob, bytes_of("blob bytes\n"));
    fs::create_symlink(blob, dir.file("out.csv"));
    for (const std::string& target : {blob, dir.file("out.csv")}) {
        INFO(target);
        OutputGuard guard;
        Status s = write_text(target, guard, "new\n");
        REQUIRE_FALSE(s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_IN_STORE);
        CHECK(test::read_whole_file(blob) == bytes_of("blob bytes\n"));
    }
    CHECK(test::leftovers_in(dir.path()) == 0);
    // A new file may carry such a name: nothing is replaced.
    OutputGuard guard;
    CHECK(write_text(dir.file("sha256-" + std::string(64, 'c')), guard, "new\n"));
}

TEST_CASE("a new file gets the permissions open(2) would give it under the umask - a replaced one keeps its own", "[output]") {
    test::TempDir dir;
    const mode_t old_mask = ::umask(077);
    OutputGuard guard;
    const Status written = write_text(dir.file("private.csv"), guard, "new\n");
    ::umask(old_mask);
    REQUIRE(written);
    struct stat st {};
    REQUIRE(::stat(dir.file("private.csv").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    const mode_t mask = ::umask(022);
    OutputGuard second;
    REQUIRE(write_text(dir.file("shared.csv"), second, "new\n"));
    REQUIRE(::chmod(dir.file("private.csv").c_str(), 0640) == 0);
    OutputGuard third;
    REQUIRE(write_text(dir.file("private.csv"), third, "newer\n"));
    ::umask(mask);
    REQUIRE(::stat(dir.file("shared.csv").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    REQUIRE(::stat(dir.file("private.csv").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    // A set-user-ID, set-group-ID or sticky bit never passes to the new file, which its writer owns.
    REQUIRE(::chmod(dir.file("private.csv").c_str(), 07750) == 0);
    OutputGuard fourth;
    REQUIRE(write_text(dir.file("private.csv"), fourth, "newest\n"));
    REQUIRE(::stat(dir.file("private.csv").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0750);
}

TEST_CASE("two outputs of one operation may not be the same file", "[output]") {
    test::TempDir dir;
    fs::create_directory(dir.file("sub"));
    fs::create_directory_symlink(dir.file("sub"), dir.file("alias"));
    SECTION("a new file spelled two ways") {
        const std::string a = "1", b = "2";
        OutputGuard guard;
        Status s = write_files_safely(guard, {{dir.file("sub/o.gguf"), a.data(), 1}, {dir.file("alias/./o.gguf"), b.data(), 1}});
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUTS_SAME_FILE);
        CHECK(!fs::exists(dir.file("sub/o.gguf")));
    }
    SECTION("an existing file and its hard link") {
        test::write_whole_file(dir.file("sub/o.csv"), bytes_of("keep"));
        fs::create_hard_link(dir.file("sub/o.csv"), dir.file("h.csv"));
        const std::string a = "1", b = "2";
        OutputGuard guard;
        Status s = write_files_safely(guard, {{dir.file("sub/o.csv"), a.data(), 1}, {dir.file("h.csv"), b.data(), 1}});
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUTS_SAME_FILE);
        CHECK(test::read_whole_file(dir.file("sub/o.csv")) == bytes_of("keep"));
    }
    CHECK(test::leftovers_in(dir.path()) == 0);
    CHECK(test::leftovers_in(dir.file("sub")) == 0);
}

TEST_CASE("the target is checked again before the rename", "[output]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("in.gguf"), test::t1_bytes());
    OutputGuard guard;
    guard.add_input(dir.file("in.gguf"));
    SECTION("it became a hard link to an input") {
        auto writer = SafeFileWriter::create(dir.file("out.gguf"), guard);
        REQUIRE(writer);
        REQUIRE(writer->write("abc", 3));
        fs::create_hard_link(dir.file("in.gguf"), dir.file("out.gguf"));
        Status s = writer->commit();
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_IS_INPUT);
        CHECK(test::read_whole_file(dir.file("in.gguf")) == test::t1_bytes());
        CHECK(test::read_whole_file(dir.file("out.gguf")) == test::t1_bytes());
    }
    SECTION("it became a FIFO") {
        auto writer = SafeFileWriter::create(dir.file("out.gguf"), guard);
        REQUIRE(writer);
        REQUIRE(::mkfifo(dir.file("out.gguf").c_str(), 0600) == 0);
        Status s = writer->commit();
        REQUIRE(!s);
        CHECK(s.error().code == ErrorCode::E_OUTPUT_NOT_REGULAR);
        CHECK(kind_of(dir.file("out.gguf")) == S_IFIFO);
    }
    CHECK(test::leftovers_in(dir.path()) == 0);
}

TEST_CASE("a writer verifies its temporary file before the rename and withdraws only its own file", "[output]") {
    test::TempDir dir;
    OutputGuard guard_a, guard_b;
    auto a = SafeFileWriter::create(dir.file("out.gguf"), guard_a);
    auto b = SafeFileWriter::create(dir.file("out.gguf"), guard_b);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->temp_path() != b->temp_path());
    const std::vector<uint8_t> t1 = test::t1_bytes();
    REQUIRE(a->write(t1.data(), t1.size()));
    // What a caller re-reads is the temporary file, before the output's name is touched.
    auto back = open_gguf(a->temp_path());
    REQUIRE(back);
    CHECK(back->tensors.size() == 1);
    CHECK(!fs::exists(dir.file("out.gguf")));
    REQUIRE(a->commit());
    REQUIRE(b->write("other", 5));
    REQUIRE(b->commit());
    // a's file was replaced by b's: withdrawing a leaves b's file alone.
    REQUIRE(a->withdraw());
    CHECK(test::read_whole_file(dir.file("out.gguf")) == bytes_of("other"));
    REQUIRE(b->withdraw());
    CHECK(!fs::exists(dir.file("out.gguf")));
    CHECK(test::leftovers_in(dir.path()) == 0);
}

TEST_CASE("a writer dropped before commit leaves nothing, and a failed write names the file and the reason", "[output]") {
    test::TempDir dir;
    {
        OutputGuard guard;
        auto w = SafeFileWriter::create(dir.file("out.bin"), guard);
        REQUIRE(w);
        REQUIRE(w->write("abc", 3));
        CHECK(fs::exists(w->temp_path()));
    }
    CHECK(fs::is_empty(dir.path()));
    OutputGuard guard;
    Status missing = write_text(dir.file("no/such/folder/out.bin"), guard, "x");
    REQUIRE(!missing);
    CHECK(missing.error().code == ErrorCode::E_IO);
    CHECK(missing.error().message.find("No such file or directory") != std::string::npos);
    CHECK(missing.error().message.find(dir.file("no/such/folder")) != std::string::npos);
}

TEST_CASE("a cancelled export leaves neither of its files", "[output][export]") {
    test::TempDir dir;
    test::write_tiny_model(test::tiny_gemma3(test::TinyLayout::ollama), dir.file("ollama.gguf"));
    auto model = open_gguf(dir.file("ollama.gguf"));
    REQUIRE(model);
    const compat::RewritePlan plan = compat::plan_compat(*model);
    JobContext job;
    job.cancel();
    auto report = compat::export_upstream(*model, plan, {dir.file("text.gguf"), dir.file("mm.gguf"), {}}, &job);
    REQUIRE(!report);
    CHECK(report.error().code == ErrorCode::E_CANCELLED);
    CHECK(!fs::exists(dir.file("text.gguf")));
    CHECK(!fs::exists(dir.file("mm.gguf")));
    CHECK(test::leftovers_in(dir.path()) == 0);
}

namespace {

// The commit step at which the hook fails.
CommitStep g_fail_step = CommitStep::rename;
size_t g_fail_index = 0;

Status failing_hook(CommitStep step, size_t index) {
    if (step != g_fail_step || index != g_fail_index) return ok_status();
    return Error{ErrorCode::E_IO, "output", std::nullopt, "injected failure"};
}

// Two writers of one operation: "a" over a file that exists, "b" over one that exists or not.
std::vector<SafeFileWriter> two_writers(const test::TempDir& dir, OutputGuard& guard) {
    std::vector<SafeFileWriter> writers;
    for (const char* name : {"a", "b"}) {
        auto w = SafeFileWriter::create(dir.file(name), guard);
        REQUIRE(w);
        REQUIRE(w->write("new", 3));
        writers.push_back(std::move(*w));
    }
    return writers;
}

}  // namespace

TEST_CASE("commit_all places both files or keeps both previous ones, whichever step fails", "[output]") {
    struct Case {
        CommitStep step;
        size_t index;
    };
    for (bool b_exists : {true, false})
        for (const Case& c : {Case{CommitStep::keep_previous, 0}, Case{CommitStep::keep_previous, 1}, Case{CommitStep::rename, 0},
                              Case{CommitStep::rename, 1}}) {
            DYNAMIC_SECTION("step " << static_cast<int>(c.step) << " writer " << c.index << (b_exists ? ", b exists" : ", b is new")) {
                test::TempDir dir;
                test::write_whole_file(dir.file("a"), bytes_of("old a"));
                if (b_exists) test::write_whole_file(dir.file("b"), bytes_of("old b"));
                OutputGuard guard;
                auto writers = two_writers(dir, guard);
                g_fail_step = c.step;
                g_fail_index = c.index;
                set_commit_step_hook(failing_hook);
                Status s = commit_all(writers);
                set_commit_step_hook(nullptr);
                REQUIRE(!s);
                CHECK(s.error().message == "injected failure");
                CHECK(test::read_whole_file(dir.file("a")) == bytes_of("old a"));
                if (b_exists)
                    CHECK(test::read_whole_file(dir.file("b")) == bytes_of("old b"));
                else
                    CHECK(!fs::exists(dir.file("b")));
                // Nothing else is left in the folder: no temporary, no previous file.
                CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == (b_exists ? 2 : 1));
            }
        }
}

// At the second rename, another writer puts a folder where "b" was: "b"'s old content then has
// no name left but the previous file commit_all kept.
std::string g_replaced_target;
Status replacing_hook(CommitStep step, size_t index) {
    if (step == CommitStep::rename && index == 1) {
        fs::remove(g_replaced_target);
        fs::create_directory(g_replaced_target);
    }
    return ok_status();
}

TEST_CASE("commit_all keeps, and notes, a previous file whose target another writer replaced meanwhile", "[output]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("a"), bytes_of("old a"));
    test::write_whole_file(dir.file("b"), bytes_of("old b"));
    OutputGuard guard;
    auto writers = two_writers(dir, guard);
    g_replaced_target = dir.file("b");
    std::vector<std::string> notes;
    set_temp_notice_sink([&notes](const std::string& note) { notes.push_back(note); });
    set_commit_step_hook(replacing_hook);
    Status s = commit_all(writers);
    set_commit_step_hook(nullptr);
    set_temp_notice_sink(nullptr);
    REQUIRE(!s);
    CHECK(test::read_whole_file(dir.file("a")) == bytes_of("old a"));
    std::vector<std::string> previous;
    for (const auto& item : fs::directory_iterator(dir.path()))
        if (item.path().filename().string().starts_with(".b.prev-")) previous.push_back(item.path().string());
    REQUIRE(previous.size() == 1);
    CHECK(test::read_whole_file(previous[0]) == bytes_of("old b"));
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "kept " + previous[0] + ": the previous content of " + dir.file("b") +
                          ", which another writer replaced meanwhile; rename it back to restore it");
}

TEST_CASE("commit_all keeps a previous file by a hard link, so the file another path names is never emptied", "[output]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("a"), bytes_of("old a"));
    test::write_whole_file(dir.file("b"), bytes_of("old b"));
    fs::create_hard_link(dir.file("a"), dir.file("a-elsewhere"));
    OutputGuard guard;
    auto writers = two_writers(dir, guard);
    REQUIRE(commit_all(writers));
    CHECK(test::read_whole_file(dir.file("a")) == bytes_of("new"));
    CHECK(test::read_whole_file(dir.file("b")) == bytes_of("new"));
    // The other name still holds what it held: rename replaced the name, not the bytes.
    CHECK(test::read_whole_file(dir.file("a-elsewhere")) == bytes_of("old a"));
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 3);
}

TEST_CASE("an output anywhere inside an Ollama store an input lies in is refused, by device and inode", "[output][ollama]") {
    test::TempDir dir;
    fs::create_directories(dir.file("store/manifests/registry.ollama.ai/library/m"));
    fs::create_directories(dir.file("store/blobs"));
    const std::string blob = dir.file("store/blobs/sha256-" + std::string(64, 'a'));
    test::write_whole_file(blob, bytes_of("GGUF"));
    fs::create_directory_symlink(dir.file("store"), dir.file("store-link"));
    // A file put directly in the store's root (beside blobs/ and manifests/) is in the store too.
    test::write_whole_file(dir.file("store/extra.gguf"), bytes_of("GGUF"));
    for (const std::string& input :
         {blob, dir.file("store-link/blobs/sha256-" + std::string(64, 'a')), dir.file("store"), dir.file("store/extra.gguf")}) {
        OutputGuard guard;
        guard.add_input(input);
        for (const std::string& target :
             {dir.file("store/manifests/registry.ollama.ai/library/m/new"), dir.file("store/x.csv"), dir.file("store-link/blobs/y")}) {
            INFO(input << " -> " << target);
            Status s = write_text(target, guard, "x");
            REQUIRE(!s);
            CHECK(s.error().code == ErrorCode::E_OUTPUT_IN_STORE);
            CHECK(!fs::exists(target));
        }
        CHECK(write_text(dir.file("outside.csv"), guard, "x"));
    }
    // A blob outside any store protects its blobs folder only.
    fs::create_directories(dir.file("loose/blobs"));
    test::write_whole_file(dir.file("loose/blobs/sha256-" + std::string(64, 'b')), bytes_of("GGUF"));
    OutputGuard loose;
    loose.add_input(dir.file("loose/blobs/sha256-" + std::string(64, 'b')));
    Status in_blobs = write_text(dir.file("loose/blobs/z"), loose, "x");
    REQUIRE(!in_blobs);
    CHECK(in_blobs.error().code == ErrorCode::E_OUTPUT_IN_STORE);
    CHECK(write_text(dir.file("loose/z"), loose, "x"));
}

TEST_CASE("temporary names carry their owner - only a gone owner's temporaries are swept", "[output]") {
    const std::string me = owner_stamp();
    auto parsed = parse_temp_name(".out.gguf.tmp-" + me + "-Ab12cd");
    REQUIRE(parsed);
    CHECK(parsed->kind == TempKind::writer_file);
    CHECK(parsed->target == "out.gguf");
    CHECK(parsed->stamp == me);
    CHECK(!owner_gone(me));
    CHECK(parse_temp_name("mlens-load-" + me + "-Ab12cd")->kind == TempKind::load_folder);
    CHECK(parse_temp_name(".x.prev-" + me + "-Ab12cd")->kind == TempKind::previous_file);
    CHECK(!parse_temp_name("out.gguf"));
    CHECK(!parse_temp_name(".out.gguf.tmp-XXXXXX"));  // no owner: never swept
    CHECK(!owner_gone("not-a-stamp"));
    // This process with another start time is a process that has ended.
    CHECK(owner_gone(test::gone_owner_stamp(::getpid())));
    // The same pid and start time counted in another pid space (a container's namespace, another
    // machine sharing the folder) proves nothing here; nor does a stamp that names no space.
    const std::string space = me.substr(me.rfind('-') + 1);
    CHECK(!owner_gone(std::to_string(::getpid()) + "-1-" + (space == "7" ? "8" : "7")));
    CHECK(!owner_gone(std::to_string(::getpid()) + "-1"));
    CHECK(parse_temp_name(".out.gguf.tmp-123-45-Ab12cd")->stamp == "123-45");  // an older version's name still parses
}

TEST_CASE("the sweep removes a gone owner's temporaries of this user only", "[output]") {
    test::TempDir dir;
    const std::string gone = test::gone_owner_stamp(::getpid());
    const std::string mine = dir.file(".a.gguf.tmp-" + gone + "-Ab12cd"), theirs = dir.file(".b.gguf.tmp-" + gone + "-Ab12cd");
    test::write_whole_file(mine, std::vector<uint8_t>(3, 'x'));
    test::write_whole_file(theirs, std::vector<uint8_t>(3, 'x'));
    // Another user's file (root may give it away; anyone else finds no other owner to give).
    if (::chown(theirs.c_str(), 65534, 65534) != 0) {
        WARN("cannot give a file to another user here; only this user's temporary is checked");
        ::unlink(theirs.c_str());
    }
    CHECK(sweep_stale_temporaries(dir.path()) == 1);
    CHECK(!std::filesystem::exists(mine));
    if (::geteuid() == 0) CHECK(std::filesystem::exists(theirs));
}

TEST_CASE("a kept previous file is noted once however many sweeps find it", "[output]") {
    test::TempDir dir;
    const std::string kept = dir.file(".out.gguf.prev-" + test::gone_owner_stamp(::getpid()) + "-Ab12cd");
    test::write_whole_file(kept, std::vector<uint8_t>(3, 'x'));
    std::vector<std::string> notes;
    set_temp_notice_sink([&notes](const std::string& note) { notes.push_back(note); });
    sweep_stale_temporaries(dir.path());
    sweep_stale_temporaries(dir.path());
    set_temp_notice_sink(nullptr);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].starts_with("kept " + kept + ": the previous content of out.gguf"));
    CHECK(std::filesystem::exists(kept));
}
