// The newer commands under a hostile environment: a file-size limit with SIGXFSZ at its default
// action (the kernel would end the process mid-write), standard output on a full device, and
// --base/--reference/--imatrix files that are not what they claim. Each run must fail with the
// reason, leave the inputs' bytes as they were and no temporary file behind.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_builder.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// RLIMIT_FSIZE at `bytes` with SIGXFSZ left at its default action, as a shell's `ulimit -f` does.
std::function<void()> file_size_limit_default_signal(rlim_t bytes) {
    return [bytes] {
        ::signal(SIGXFSZ, SIG_DFL);
        rlimit limit{bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
    };
}

// Standard output on /dev/full: every write fails with ENOSPC.
std::function<void()> stdout_to_full_device() {
    return [] {
        const int fd = ::open("/dev/full", O_WRONLY);
        if (fd >= 0) ::dup2(fd, STDOUT_FILENO);
    };
}

}  // namespace

TEST_CASE("mlens export past a file-size limit fails with the reason, not SIGXFSZ, and leaves nothing", "[output][store_export][cli]") {
    TempDir dir;
    const auto store_before = folder_bytes(kDemoStore);
    struct Case {
        const char* model;
        const char* format;
        const char* written;  // the file the limit stops
    };
    for (const Case& c :
         {Case{"tiny-llama:q4_0", "gguf", "model.gguf"}, Case{"tiny-mlx:mixed", "hf", "model-00001-of-00001.safetensors"}}) {
        INFO(c.model);
        const std::string out = dir.file(std::string("out-") + c.format);
        CliRun run =
            MlensProcess({"export", c.model, out, "--store", kDemoStore, "--format", c.format}, file_size_limit_default_signal(16 * 1024))
                .wait();
        INFO(run.err);
        CHECK(run.signal == 0);
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err, "E_IO"));
        CHECK(contains(run.err, c.written));
        CHECK(contains(run.err, "File too large"));
        CHECK(!fs::exists(out));
        CHECK(leftovers_in(dir.path()) == 0);
    }
    CHECK(folder_bytes(kDemoStore) == store_before);
    CHECK(leftovers_in(kDemoStore) == 0);
}

TEST_CASE("mlens hist --csv past a file-size limit fails with the reason, not SIGXFSZ", "[output][hist_export][cli]") {
    TempDir dir;
    const std::string model = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
    const std::vector<uint8_t> before = read_whole_file(model);
    CliRun run =
        MlensProcess({"hist", model, "token_embd.weight", "--csv", dir.file("h.csv")}, file_size_limit_default_signal(1024)).wait();
    CHECK(run.signal == 0);
    CHECK(run.exit_status == 1);
    CHECK(contains(run.err, "File too large"));
    CHECK(contains(run.err, dir.file("h.csv")));
    CHECK(!fs::exists(dir.file("h.csv")));
    CHECK(leftovers_in(dir.path()) == 0);
    CHECK(read_whole_file(model) == before);
}

TEST_CASE("a command whose standard output cannot be written exits 1 with the reason", "[output][cli]") {
    const std::string model = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    const std::vector<std::vector<std::string>> commands = {
        {"info", model}, {"dump", model}, {"recipe", model}, {"--reference", "man"}, {"store", kDemoStore}};
    for (const auto& args : commands) {
        INFO(args.front());
        // The same command succeeds with a working standard output.
        REQUIRE(run_mlens(args).exit_status == 0);
        CliRun run = MlensProcess(args, stdout_to_full_device()).wait();
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err, "error: E_IO standard output: cannot write"));
        // A short output fails at the final flush, whose reason is known; a long one fails on an
        // earlier write whose errno is gone by then.
        if (args.front() == "info") CHECK(contains(run.err, "cannot write: No space left on device"));
    }
    // A command that failed keeps its own status.
    CliRun missing = MlensProcess({"info", "/nonexistent/model.gguf"}, stdout_to_full_device()).wait();
    CHECK(missing.exit_status == 1);
}

namespace {

// The largest blob of a copy of the demo store: the GGUF of tiny-llama:q4_0.
std::string largest_blob(const std::string& store) {
    std::string largest;
    for (const auto& e : fs::directory_iterator(store + "/blobs"))
        if (largest.empty() || fs::file_size(e.path()) > fs::file_size(largest)) largest = e.path().string();
    return largest;
}

}  // namespace

