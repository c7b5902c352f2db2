// The command line never destroys its input and never leaves a partial file: `mlens hist
// --png/--csv` and `mlens export-upstream` onto their input (directly, through a symbolic or a
// hard link, as a store blob), onto a device node or a FIFO, twice onto one file, racing each
// other, under a file-size limit and interrupted by SIGTERM.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_builder.h"
#include "model_fixture.h"
#include "ollama_store_builder.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

mode_t kind_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & S_IFMT;
}

void write_hist_model(const std::string& path) { write_fixture_model(path, {{"w", GGML_TYPE_Q8_0, {256, 8}, test_signal(2048, 3)}}); }

// Ignores SIGXFSZ and limits every file the child writes to `bytes`: a write past it fails with
// EFBIG, as a full disk fails with ENOSPC.
std::function<void()> file_size_limit(rlim_t bytes) {
    return [bytes] {
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit limit{bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
    };
}

}  // namespace

TEST_CASE("mlens hist refuses to write onto its input, through links and store blobs", "[output][hist_export]") {
    TempDir dir;
    write_hist_model(dir.file("in.gguf"));
    const std::vector<uint8_t> original = read_whole_file(dir.file("in.gguf"));
    fs::create_symlink(dir.file("in.gguf"), dir.file("link.gguf"));
    fs::create_hard_link(dir.file("in.gguf"), dir.file("hard.gguf"));
    for (const char* option : {"--png", "--csv"})
        for (const std::string& target : {dir.file("in.gguf"), dir.file("link.gguf"), dir.file("hard.gguf")}) {
            INFO(option << " " << target);
            CliRun run = run_mlens({"hist", dir.file("in.gguf"), "w", option, target});
            CHECK(run.exit_status == 1);
            CHECK(contains(run.err, "E_OUTPUT_IS_INPUT"));
            // Opened through the link, the input is still protected.
            CliRun via_link = run_mlens({"hist", dir.file("link.gguf"), "w", option, target});
            CHECK(via_link.exit_status == 1);
            CHECK(contains(via_link.err, "E_OUTPUT_IS_INPUT"));
        }
    CHECK(read_whole_file(dir.file("in.gguf")) == original);
    CHECK(fs::is_symlink(dir.file("link.gguf")));
    CHECK(leftovers_in(dir.path()) == 0);

    // --png and --csv naming one file are two outputs of one command on the same file.
    CliRun twice = run_mlens({"hist", dir.file("in.gguf"), "w", "--png", dir.file("h.out"), "--csv", dir.path() + "/./h.out"});
    CHECK(twice.exit_status == 2);
    CHECK(contains(twice.err, "E_OUTPUTS_SAME_FILE"));
    CHECK(!fs::exists(dir.file("h.out")));
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("mlens hist refuses to write onto the store blob it reads", "[output][hist_export][ollama]") {
    TempDir dir;
    OllamaStoreBuilder store(dir.path());
    store.add_tiny();
    const std::string blob = store.blob_path(store.tiny_model_layer());
    const std::vector<uint8_t> original = read_whole_file(blob);
    fs::create_symlink(blob, dir.file("blob-link"));
    for (const std::string& model : {dir.path() + "/tiny:latest", blob})
        for (const char* option : {"--csv", "--png"})
            for (const std::string& target : {blob, dir.file("blob-link")}) {
                INFO(model << " " << option << " " << target);
                CliRun run = run_mlens({"hist", model, "w", option, target});
                CHECK(run.exit_status == 1);
                CHECK(contains(run.err, "E_OUTPUT_IS_INPUT"));
            }
    CHECK(read_whole_file(blob) == original);
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("mlens hist and export-upstream refuse a FIFO or a device node and never open it", "[output][export]") {
    TempDir dir;
    write_hist_model(dir.file("in.gguf"));
    write_tiny_model(tiny_llama3(TinyLayout::ollama), dir.file("ollama.gguf"));
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
    std::vector<std::string> targets = {dir.file("fifo")};
    // The device node of /dev/null (1, 3), made in the scratch folder (as root).
    if (::mknod(dir.file("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
        targets.push_back(dir.file("null"));
    else
        WARN("mknod needs root (" << std::strerror(errno) << "): only the FIFO is tested");
    for (const std::string& target : targets) {
        INFO(target);
        const mode_t kind = kind_of(target);
        // Opening the FIFO for writing would wait for a reader forever: each run returns.
        CliRun png = run_mlens({"hist", dir.file("in.gguf"), "w", "--png", target});
        CHECK(png.exit_status == 1);
        CHECK(contains(png.err, "E_OUTPUT_NOT_REGULAR"));
        CliRun exported = run_mlens({"export-upstream", dir.file("ollama.gguf"), target});
        CHECK(exported.exit_status == 1);
        // The error is about the output, and names it first, not the input.
        CHECK(exported.err.starts_with("error: " + target + ": E_OUTPUT_NOT_REGULAR"));
        CHECK(kind_of(target) == kind);
    }
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("export-upstream refuses an mmproj that is the text output spelled another way", "[output][export]") {
    TempDir dir;
    write_tiny_model(tiny_gemma3(TinyLayout::ollama), dir.file("ollama.gguf"));
    const std::vector<uint8_t> original = read_whole_file(dir.file("ollama.gguf"));
    CliRun run = run_mlens({"export-upstream", dir.file("ollama.gguf"), dir.file("o.gguf"), "--mmproj", dir.path() + "/./o.gguf"});
    CHECK(run.exit_status == 2);
    CHECK(contains(run.err, "E_OUTPUTS_SAME_FILE"));
    CHECK(!contains(run.out, "wrote"));
    CHECK(!fs::exists(dir.file("o.gguf")));
    // The input itself as the mmproj, through a hard link.
    fs::create_hard_link(dir.file("ollama.gguf"), dir.file("hard.gguf"));
    CliRun onto_input = run_mlens({"export-upstream", dir.file("ollama.gguf"), dir.file("t.gguf"), "--mmproj", dir.file("hard.gguf")});
    CHECK(onto_input.exit_status == 1);
    CHECK(contains(onto_input.err, "E_OUTPUT_IS_INPUT"));
    CHECK(!fs::exists(dir.file("t.gguf")));
    CHECK(read_whole_file(dir.file("ollama.gguf")) == original);
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("two exports racing to one output each report success only for their own file", "[output][export]") {
    TempDir dir;
    write_tiny_model(tiny_gemma3(TinyLayout::ollama), dir.file("a.gguf"));
    write_tiny_model(tiny_llama3(TinyLayout::ollama), dir.file("b.gguf"));
    const std::vector<uint8_t> a_in = read_whole_file(dir.file("a.gguf")), b_in = read_whole_file(dir.file("b.gguf"));
    REQUIRE(run_mlens({"export-upstream", dir.file("a.gguf"), dir.file("ref-a.gguf")}).exit_status == 0);
    REQUIRE(run_mlens({"export-upstream", dir.file("b.gguf"), dir.file("ref-b.gguf")}).exit_status == 0);
    const std::vector<uint8_t> ref_a = read_whole_file(dir.file("ref-a.gguf")), ref_b = read_whole_file(dir.file("ref-b.gguf"));
    REQUIRE(ref_a != ref_b);
    for (int round = 0; round < 6; ++round) {
        INFO("round " << round);
        fs::remove(dir.file("out.gguf"));
        MlensProcess a({"export-upstream", dir.file("a.gguf"), dir.file("out.gguf")});
        MlensProcess b({"export-upstream", dir.file("b.gguf"), dir.file("out.gguf")});
        CliRun ra = a.wait(), rb = b.wait();
        INFO(ra.err << rb.err);
        for (const CliRun* r : {&ra, &rb}) CHECK((r->exit_status == 0 || (r->exit_status == 1 && contains(r->err, "E_OUTPUT_REPLACED"))));
        CHECK((ra.exit_status == 0 || rb.exit_status == 0));
        // The file there is one of the two exports, whole, and one that reported success.
        const std::vector<uint8_t> out = read_whole_file(dir.file("out.gguf"));
        CHECK(((out == ref_a && ra.exit_status == 0) || (out == ref_b && rb.exit_status == 0)));
        CHECK(leftovers_in(dir.path()) == 0);
    }
    CHECK(read_whole_file(dir.file("a.gguf")) == a_in);
    CHECK(read_whole_file(dir.file("b.gguf")) == b_in);
}

TEST_CASE("a file-size limit fails hist and export-upstream with the reason and leaves nothing", "[output][export][hist_export]") {
    TempDir dir;
    write_hist_model(dir.file("in.gguf"));
    write_tiny_model(tiny_llama3(TinyLayout::ollama), dir.file("ollama.gguf"));
    const std::vector<uint8_t> hist_in = read_whole_file(dir.file("in.gguf")), export_in = read_whole_file(dir.file("ollama.gguf"));
    for (const char* option : {"--png", "--csv"}) {
        INFO(option);
        CliRun run = MlensProcess({"hist", dir.file("in.gguf"), "w", option, dir.file("h.out")}, file_size_limit(1024)).wait();
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err, "E_IO"));
        CHECK(contains(run.err, "File too large"));
        CHECK(contains(run.err, dir.file("h.out")));
        CHECK(!fs::exists(dir.file("h.out")));
    }
    CliRun exported = MlensProcess({"export-upstream", dir.file("ollama.gguf"), dir.file("o.gguf")}, file_size_limit(4096)).wait();
    CHECK(exported.exit_status == 1);
    CHECK(contains(exported.err, "File too large"));
    CHECK(contains(exported.err, dir.file("o.gguf")));
    CHECK(!fs::exists(dir.file("o.gguf")));
    CHECK(read_whole_file(dir.file("in.gguf")) == hist_in);
    CHECK(read_whole_file(dir.file("ollama.gguf")) == export_in);
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("SIGTERM during export-upstream removes the partial temporary file", "[output][export]") {
    TempDir dir;
    // One 512 MiB F32 tensor, its data a hole in a sparse file: cheap to make and to read, and
    // long enough to write that the signal arrives mid-export.
    constexpr uint64_t kElements = 128ull << 20;
    GgufBuilder header;
    header.header(1, 1).kv_string("general.architecture", "llama").tensor_info("w", {kElements}, 0, 0).pad_to(32);
    write_whole_file(dir.file("big.gguf"), header.bytes);
    fs::resize_file(dir.file("big.gguf"), header.size() + kElements * 4);

    MlensProcess run({"export-upstream", dir.file("big.gguf"), dir.file("out.gguf")});
    bool seen = false;
    const auto start = std::chrono::steady_clock::now();
    while (!seen && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
        for (const auto& e : fs::directory_iterator(dir.path())) {
            std::error_code ec;
            if (contains(e.path().filename().string(), ".out.gguf.tmp-") && fs::file_size(e.path(), ec) > (1u << 20)) seen = true;
        }
        if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    REQUIRE(seen);
    REQUIRE(::kill(run.pid(), SIGTERM) == 0);
    CliRun ended = run.wait();
    CHECK(ended.signal == SIGTERM);
    CHECK(leftovers_in(dir.path()) == 0);
    CHECK(!fs::exists(dir.file("out.gguf")));

    // The input is untouched: the header as written, then zeros.
    CHECK(fs::file_size(dir.file("big.gguf")) == header.size() + kElements * 4);
    std::ifstream in(dir.file("big.gguf"), std::ios::binary);
    std::vector<char> chunk(header.size());
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    CHECK(std::equal(chunk.begin(), chunk.end(), header.bytes.begin()));
    chunk.assign(8u << 20, 0);
    bool zeros = true;
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) zeros = zeros && chunk[static_cast<size_t>(i)] == 0;
        if (in.gcount() < static_cast<std::streamsize>(chunk.size())) break;
    }
    CHECK(zeros);
}

TEST_CASE("SIGTERM during run on an Ollama-made GGUF removes its converted copy", "[output][infer]") {
    TempDir tmp;
    const std::string model = std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf";
    // The converted copy goes under $TMPDIR: here, a folder of its own that must end up empty.
    ScopedEnv tmpdir("TMPDIR", tmp.path());
    // The copy lives in a folder "mlens-load-..." from before the export until llama.cpp has
    // loaded it (model_loader.h). The kernel reports the folder's creation (inotify), so the
    // signal is sent at once however busy the machine, at the latest while the run waits 10 s
    // between loading and generating.
    const int watch = ::inotify_init1(IN_CLOEXEC);
    REQUIRE(watch >= 0);
    REQUIRE(::inotify_add_watch(watch, tmp.path().c_str(), IN_CREATE) >= 0);
    ScopedEnv pause("MLENS_RUN_PAUSE_MS", "10000");
    MlensProcess run({"run", model, "-p", "hello", "-n", "64"});
    bool seen = false, exited = false;
    const auto start = std::chrono::steady_clock::now();
    while (!seen && !exited && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
        pollfd p{watch, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) {
            // A run that ended without making a copy is reported with its stderr, not waited for.
            siginfo_t info{};
            exited = ::waitid(P_PID, static_cast<id_t>(run.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
            continue;
        }
        alignas(inotify_event) char events[4096];
        const ssize_t n = ::read(watch, events, sizeof events);
        for (ssize_t at = 0; at < n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(events + at);
            if (e->len > 0 && std::string(e->name).rfind("mlens-load-", 0) == 0) seen = true;
            at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        }
    }
    ::close(watch);
    INFO(run.err_so_far());
    REQUIRE(seen);
    REQUIRE(::kill(run.pid(), SIGTERM) == 0);
    CliRun ended = run.wait();
    CHECK(ended.signal == SIGTERM);
    // The copy is the llama.cpp worker's: it removes it within 50 ms of seeing its parent gone.
    const auto ended_at = std::chrono::steady_clock::now();
    while (!fs::is_empty(tmp.path()) && std::chrono::steady_clock::now() - ended_at < std::chrono::seconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(fs::is_empty(tmp.path()));
}
