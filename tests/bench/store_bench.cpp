// store_bench
//
// What opening large stores and sharded folders costs, through the core and the mlens command
// line. Writes into a temporary directory (removed at the end):
//  (a) a store whose one manifest is 50 MB (~250,000 layers): Ollama would read it, ModelLens
//      refuses it from its size (max_manifest_bytes = 4 MiB) before reading a byte;
//  (b) a store whose manifest is just under that cap: ~21,000 tensor layers, each its own small
//      safetensors blob, the largest manifest ModelLens parses and opens;
//  (c) a safetensors folder whose model.safetensors.index.json names 200 shards (small files
//      written with the core safetensors writer);
//  (d) a store of 100,000 manifests (1,000 models × 100 tags), each a config and one tensor layer
//      naming one of 1,000 small safetensors blobs.
// For (b) and (d) the listing is timed as the app opens a store (cached_check: manifests, configs
// and the cache database only) with an empty cache (first open) and after the app's verification
// job filled it (second open), the verification job of the second open (which finds every
// answer, loadability verdicts included, in the cache), next to the whole check without a cache
// and `mlens store` on an empty cache, on the cache its structure pass filled (header answers), on
// one `mlens store --verify` filled (whose digests let the listing take each model's cached
// loadability verdict) and with --no-cache. The cache database lives in the temporary
// directory (XDG_CACHE_HOME points there). A listing is kept until its child ends, as the app
// keeps the list it shows, so its release is not timed.
// Every figure is the wall time and beside it the CPU time (user + system) of the work, which a
// loaded machine changes far less.
// `store_bench [CASES] [--keep DIR]` runs the cases named by their letters (default "abcd"; "bd"
// runs the two store-open cases only); only their fixtures are written. With --keep the fixtures
// (and the cache folder) are moved to DIR at the end instead of removed, to profile a command on
// them (DIR must not exist and be on the file system of /tmp).
// The fixtures are written by a child process, so this one stays small. Each case runs in a
// forked child (twice; the faster is printed) that resets its peak resident size
// (/proc/self/clear_refs 5) before the work, so the memory printed is what the case added to the
// process's peak (VmHWM after minus VmRSS before). `mlens store` runs as its own
// process; its peak (ru_maxrss) is printed next to `mlens --version`'s, the program's own footprint.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "build_paths.h"
#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_writer.h"
#include "mlens/io/cache_database.h"
#include "mlens/ollama/manifest.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_listing.h"
#include "mlens/open/target.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using namespace mlens;
using namespace mlens::test;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kHugeManifestBytes = 50'000'000;
constexpr int kShards = 200, kTensorsPerShard = 4, kRuns = 2;
constexpr size_t kManyModels = 1000, kTagsPerModel = 100, kManyBlobs = 1000;

long status_kib(const char* field) {
    std::ifstream f("/proc/self/status");
    std::string line;
    const size_t n = std::strlen(field);
    while (std::getline(f, line))
        if (line.compare(0, n, field) == 0) return std::atol(line.c_str() + n + 1);
    return -1;
}

// User plus system CPU time of a finished rusage, in milliseconds.
double cpu_ms(const struct rusage& u) {
    return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3) +
        (static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3);
}

struct Measure {
    double ms = 0;
    double cpu_ms = 0;  // user + system time of the work (stable under load, unlike ms)
    long added_kib = 0;
    char outcome[96] = {};
};

// Runs setup, then fn, in a fresh child: fn's time, the peak memory it added, and the one-line
// outcome it reports.
Measure in_child(const std::function<void()>& setup, const std::function<std::string()>& fn) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        setup();
        Measure m;
        int clear = open("/proc/self/clear_refs", O_WRONLY);
        if (clear >= 0) {
            (void)!write(clear, "5", 1);
            close(clear);
        }
        long before = status_kib("VmRSS:");
        struct rusage u0 {}, u1 {};
        getrusage(RUSAGE_SELF, &u0);
        auto t0 = Clock::now();
        std::string outcome = fn();
        m.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        getrusage(RUSAGE_SELF, &u1);
        m.cpu_ms = cpu_ms(u1) - cpu_ms(u0);
        m.added_kib = status_kib("VmHWM:") - before;
        std::snprintf(m.outcome, sizeof m.outcome, "%s", outcome.c_str());
        (void)!write(fds[1], &m, sizeof m);
        _exit(0);
    }
    close(fds[1]);
    Measure m;
    if (read(fds[0], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) std::snprintf(m.outcome, sizeof m.outcome, "child failed");
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    return m;
}