TEST_CASE("mlens export refuses a store blob whose bytes no longer match its digest", "[store_export][cli]") {
    TempDir dir;
    const std::string store = dir.file("store");
    fs::copy(kDemoStore, store, fs::copy_options::recursive);
    // The largest blob is the GGUF of tiny-llama:q4_0; one byte of its tensor data changes, its size stays.
    const std::string largest = largest_blob(store);
    std::vector<uint8_t> blob = read_whole_file(largest);
    REQUIRE(blob.size() > 2000000);
    blob[2000000] ^= 0x55;
    write_whole_file(largest, blob);
    const auto store_before = folder_bytes(store);
    CliRun run = run_mlens({"export", "tiny-llama:q4_0", dir.file("out"), "--store", store, "--format", "gguf"});
    INFO(run.err);
    CHECK(run.exit_status == 1);
    CHECK(contains(run.err,
                   "E_DIGEST_MISMATCH model.gguf: the store's blob does not match its digest: expected sha256:" +
                       fs::path(largest).filename().string().substr(7)));
    CHECK(!contains(run.out, "verified"));
    CHECK(!fs::exists(dir.file("out")));
    CHECK(leftovers_in(dir.path()) == 0);
    CHECK(folder_bytes(store) == store_before);
}

TEST_CASE("hostile --base, --reference and --imatrix files fail at once with the file named", "[cli][kld][requant]") {
    TempDir dir;
    const std::string model = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
    // A 1 TiB file of zeros, a hole on disk.
    write_whole_file(dir.file("sparse"), std::vector<uint8_t>{});
    fs::resize_file(dir.file("sparse"), 1ull << 40);

    for (const std::string& base : {dir.file("fifo"), dir.file("missing")}) {
        INFO(base);
        CliLimits limits;
        limits.seconds = 20;
        CliRun run = run_mlens({"kld", "--base", base, model}, limits);
        CHECK(!run.timed_out);
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err, base + ": "));
    }
    CHECK(contains(run_mlens({"kld", "--base", dir.file("fifo"), model}).err,
                   "error: E_NOT_REGULAR_FILE: " + dir.file("fifo") + ": not a regular file"));
    CHECK(contains(run_mlens({"kld", "--base", dir.file("missing"), model}).err,
                   "error: E_NOT_FOUND: " + dir.file("missing") + ": cannot open"));

    // A reference that does not parse is reported, and the run does not claim success.
    CliRun requant = run_mlens({"requant", model, "blk.0.attn_q.weight", "--types", "Q4_0", "--reference", dir.file("sparse")});
    CHECK(requant.exit_status == 1);
    CHECK(contains(requant.err, "error: safetensors InvalidHeaderDeserialization"));

    CliRun imatrix = run_mlens({"imatrix", dir.file("sparse")});
    CHECK(imatrix.exit_status == 1);
    CHECK(contains(imatrix.err, "0 entries, where a legacy imatrix holds at least one"));
    CHECK(fs::file_size(dir.file("sparse")) == (1ull << 40));
    CHECK(leftovers_in(dir.path()) == 0);
}

TEST_CASE("mlens export ended by SIGHUP (a closed terminal) leaves neither OUT_DIR nor its scratch folder", "[store_export][cli]") {
    TempDir dir;
    const std::string root = dir.file("store");
    fs::create_directories(root);
    {
        // config.json is placed in the scratch folder first, then one BF16 tensor of 64M values
        // is written as F32 and re-read: the signal arrives with a finished file in the folder.
        OllamaStoreBuilder b(root);
        SafetensorsBuilder blob;
        blob.tensor("model.embed_tokens.weight", "BF16", "[16384,4096]", std::vector<uint8_t>((64ull << 20) * 2, 0x3F));
        b.add_model("big",
                    {b.blob(kTensorMediaType, blob.bytes(), std::string("model.embed_tokens.weight")),
                     b.blob(kJsonMediaType, std::string(R"({"model_type":"llama"})"), std::string("config.json"))},
                    config_json("safetensors", "llama", ""));
    }
    const auto store_before = folder_bytes(root);
    fs::create_directories(dir.file("parent"));
    MlensProcess run({"export", "big", dir.file("parent/out"), "--store", root, "--dtype", "f32"});
    bool placed_one = false;
    const auto start = std::chrono::steady_clock::now();
    while (!placed_one && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir.file("parent"), ec))
            placed_one = placed_one || fs::exists(e.path() / "config.json", ec);
        if (!placed_one) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    REQUIRE(placed_one);
    REQUIRE(::kill(run.pid(), SIGHUP) == 0);
    CliRun ended = run.wait();
    INFO(ended.err);
    CHECK(ended.signal == 0);
    CHECK(ended.exit_status == 1);
    CHECK(contains(ended.err, "E_CANCELLED"));
    CHECK(fs::is_empty(dir.file("parent")));
    CHECK(folder_bytes(root) == store_before);
}

