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
#include "mlens/io/safe_file_writer.h"
#include "mlens/model/model_inputs.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// Names in the folder that are temporary files of the writer.
int temp_files_in(const std::string& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp-") != std::string::npos;
    return n;
}

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
    CHECK(temp_files_in(dir.path()) == 0);
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
    CHECK(temp_files_in(dir.path()) == 0);
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
    CHECK(temp_files_in(dir.path()) == 0);
    CHECK(temp_files_in(dir.file("real")) == 0);
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
    CHECK(temp_files_in(dir.path()) == 0);
    CHECK(temp_files_in(dir.file("sub")) == 0);
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
    CHECK(temp_files_in(dir.path()) == 0);
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
    CHECK(temp_files_in(dir.path()) == 0);
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
    auto report = compat::export_upstream(*model, plan, {dir.file("text.gguf"), dir.file("mm.gguf")}, &job);
    REQUIRE(!report);
    CHECK(report.error().code == ErrorCode::E_CANCELLED);
    CHECK(!fs::exists(dir.file("text.gguf")));
    CHECK(!fs::exists(dir.file("mm.gguf")));
    CHECK(temp_files_in(dir.path()) == 0);
}