void report(
    const std::string& label, const std::function<std::string()>& fn, const std::function<void()>& setup = [] {}, int runs = kRuns) {
    Measure best;
    best.ms = 1e300;
    for (int i = 0; i < runs; ++i) {
        Measure m = in_child(setup, fn);
        if (m.ms < best.ms) best = m;
    }
    std::printf("  %-44s %9.1f ms  cpu %9.1f ms   peak +%7.1f MiB   %s\n", label.c_str(), best.ms, best.cpu_ms, best.added_kib / 1024.0,
                best.outcome);
}

// Runs `mlens args...` (output discarded) and returns wall and CPU time and the process's peak RSS.
struct CliMeasure {
    double ms = 0;
    double cpu_ms = 0;
    long peak_kib = 0;
    int status = -1;
};

CliMeasure run_cli(const std::vector<std::string>& args, int runs = kRuns, const std::function<void()>& before_each = [] {}) {
    CliMeasure best;
    best.ms = 1e300;
    for (int i = 0; i < runs; ++i) {
        before_each();
        auto t0 = Clock::now();
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            std::vector<char*> argv = {const_cast<char*>(MLENS_CLI_PATH)};
            for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            execv(MLENS_CLI_PATH, argv.data());
            _exit(127);
        }
        int status = 0;
        struct rusage usage {};
        wait4(pid, &status, 0, &usage);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (ms < best.ms) best = {ms, cpu_ms(usage), usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
    }
    return best;
}

void report_cli(const std::string& label, const std::vector<std::string>& args, int runs = kRuns,
                const std::function<void()>& before_each = [] {}) {
    CliMeasure m = run_cli(args, runs, before_each);
    std::printf("  %-44s %9.1f ms  cpu %9.1f ms   peak  %7.1f MiB   exit %d\n", label.c_str(), m.ms, m.cpu_ms, m.peak_kib / 1024.0,
                m.status);
}

// A blob holding one F16 [8, 8] tensor, its header from the core safetensors writer.
std::vector<uint8_t> tensor_blob(const std::string& name, uint8_t fill) {
    Model m;
    m.format = Format::safetensors;
    TensorInfo t;
    t.name = name;
    t.type = safetensors_storage_type(SafetensorsDtype::f16);
    t.ne = {8, 8};
    t.n_elements = 64;
    t.n_bytes = 128;
    m.tensors.push_back(std::move(t));
    std::string header = *safetensors_header_text(m);
    std::vector<uint8_t> bytes(8 + header.size() + 128, fill);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
    std::memcpy(bytes.data() + 8, header.data(), header.size());
    return bytes;
}