TEST_CASE("inference commands on a store model whose GGUF blob is a FIFO name the blob and return", "[cli][kld][infer]") {
    TempDir dir;
    const std::string store = dir.file("store");
    fs::copy(kDemoStore, store, fs::copy_options::recursive);
    const std::string largest = largest_blob(store);
    fs::remove(largest);
    REQUIRE(::mkfifo(largest.c_str(), 0600) == 0);
    write_whole_file(dir.file("text.txt"), std::vector<uint8_t>(4096, 'a'));
    const std::string model = store + "/tiny-llama:q4_0";
    const std::string other = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    const std::vector<std::vector<std::string>> commands = {{"kld", model, other, "--text", dir.file("text.txt")},
                                                            {"layer-divergence", model, other, "-p", "hi"},
                                                            {"run", model, "-p", "hi", "-n", "2"}};
    for (const auto& args : commands) {
        INFO(args.front());
        CliLimits limits;
        limits.seconds = 20;
        CliRun run = run_mlens(args, limits);
        CHECK(!run.timed_out);
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err,
                       "E_NOT_REGULAR_FILE layers[0]: the model's GGUF blob cannot be opened: blobs/" +
                           fs::path(largest).filename().string() + ": is a FIFO"));
        CHECK(!contains(run.err, "this is a GGUF model"));
    }
    CHECK(fs::is_fifo(largest));
}

// AddressSanitizer reserves terabytes of shadow address space, so a process under an address-space
// limit cannot start: these two run without the limit there, and the out-of-memory case not at all.
#ifdef __SANITIZE_ADDRESS__
constexpr uint64_t kAddressSpaceLimit = 0;
#else
constexpr uint64_t kAddressSpaceLimit = 2000000000;

TEST_CASE("mlens kld with a context beyond the address space says the worker ran out of memory", "[cli][kld]") {
    TempDir dir;
    std::string text;
    while (text.size() < 600000) text += "The quick brown fox jumps over the lazy dog. ";
    write_whole_file(dir.file("text.txt"), std::vector<uint8_t>(text.begin(), text.end()));
    const std::string a = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
    const std::string b = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    // 65536 positions of 32000 logits are 8 GiB for one chunk: far past a 2 GB address space.
    CliLimits limits;
    limits.address_space_bytes = kAddressSpaceLimit;
    limits.seconds = 60;
    CliRun run = run_mlens({"kld", a, b, "--text", dir.file("text.txt"), "--ctx", "65536", "--chunks", "1"}, limits);
    CHECK(!run.timed_out);
    CHECK(run.exit_status == 1);
    CHECK(contains(run.err, "error: " + a + ": E_NO_MEMORY: the llama.cpp worker ran out of memory for this request"));
    CHECK(leftovers_in(dir.path()) == 0);
}

// Under 50 MiB of address space mlens starts, but no helper thread gets its stack and large
// buffers are refused.
constexpr uint64_t kTightAddressSpace = 50ull << 20;

// A helper thread starts only while its stack leaves headroom, so the answer does not depend on
// how many stacks fit: every limit from 46 to 60 MiB (where a whole thread more or less fits, by
// the layout of the binary) gives the same listing.
TEST_CASE("mlens under a tight address-space limit works on the threads it can start", "[cli][bounded]") {
    const std::vector<std::string> args = {"store", std::string(MLENS_DEMO_DIR) + "/ollama-store"};
    const CliRun free = run_mlens(args);
    for (uint64_t mib = 46; mib <= 60; mib += 2) {
        CliLimits limits;
        limits.address_space_bytes = mib << 20;
        limits.seconds = 60;
        const CliRun tight = run_mlens(args, limits);
        INFO(mib << " MiB: " << tight.err);
        CHECK(tight.signal == 0);
        CHECK(tight.exit_status == 0);
        CHECK(tight.out == free.out);
    }
}

