// Every input is protected however it was reached: an Ollama-made GGUF loaded through its
// converted copy (kld --save-base onto the original and onto its store blob), every file of an
// Ollama store a command reads (its manifests, its blobs, a new file anywhere under its root),
// the store reached through a symlinked parent or a bind mount; a two-file export commits both
// files or neither, whichever commit step a signal arrives at; and temporaries are removed by
// their owner's parent when the owner dies, or by the next run when it was killed.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "build_paths.h"
#include "cli_runner.h"
#include "corpus_text.h"
#include "mlens/io/owner_stamp.h"
#include "model_fixture.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string demo(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// A store holding `gguf`'s bytes as the model blob of library/<model>:latest.
std::string store_with_gguf(OllamaStoreBuilder& store, const std::string& model, const std::string& gguf, const std::string& family) {
    LayerSpec weights = store.blob("application/vnd.ollama.image.model", read_whole_file(gguf));
    store.add_model(model, {weights}, config_json("gguf", family, "F16"));
    return store.blob_path(weights);
}

void write_text(const std::string& path, const std::string& text) {
    write_whole_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace

TEST_CASE("kld --save-base never replaces an Ollama-made model loaded through its converted copy", "[output][infer][kld]") {
    TempDir dir;
    // Ollama-made: llama.cpp is given an upstream-shaped copy in TMPDIR, never this file.
    fs::copy_file(demo("ollama-gemma3.gguf"), dir.file("X.gguf"));
    write_text(dir.file("text.txt"), corpus_text(600));
    const auto original = read_whole_file(dir.file("X.gguf"));
    OllamaStoreBuilder store(dir.file("store"));
    const std::string blob = store_with_gguf(store, "gem", dir.file("X.gguf"), "gemma3");
    const std::string manifest = store.root() + "/manifests/registry.ollama.ai/library/gem/latest";
    const auto store_before = folder_bytes(store.root());
    const std::string model_ref = store.root() + "/gem:latest";

    struct Case {
        std::string model, target, code;
    };
    for (const Case& c :
         {Case{dir.file("X.gguf"), dir.file("X.gguf"), "E_OUTPUT_IS_INPUT"}, Case{model_ref, blob, "E_OUTPUT_IN_STORE"},
          Case{model_ref, manifest, "E_OUTPUT_IS_INPUT"}, Case{model_ref, store.root() + "/blobs/new-base.bin", "E_OUTPUT_IN_STORE"},
          Case{blob, store.root() + "/manifests/base.bin", "E_OUTPUT_IN_STORE"}}) {
        INFO(c.model << " --save-base " << c.target);
        CliRun run = run_mlens({"kld", c.model, c.model, "--text", dir.file("text.txt"), "--ctx", "64", "--chunks", "1", "--threads", "2",
                                "--save-base", c.target});
        INFO(run.err);
        CHECK(run.exit_status != 0);
        CHECK(contains(run.err, c.code));
    }
    CHECK(read_whole_file(dir.file("X.gguf")) == original);
    CHECK(folder_bytes(store.root()) == store_before);
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("no command writes anywhere in an Ollama store it reads", "[output][ollama]") {
    TempDir dir;
    OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();
    // An Ollama-made GGUF in the same store, for export-upstream.
    store_with_gguf(store, "gem", demo("ollama-gemma3.gguf"), "gemma3");
    const std::string tiny_manifest = store.root() + "/manifests/registry.ollama.ai/library/tiny/latest";
    const std::string gem_manifest = store.root() + "/manifests/registry.ollama.ai/library/gem/latest";
    fs::create_directory_symlink(store.root() + "/manifests", dir.file("manifests-link"));
    const auto before = folder_bytes(store.root());

    const std::string tiny = store.root() + "/tiny:latest";
    const std::string gem = store.root() + "/gem:latest";
    const std::vector<std::string> targets = {
        tiny_manifest,  // an existing manifest
        store.root() + "/manifests/registry.ollama.ai/library/tiny/newtag",  // a new file among manifests
        store.root() + "/notes.csv",  // a new file at the root
        dir.file("manifests-link") + "/x.csv",  // through a symlinked parent
    };
    for (const std::string& target : targets) {
        INFO(target);
        CliRun csv = run_mlens({"hist", tiny, "w", "--csv", target});
        CHECK(csv.exit_status == 1);
        CHECK((contains(csv.err, "E_OUTPUT_IN_STORE") || contains(csv.err, "E_OUTPUT_IS_INPUT")));
        CliRun exported = run_mlens({"export-upstream", gem, target});
        CHECK(exported.exit_status != 0);
        CHECK((contains(exported.err, "E_OUTPUT_IN_STORE") || contains(exported.err, "E_OUTPUT_IS_INPUT")));
    }
    // The manifest named as the model protects its store as a reference does.
    CliRun by_manifest = run_mlens({"hist", tiny_manifest, "w", "--csv", gem_manifest});
    CHECK(by_manifest.exit_status == 1);
    CHECK(contains(by_manifest.err, "E_OUTPUT_IN_STORE"));
    CHECK(folder_bytes(store.root()) == before);
    CHECK(!fs::exists(store.root() + "/notes.csv"));
    CHECK(leftovers_in(dir.path()) == 0);

    // Outside the store the same commands write.
    CHECK(run_mlens({"hist", tiny, "w", "--csv", dir.file("h.csv")}).exit_status == 0);
    CHECK(fs::exists(dir.file("h.csv")));
}

TEST_CASE("a store reached through a bind mount is the same store", "[output][ollama]") {
    if (std::system("unshare --mount --map-root-user true >/dev/null 2>&1") != 0) {
        WARN("unshare --mount is not available here: the bind-mount case is skipped");
        return;
    }
    TempDir dir;
    OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();
    fs::create_directory(dir.file("B"));
    const auto before = folder_bytes(store.root());
    // In a mount namespace of its own: B is the store, mounted a second time.
    const std::string script = "mount --bind '" + store.root() + "' '" + dir.file("B") + "' && '" + MLENS_CLI_PATH + "' hist '" +
        dir.file("B") + "/tiny:latest' w --csv '" + store.root() + "/blobs/x' 2>'" + dir.file("err") + "'";
    const int status = std::system(("unshare --mount --map-root-user sh -c \"" + script + "\"").c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    const auto err = read_whole_file(dir.file("err"));
    CHECK(contains(std::string(err.begin(), err.end()), "E_OUTPUT_IN_STORE"));
    CHECK(folder_bytes(store.root()) == before);
}

TEST_CASE("export-upstream with --mmproj commits both files or neither, whatever commit step a signal arrives at", "[output][export]") {
    struct Stop {
        std::string step;
        int sig;
    };
    for (const Stop& stop :
         {Stop{"keep_previous 0", SIGTERM}, Stop{"keep_previous 1", SIGTERM}, Stop{"rename 0", SIGTERM}, Stop{"rename 1", SIGTERM},
          Stop{"drop_previous 0", SIGTERM}, Stop{"rename 0", SIGINT}, Stop{"rename 1", SIGHUP}}) {
        const std::string& step = stop.step;
        const int sig = stop.sig;
        DYNAMIC_SECTION(step << " " << strsignal(sig)) {
            TempDir dir;
            write_text(dir.file("out.gguf"), "previous text model");
            write_text(dir.file("mm.gguf"), "previous projector");
            ScopedEnv pause("MLENS_COMMIT_PAUSE_MS", "300");
            MlensProcess run({"export-upstream", demo("ollama-gemma3.gguf"), dir.file("out.gguf"), "--mmproj", dir.file("mm.gguf")});
            const auto start = std::chrono::steady_clock::now();
            while (!contains(run.err_so_far(), "commit step " + step) &&
                   std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            REQUIRE(contains(run.err_so_far(), "commit step " + step));
            REQUIRE(::kill(run.pid(), sig) == 0);
            CliRun ended = run.wait();
            // The signal waits for the commit: it ends the process after both files are in place.
            CHECK(ended.signal == sig);
            const auto out = read_whole_file(dir.file("out.gguf"));
            const auto mm = read_whole_file(dir.file("mm.gguf"));
            REQUIRE(out.size() >= 4);
            REQUIRE(mm.size() >= 4);
            CHECK(std::string(out.begin(), out.begin() + 4) == "GGUF");
            CHECK(std::string(mm.begin(), mm.begin() + 4) == "GGUF");
            CHECK(leftovers_in(dir.path()) == 0);
        }
    }
}

TEST_CASE("a temporary left by a killed writer is removed by the next writing command, which says so", "[output]") {
    TempDir dir;
    write_fixture_model(dir.file("in.gguf"), {{"w", GGML_TYPE_F32, {32, 2}, test_signal(64, 1)}});
    // A process that has ended: a child reaped at once. Its pid and start time name the stale
    // file; a file of this (live) test process stays.
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    const std::string dead = ".h.csv.tmp-" + gone_owner_stamp(child) + "-abcdef";
    const std::string previous = ".h.csv.prev-" + gone_owner_stamp(child) + "-abcdef";
    const std::string live = ".h.csv.tmp-" + owner_stamp() + "-abcdef";
    for (const std::string& name : {dead, previous, live}) write_text(dir.file(name), "left behind");
    CliRun run = run_mlens({"hist", dir.file("in.gguf"), "w", "--csv", dir.file("h.csv")});
    CHECK(run.exit_status == 0);
    CHECK(!fs::exists(dir.file(dead)));
    CHECK(contains(run.err, "note: removed"));
    CHECK(contains(run.err, "(no longer running)"));
    // A kept previous file is the only copy of what was there: reported, never removed.
    CHECK(fs::exists(dir.file(previous)));
    CHECK(contains(run.err, "rename it back to restore it"));
    CHECK(fs::exists(dir.file(live)));
}

namespace {

// The child processes of `pid` (every thread's children, from /proc).
std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
        std::ifstream in(task.path() / "children");
        for (pid_t child = 0; in >> child;) out.push_back(child);
    }
    return out;
}

}  // namespace

TEST_CASE("when the llama.cpp worker dies, the command removes the worker's temporaries", "[output][infer][kld]") {
    TempDir dir, tmp;
    ScopedEnv tmpdir("TMPDIR", tmp.path());
    write_text(dir.file("text.txt"), corpus_text(20000));
    // Ollama-made A and B: each goes through a converted copy in TMPDIR; A's rows go to base.bin.
    MlensProcess run({"kld", demo("ollama-gemma3.gguf"), demo("ollama-gemma3.gguf"), "--text", dir.file("text.txt"), "--ctx", "64",
                      "--threads", "1", "--save-base", dir.file("base.bin")});
    bool writing = false;
    const auto start = std::chrono::steady_clock::now();
    while (!writing && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
        for (const auto& e : fs::directory_iterator(dir.path()))
            writing = writing || contains(e.path().filename().string(), ".base.bin.tmp-");
        if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    REQUIRE(writing);
    const std::vector<pid_t> workers = children_of(run.pid());
    REQUIRE(workers.size() == 1);
    REQUIRE(::kill(workers[0], SIGKILL) == 0);
    CliRun ended = run.wait();
    CHECK(ended.exit_status != 0);
    CHECK(contains(ended.err, "llama.cpp stopped"));
    CHECK(contains(ended.err, "note: removed"));
    CHECK(leftovers_in(dir.path()) == 0);
    CHECK(!fs::exists(dir.file("base.bin")));
    CHECK(fs::is_empty(tmp.path()));
}