std::string tensor_name(size_t i) {
    static const char* kParts[] = {"input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
                                   "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
                                   "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
    return "model.layers." + std::to_string(i / 9) + "." + kParts[i % 9] + ".weight";
}

// Store (b): tensor layers, one small blob each, until the manifest is just under the cap.
size_t write_capped_store(const std::string& root) {
    OllamaStoreBuilder b(root);
    LayerSpec config = b.blob(kImageConfigMediaType, config_json("safetensors", "llama", "", "1.00M"));
    std::vector<LayerSpec> layers;
    uint64_t bytes = manifest_json(config, {}).size();
    for (size_t i = 0;; ++i) {
        std::string name = tensor_name(i);
        LayerSpec layer = b.blob(kTensorMediaType, tensor_blob(name, static_cast<uint8_t>(i)), name);
        uint64_t next = bytes + layer.json().size() + 1;
        if (next > kMaxManifestBytes - 1024) break;
        bytes = next;
        layers.push_back(std::move(layer));
    }
    b.write_manifest("registry.ollama.ai/library/bench/capped", manifest_json(config, layers));
    return layers.size();
}

// Store (a): one manifest of kHugeManifestBytes, its layers naming a few real blobs in turn.
size_t write_huge_store(const std::string& root) {
    OllamaStoreBuilder b(root);
    LayerSpec config = b.blob(kImageConfigMediaType, config_json("safetensors", "llama", "", "1.00M"));
    std::vector<LayerSpec> blobs;
    for (size_t i = 0; i < 9; ++i) {
        blobs.push_back(b.blob(kTensorMediaType, tensor_blob(tensor_name(i), static_cast<uint8_t>(i)), tensor_name(i)));
    }
    std::vector<LayerSpec> layers;
    uint64_t bytes = manifest_json(config, {}).size();
    for (size_t i = 0; bytes < kHugeManifestBytes; ++i) {
        LayerSpec l = blobs[i % blobs.size()];
        l.name = tensor_name(i);
        bytes += l.json().size() + 1;
        layers.push_back(std::move(l));
    }
    b.write_manifest("registry.ollama.ai/library/bench/huge", manifest_json(config, layers));
    return layers.size();
}

// Folder (c): kShards shards written by the core writer and the index naming them.
bool write_sharded_folder(const std::string& dir) {
    std::string weight_map;
    for (int s = 0; s < kShards; ++s) {
        char file[64];
        std::snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, kShards);
        Model shard;
        shard.format = Format::safetensors;
        std::vector<uint8_t> data;
        for (int t = 0; t < kTensorsPerShard; ++t) {
            TensorInfo info;
            info.name = tensor_name(static_cast<size_t>(s * kTensorsPerShard + t));
            info.type = safetensors_storage_type(SafetensorsDtype::f16);
            info.ne = {64, 16};
            info.n_elements = 64 * 16;
            info.n_bytes = 64 * 16 * 2;
            info.data_offset = data.size();
            data.resize(data.size() + *info.n_bytes, static_cast<uint8_t>(s + t));
            weight_map += std::string(weight_map.empty() ? "" : ",") + "\"" + info.name + "\":\"" + file + "\"";
            shard.tensors.push_back(std::move(info));
        }
        SourceFile source;
        source.source = memory_source(std::move(data), file);
        shard.files.push_back(std::move(source));
        if (!write_safetensors(shard, dir + "/" + file)) return false;
    }
    uint64_t total = uint64_t{kShards} * kTensorsPerShard * 64 * 16 * 2;
    write_file(dir + "/model.safetensors.index.json",
               "{\"metadata\":{\"total_size\":" + std::to_string(total) + "},\"weight_map\":{" + weight_map + "}}");
    write_file(dir + "/config.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\"}");
    return true;
}

std::string outcome_of(const Result<Model>& m) {
    if (!m) return "refused: " + std::string(code_name(m.error().code));
    std::string s = std::to_string(m->files.size()) + " files, " + std::to_string(m->tensors.size()) + " tensors, " +
        std::to_string(m->error_count()) + " errors";
    for (const Diagnostic& d : m->diagnostics)
        if (d.severity == Severity::error) return s + " (first: " + std::string(code_name(d.code)) + " " + d.message.substr(0, 30) + ")";
    return s;
}

std::string outcome_of(const StoreListing& l) {
    std::string s = std::to_string(l.models.size()) + " model(s), " + std::to_string(l.blob_files.size()) + " blob files";
    for (const ModelListing& m : l.models)
        for (const Diagnostic& d : m.check.reasons) return s + ", " + std::string(code_name(d.code));
    return s;
}

void bench_store(const char* title, const std::string& root, const std::string& reference) {
    std::printf("%s\n", title);
    const std::string manifest = root + "/manifests/registry.ollama.ai/library/bench/" + reference.substr(6);
    std::string text;
    report(
        "parse_manifest(text already in memory)",
        [&] {
            Manifest m = parse_manifest(text);
            return std::to_string(m.layers.size()) + " layers" +
                (m.diagnostics.empty() ? std::string() : ", " + std::string(code_name(m.diagnostics.front().code)));
        },
        [&] {
            std::ifstream f(manifest, std::ios::binary);
            text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        });
    report("Store::read_manifest", [&] {
        auto store = Store::open(root);
        StoredManifest m = store->read_manifest(*parse_model_reference(reference));
        return std::to_string(m.manifest.layers.size()) + " layers" +
            (m.manifest.diagnostics.empty() ? std::string() : ", " + std::string(code_name(m.manifest.diagnostics.front().code)));
    });
    report("list_store", [&] { return outcome_of(list_store(*Store::open(root)).value); });
    report("open_model(\"" + reference + "\")", [&] {
        ::setenv("OLLAMA_MODELS", root.c_str(), 1);
        return outcome_of(open_model(reference));
    });
    report_cli("mlens store ROOT", {"store", root});
    report_cli("mlens store ROOT " + reference, {"store", root, reference});
    report_cli("mlens store ROOT " + reference + " --tensors", {"store", root, reference, "--tensors"});
}