TEST_CASE("an allocation a tight address-space limit refuses ends the command with E_NO_MEMORY", "[cli][bounded]") {
    // A histogram of 2^20 bins counts into several tables of that many counters.
    const std::vector<std::string> args = {"hist", std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf", "token_embd.weight", "--bins",
                                           "1048576", "--json"};
    CliLimits limits;
    limits.address_space_bytes = kTightAddressSpace;
    limits.seconds = 60;
    const CliRun run = run_mlens(args, limits);
    INFO(run.out << run.err);
    CHECK(run.signal == 0);
    CHECK(run.exit_status == 1);
    CHECK(contains(run.err, "error: E_NO_MEMORY: out of memory while running mlens hist (the address space is limited to 52.4 MB by ulimit -v)"));
    const auto j = nlohmann::json::parse(run.out);
    CHECK(j["error"]["code"] == "E_NO_MEMORY");
    CHECK(run_mlens(args).exit_status == 0);
}

TEST_CASE("statistics under any address-space limit end with their figures or E_NO_MEMORY - never an abort", "[cli][bounded]") {
    // Blocks of zeros, sparse: 24 MiB of Q4_K (type 12) and of Q8_0 (type 8). Between the least
    // address space in which mlens starts and the most its statistics need, each helper thread's
    // first buffers meet the limit at some step; glibc once ended the program there ("failed to
    // register TLS destructor") when a thread_local object was first used.
    TempDir dir;
    for (const auto& [name, type, block_bytes, block] : {std::tuple{"q4_k", 12u, 144ull, 256ull}, std::tuple{"q8_0", 8u, 34ull, 32ull}}) {
        const uint64_t rows = (24ull << 20) / (4096 / block * block_bytes);
        const std::string path = dir.file(std::string(name) + ".gguf");
        GgufBuilder b;
        b.header(1, 1).kv_string("general.architecture", "llama");
        b.tensor_info("w", {4096, rows}, type, 0);
        b.pad_to(32);
        write_whole_file(path, b.bytes);
        fs::resize_file(path, b.size() + rows * (4096 / block) * block_bytes);
        CliLimits limits;
        limits.seconds = 60;
        int finished = 0;
        for (uint64_t kib = 44 << 10; kib <= 98 << 10; kib += 3 << 10) {
            limits.address_space_bytes = kib << 10;
            const CliRun run = run_mlens({"stats", path, "w"}, limits);
            INFO(name << " under " << kib << " KiB: " << run.err);
            CHECK(run.signal == 0);
            CHECK((run.exit_status == 0 || contains(run.err, "E_NO_MEMORY")));
            finished += run.exit_status == 0;
        }
        CHECK(finished > 0);
    }
}

TEST_CASE("mlens on a terminal under a tight address-space limit runs without its progress lines", "[cli][bounded]") {
    // On a terminal every command starts a thread for the download line, and statistics one for
    // their progress line. Under the least address space in which a command runs with standard
    // error in a file (found by steps of 1 MiB down from 50 MiB), there is no room for their stacks:
    // on a terminal it must run on without them, printing the same.
    const std::string model = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"info", model}, {"stats", model, "blk.0.attn_q.weight"}, {"store", kDemoStore}}) {
        INFO(args[0]);
        const CliRun free = run_mlens(args);
        REQUIRE(free.exit_status == 0);
        CliLimits limits;
        limits.seconds = 60;
        uint64_t least = 0;
        for (uint64_t mib = 50; mib >= 30; --mib) {
            limits.address_space_bytes = mib << 20;
            const CliRun run = run_mlens(args, limits);
            if (run.exit_status != 0 || run.out != free.out) break;
            least = limits.address_space_bytes;
        }
        REQUIRE(least != 0);
        INFO("address space " << (least >> 20) << " MiB");
        limits.address_space_bytes = least;
        limits.stderr_terminal = true;
        const CliRun tight = run_mlens(args, limits);
        INFO(tight.err);
        CHECK(tight.signal == 0);
        CHECK(tight.exit_status == 0);
        CHECK(tight.out == free.out);
        CHECK(tight.err.empty());
    }
}
#endif

TEST_CASE("mlens imatrix on a sparse file claiming 2^38 columns or experts stays in bounded memory", "[cli][imatrix][bounded]") {
    TempDir dir;
    constexpr uint64_t kHuge = 1ull << 38;  // 1 TiB of F32
    struct Case {
        std::vector<uint64_t> sums, counts;
    };
    // 2^38 columns of one expert: summarized chunk by chunk until interrupted. One column of 2^38
    // experts: refused, the counts of so many experts are not read.
    const Case columns{{kHuge, 1}, {1, 1}}, experts{{1, kHuge}, {1, kHuge}};
    for (const Case* c : {&columns, &experts}) {
        const std::string path = dir.file(c == &columns ? "columns.imatrix" : "experts.imatrix");
        GgufBuilder b;
        b.header(2, 1).kv_string("general.type", "imatrix");
        b.tensor_info("blk.0.ffn_up.weight.in_sum2", c->sums, 0, 0);
        b.tensor_info("blk.0.ffn_up.weight.counts", c->counts, 0, kHuge * 4);
        b.pad_to(32);
        write_whole_file(path, b.bytes);
        const uint64_t counts_bytes = (c == &columns ? 1 : kHuge) * 4;
        fs::resize_file(path, b.size() + kHuge * 4 + counts_bytes);
        CliLimits limits;
        limits.address_space_bytes = kAddressSpaceLimit;
        limits.seconds = 2;
        limits.stop_signal = SIGINT;
        CliRun run = run_mlens({"imatrix", path}, limits);
        INFO(run.err);
        CHECK(run.signal == 0);
        CHECK(run.exit_status == 1);
#ifndef __SANITIZE_ADDRESS__
        CHECK(run.peak_rss_bytes < (300ull << 20));
#endif
        if (c == &columns) {
            CHECK(run.timed_out);
            CHECK(contains(run.err, "error: E_CANCELLED: cancelled"));
        } else {
            CHECK(!run.timed_out);
            CHECK(contains(run.err, "E_IMATRIX_SHAPE"));
            CHECK(contains(run.err, "blk.0.ffn_up.weight: 274877906944 experts, more than the 1048576 an importance matrix is read with"));
        }
    }
}

TEST_CASE("hist and kld --save-base refuse to write a new file into the blobs folder of a store they read", "[output][cli][kld]") {
    TempDir dir;
    const std::string store = dir.file("store");
    fs::copy(kDemoStore, store, fs::copy_options::recursive);
    const auto store_before = folder_bytes(store);
    write_whole_file(dir.file("text.txt"), std::vector<uint8_t>(4096, 'a'));
    const std::string model = store + "/tiny-llama:q4_0";
    const std::string other = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";
    std::string blob;
    for (const auto& e : fs::directory_iterator(store + "/blobs"))
        if (blob.empty() || fs::file_size(e.path()) > fs::file_size(blob)) blob = e.path().string();
    const std::vector<std::vector<std::string>> commands = {
        {"hist", model, "blk.0.attn_q.weight", "--csv", store + "/blobs/h.csv"},
        {"hist", blob, "blk.0.attn_q.weight", "--png", store + "/blobs/../blobs/h.png"},
        {"kld", model, other, "--text", dir.file("text.txt"), "--ctx", "64", "--chunks", "1", "--save-base", store + "/blobs/base.kld"}};
    for (const auto& args : commands) {
        INFO(args.front() << " " << args.back());
        CliRun run = run_mlens(args);
        CHECK(run.exit_status == 1);
        CHECK(contains(run.err, "E_OUTPUT_IN_STORE output: refusing to write " + args.back() + " inside " + store));
        CHECK(contains(run.err, "an Ollama store this operation reads, which is never written to"));
    }
    CHECK(folder_bytes(store) == store_before);
    CHECK(leftovers_in(store) == 0);
    // The same commands write beside the store.
    CHECK(run_mlens({"hist", model, "blk.0.attn_q.weight", "--csv", dir.file("h.csv")}).exit_status == 0);
    CHECK(fs::exists(dir.file("h.csv")));
}

TEST_CASE("mlens export places an OUT_DIR whose name is as long as a file name may be", "[store_export][cli]") {
    TempDir dir;
    const std::string out = dir.file(std::string(255, 'a'));
    CliRun run = run_mlens({"export", "tiny-mlx:mixed", out, "--store", kDemoStore});
    INFO(run.err);
    CHECK(run.exit_status == 0);
    CHECK(fs::exists(out + "/config.json"));
    CHECK(leftovers_in(dir.path()) == 0);
}