// Store (d): kManyModels × kTagsPerModel manifests over kManyBlobs tensor blobs and one config.
size_t write_many_manifests_store(const std::string& root) {
    OllamaStoreBuilder b(root);
    LayerSpec config = b.blob(kImageConfigMediaType, config_json("safetensors", "llama", "", "1.00M"));
    std::vector<LayerSpec> blobs;
    for (size_t i = 0; i < kManyBlobs; ++i)
        blobs.push_back(b.blob(kTensorMediaType, tensor_blob(tensor_name(0), static_cast<uint8_t>(i)), tensor_name(0)));
    size_t n = 0;
    for (size_t model = 0; model < kManyModels; ++model)
        for (size_t tag = 0; tag < kTagsPerModel; ++tag, ++n)
            b.write_manifest("registry.ollama.ai/library/m" + std::to_string(model) + "/t" + std::to_string(tag),
                             manifest_json(config, {blobs[n % kManyBlobs]}));
    return n;
}

std::string cache_folder() { return default_cache_root(); }

void empty_cache() { fs::remove_all(cache_folder()); }

// "1 models: 1 verified, 0 not yet verified, 0 rejected; 1 loadability verdicts".
std::string verdicts_of(const StoreListing& l) {
    size_t unverified = 0, rejected = 0, loads = 0;
    for (const ModelListing& m : l.models) {
        unverified += m.check.verdict() == Verdict::unverified;
        rejected += m.check.verdict() == Verdict::errors;
        loads += m.loads.has_value();
    }
    return std::to_string(l.models.size()) + " models: " + std::to_string(l.models.size() - unverified - rejected) + " verified, " +
        std::to_string(unverified) + " not yet verified, " + std::to_string(rejected) + " rejected; " + std::to_string(loads) +
        " loadability verdicts";
}

// The listing is kept, as the app keeps the list it shows, until the process (each case's child)
// ends: its release is not part of the time.
std::string listed(const std::string& root, const StoreCheckOptions& options) {
    static std::vector<StoreListing> shown;
    shown.push_back(std::move(list_store(*Store::open(root), options).value));
    return verdicts_of(shown.back());
}

// The cache as the app fills it: every blob parsed and hashed once, the answers stored.
std::string fill_cache(const std::string& root) {
    const std::shared_ptr<CacheDatabase> cache = CacheDatabase::open();
    return listed(root, full_check(cache.get()));
}

// First and second open of a store, with and without the cache (a fresh cache before the first).
void bench_cache(const char* title, const std::string& root, int runs) {
    std::printf("%s\n", title);
    report(
        "first open, app (cached_check, empty cache)",
        [&] {
            const std::shared_ptr<CacheDatabase> cache = CacheDatabase::open();
            return listed(root, cached_check(*cache));
        },
        empty_cache, runs);
    report("verification job filling the cache", [&] { return fill_cache(root); }, empty_cache, runs);
    report("second open, app (cached_check, filled cache)", [&] {
        const std::shared_ptr<CacheDatabase> cache = CacheDatabase::open();
        return listed(root, cached_check(*cache));
    }, [] {}, runs);
    report("verification job on the second open (filled cache)", [&] { return fill_cache(root); }, [] {}, runs);
    report("every open without a cache (full check)", [&] { return listed(root, full_check(nullptr)); }, [] {}, runs);
    report_cli("mlens store ROOT (empty cache)", {"store", root}, runs, empty_cache);
    report_cli("mlens store ROOT (cache filled by the run before)", {"store", root}, runs);
    report_cli("mlens store ROOT --verify (filling the cache)", {"store", root, "--verify"}, runs, empty_cache);
    report_cli("mlens store ROOT (cache filled by --verify)", {"store", root}, runs);
    report_cli("mlens store ROOT --cached (filled cache)", {"store", root, "--cached"}, runs);
    report_cli("mlens store ROOT --no-cache", {"store", root, "--no-cache"}, runs);
}

}  // namespace

int main(int argc, char** argv) {
    std::string cases = "abcd", keep;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--keep" && i + 1 < argc)
            keep = argv[++i];
        else
            cases = argv[i];
    }
    const auto runs_case = [&](char c) { return cases.find(c) != std::string::npos; };
    TempDir dir;
    const std::string huge = dir.file("huge-store"), capped = dir.file("capped-store"), folder = dir.file("sharded"),
                      many = dir.file("many-store");
    ::setenv("XDG_CACHE_HOME", dir.file("cache").c_str(), 1);
    const std::string huge_manifest = huge + "/manifests/registry.ollama.ai/library/bench/huge";
    const std::string capped_manifest = capped + "/manifests/registry.ollama.ai/library/bench/capped";
    auto t0 = Clock::now();
    pid_t writer = fork();
    if (writer == 0) {
        fs::create_directories(huge);
        fs::create_directories(capped);
        fs::create_directories(folder);
        fs::create_directories(many);
        size_t huge_layers = runs_case('a') ? write_huge_store(huge) : 0;
        size_t capped_layers = runs_case('b') ? write_capped_store(capped) : 0;
        bool ok = !runs_case('c') || write_sharded_folder(folder);
        size_t manifests = runs_case('d') ? write_many_manifests_store(many) : 0;
        std::printf("fixtures: (a) %zu layers, (b) %zu layers, (c) %d shards, (d) %zu manifests%s\n", huge_layers, capped_layers, kShards,
                    manifests, ok ? "" : " NOT WRITTEN");
        std::fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(writer, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "store_bench: cannot write the fixtures\n");
        return 1;
    }
    struct rlimit files {};
    getrlimit(RLIMIT_NOFILE, &files);
    std::printf("written in %.1f s; open files limit (RLIMIT_NOFILE soft) %llu\n\n",
                std::chrono::duration<double>(Clock::now() - t0).count(), static_cast<unsigned long long>(files.rlim_cur));

    report_cli("mlens --version (the program's own footprint)", {"--version"});
    char title[160];
    if (runs_case('a')) {
        std::snprintf(title, sizeof title, "\n(a) store with a %.1f MB manifest (cap max_manifest_bytes %llu)",
                      static_cast<double>(fs::file_size(huge_manifest)) / 1e6, static_cast<unsigned long long>(kMaxManifestBytes));
        bench_store(title, huge, "bench:huge");
    }
    if (runs_case('b')) {
        std::snprintf(title, sizeof title, "\n(b) store with a %.2f MB manifest of tensor layers, one blob each",
                      static_cast<double>(fs::file_size(capped_manifest)) / 1e6);
        bench_store(title, capped, "bench:capped");
        std::snprintf(title, sizeof title, "\n(b) again: first and second open, with and without the cache database");
        bench_cache(title, capped, kRuns);
    }
    if (runs_case('d')) {
        std::snprintf(title, sizeof title, "\n(d) store of %zu manifests: first and second open, with and without the cache database",
                      kManyModels * kTagsPerModel);
        bench_cache(title, many, 1);
    }
    if (runs_case('c')) {
        std::printf("\n(c) safetensors folder, index.json naming %d shards (%d tensors each)\n", kShards, kTensorsPerShard);
        report("open_model(folder)", [&] { return outcome_of(open_model(folder)); });
        report_cli("mlens info FOLDER", {"info", folder});
    }
    if (!keep.empty()) {
        std::error_code ec;
        fs::rename(dir.path(), keep, ec);
        if (ec)
            std::fprintf(stderr, "store_bench: cannot keep the fixtures in %s: %s\n", keep.c_str(), ec.message().c_str());
        else
            std::printf("\nfixtures kept in %s\n", keep.c_str());
        fs::create_directories(dir.path());  // for the temporary directory's own removal
    }
    return 0;
}
