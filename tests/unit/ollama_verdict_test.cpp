// One verdict per store model: the model list, `mlens check`, `mlens store`/`show` and the store
// check of one model agree, on a store where every model but one is broken in its own way;
// permission denied is an error with its path (checked in a child that drops root); the
// descriptor pool follows RLIMIT_NOFILE and running out of descriptors says so.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "build_paths.h"
#include "broken_store.h"
#include "cli_runner.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_listing.h"
#include "mlens/ollama/store_model.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

struct BrokenStore {
    TempDir dir, outside;
    OllamaStoreBuilder b{dir.path()};
    std::vector<BrokenModel> models = write_broken_store(b, outside.path());
    std::string root() const { return dir.path(); }
};

std::string first_error_code(const ModelCheck& c) { return c.first_error() ? std::string(code_name(c.first_error()->code)) : ""; }

const ModelListing& row(const StoreListing& l, const std::string& name) {
    for (const ModelListing& m : l.models)
        if (m.ref.name.display() == name) return m;
    FAIL("no model " << name);
    throw;
}

const ModelCheck& checked(const StoreCheckReport& r, const std::string& name) {
    for (const ModelCheck& m : r.models)
        if (m.name.display() == name) return m;
    FAIL("no model " << name);
    throw;
}

// Every model of `root`: the list, the store check and the one-model check give the same verdict,
// reason and failed layers, with the structure pass and with digests; opening the model accepts
// exactly what the structure pass accepts.
void require_one_verdict(const std::string& root) {
    auto store = Store::open(root);
    REQUIRE(store);
    for (const StoreCheckOptions& options : {kStructureCheck, StoreCheckOptions{}}) {
        StoreListing listing = list_store(*store, options).value;
        StoreCheckReport report = check_store(*store, options).value;
        REQUIRE(listing.models.size() == report.models.size());
        for (const ModelListing& m : listing.models) {
            INFO(root << " " << m.ref.name.display() << " verify=" << options.verify_digests);
            const ModelCheck& c = checked(report, m.ref.name.display());
            ModelCheck one = check_store_model(*store, m.ref.name, options);
            CHECK(m.check.verdict() == c.verdict());
            CHECK(one.verdict() == c.verdict());
            CHECK(m.check.reason_text() == c.reason_text());
            CHECK(one.reason_text() == c.reason_text());
            CHECK(m.check.errors == c.errors);
            CHECK(one.errors == c.errors);
            CHECK(m.check.failed_layers.size() == c.failed_layers.size());
            CHECK(one.failed_layers.size() == c.failed_layers.size());
            CHECK(m.check.digests_verified == options.verify_digests);
            // Opening the model (what info, stats and the app's model documents do) hashes
            // nothing: it agrees with the structure pass.
            if (!options.verify_digests) {
                auto opened = open_store_model(*store, m.ref.name);
                CHECK((opened && opened->error_count() == 0) == m.ok());
            }
        }
    }
}

// Runs `body` in a forked child (after `setup`, which may _exit(3) when it fails) and returns the
// text it made; the child must exit 0.
template <typename Setup, typename F>
std::string in_child(Setup setup, F body) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        setup();
        std::string text = body();
        ssize_t n = ::write(fds[1], text.data(), text.size());
        ::_exit(n == static_cast<ssize_t>(text.size()) ? 0 : 4);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return text;
}

// Runs `body` where permissions bite: in a child whose real, effective and saved user and group
// ids are nobody's (65534) when running as root, else right here, and returns what it made.
template <typename F>
std::string as_unprivileged(F body) {
    if (::geteuid() != 0) return body();
    return in_child(
        [] {
            if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(3);
        },
        body);
}

// "CODE field" for every error of a check, one a line.
std::string errors_of(const std::string& root) {
    auto store = Store::open(root);
    if (!store) return "open failed: " + std::string(code_name(store.error().code)) + "\n";
    StoreCheckReport r = check_store(*store, kStructureCheck).value;
    std::string out;
    for (const Diagnostic& d : r.diagnostics)
        if (d.severity == Severity::error) out += std::string(code_name(d.code)) + " " + d.field + "\n";
    for (const ModelCheck& m : r.models) out += m.name.display() + (m.errors ? " rejected\n" : " accepted\n");
    return out;
}

// A store readable by everyone (mkdtemp makes its root 0700).
struct OpenStore {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    OpenStore() {
        std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
        b.add_tiny();
        b.add_model("locked", {b.tiny_model_layer()}, config_json("gguf", "llama", "F32"));
    }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("every broken model is rejected with its reason by the list, check and the one-model check", "[ollama][verdict]") {
    BrokenStore s;
    auto store = Store::open(s.root());
    REQUIRE(store);
    StoreListing quick = list_store(*store).value;
    StoreListing verified = list_store(*store, StoreCheckOptions{}).value;
    CHECK(!quick.digests_verified);
    CHECK(verified.digests_verified);
    REQUIRE(quick.models.size() == s.models.size() + 1);
    CHECK(row(quick, "tiny:latest").check.verdict() == Verdict::ok);
    CHECK(row(verified, "tiny:latest").check.verdict() == Verdict::ok);
    for (const BrokenModel& expected : s.models) {
        INFO(expected.name);
        const ModelListing& q = row(quick, expected.name);
        const ModelListing& v = row(verified, expected.name);
        CHECK(first_error_code(q.check) == expected.structure_code);
        CHECK(q.ok() == expected.structure_code.empty());
        CHECK(first_error_code(v.check) == expected.verified_code);
        CHECK(!v.ok());
        // What the config says is still shown next to the verdict.
        CHECK(!v.family.empty());
        CHECK(!v.format.empty());
    }
    const ModelListing& missing = row(quick, "missing:latest");
    CHECK(missing.check.short_reason() == "E_BLOB_MISSING layers[0]");
    CHECK(contains(missing.check.reason_text(), "E_BLOB_MISSING layers[0]: blobs/sha256-"));
    CHECK(row(quick, "fifo:latest").check.failed_layers.count("layers[0]") == 1);
    CHECK(row(verified, "mismatch:latest").check.short_reason() == "E_DIGEST_MISMATCH layers[0].digest");
    CHECK(quick.error_count() == s.models.size() - 1);  // mismatch:latest passes without digests
    CHECK(verified.error_count() == s.models.size());
}

TEST_CASE("a damaged tensor-blob model names every tensor layer it could not read", "[ollama][verdict]") {
    BrokenStore s;
    auto store = Store::open(s.root());
    REQUIRE(store);
    auto name = parse_model_reference("damaged-st:latest");
    REQUIRE(name);
    ModelCheck check = check_store_model(*store, *name);
    CHECK(check.verdict() == Verdict::errors);
    CHECK(check.errors == 4);
    StoredManifest sm = store->read_manifest(*name);
    REQUIRE(sm.valid());
    std::vector<FailedTensorLayer> failed = failed_tensor_layers(sm.manifest, check);
    const std::vector<std::string> names = damaged_st_tensor_names();
    std::vector<std::string> failed_names, expected;
    for (const FailedTensorLayer& f : failed) failed_names.push_back(f.name);
    for (size_t i = 0; i < names.size(); ++i)
        if (damaged_st_tensor_broken(i)) expected.push_back(names[i]);
    CHECK(failed_names == expected);
    REQUIRE(failed.size() == 4);
    CHECK(failed[0].field == "layers[1]");
    CHECK(failed[0].reason.code == ErrorCode::HeaderTooLarge);

    auto model = open_store_model(*store, *name);
    REQUIRE(model);
    CHECK(model->tensors.size() == 5);
    for (const TensorInfo& t : model->tensors) CHECK(failed_layer_of(failed, model->files[t.file].path) == nullptr);
}

TEST_CASE("the list, check and the one-model check agree on every demo and test store model", "[ollama][verdict]") {
    require_one_verdict(kDemoStore);
    BrokenStore s;
    require_one_verdict(s.root());
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    LayerSpec bad = b.tiny_model_layer();
    bad.digest = "sha256:nothex";
    b.write_manifest("registry.ollama.ai/library/evil/latest", manifest_json(b.tiny_config_layer(), {bad}));
    // Layers a model document does not read itself: a broken params blob, a config that is no JSON.
    b.add_model("badparams", {b.tiny_model_layer(), b.blob(kParamsMediaType, std::string("{\"temperature\": "))},
                config_json("gguf", "llama", "F32"));
    b.write_manifest("registry.ollama.ai/library/badconfig/latest",
                     manifest_json(b.blob(kImageConfigMediaType, std::string("not json")), {b.tiny_model_layer()}));
    require_one_verdict(dir.path());
    auto store = Store::open(dir.path());
    REQUIRE(store);
    for (const char* name : {"badparams:latest", "badconfig:latest"}) {
        INFO(name);
        auto opened = open_store_model(*store, *parse_model_reference(name));
        REQUIRE(opened);
        CHECK(opened->error_count() == 1);
    }
}

TEST_CASE("mlens store and mlens check give each broken model its verdict and reason", "[ollama][verdict][cli]") {
    BrokenStore s;
    CliRun list = run_mlens({"store", s.root()});
    INFO(list.out << list.err);
    CHECK(list.exit_status == 1);
    std::map<std::string, std::string> status_of;
    for (const BrokenModel& m : s.models) {
        size_t at = list.out.find(m.name + " ");
        REQUIRE(at != std::string::npos);
        std::string line = list.out.substr(at, list.out.find('\n', at) - at);
        CHECK(contains(line, m.structure_code.empty() ? " ok" : " " + m.structure_code));
    }
    CHECK(contains(list.out, "missing:latest"));
    CHECK(contains(list.out, "E_BLOB_MISSING layers[0]"));
    CHECK(contains(list.out, "E_OUTSIDE_ROOT layers[0]"));
    CHECK(contains(list.out, "digests not verified"));

    CliRun verified = run_mlens({"store", s.root(), "--verify", "--json"});
    REQUIRE(verified.exit_status == 1);
    auto j = nlohmann::json::parse(verified.out);
    CHECK(j["digests_verified"] == true);
    for (const auto& m : j["models"]) {
        INFO(m["name"]);
        bool tiny = m["name"] == "tiny:latest";
        CHECK(m["ok"] == tiny);
        CHECK(m["verdict"] == (tiny ? "ok" : "rejected"));
    }

    CliRun check = run_mlens({"check", s.root()});
    CHECK(check.exit_status == 1);
    for (const BrokenModel& m : s.models) CHECK(contains(check.out, m.name + ": rejected"));
    CHECK(contains(check.out, "mismatch:latest: rejected (1 error, 0 warnings): E_DIGEST_MISMATCH layers[0].digest: expected sha256:"));
    CHECK(contains(check.out, "tiny:latest: ok"));
}

TEST_CASE("mlens show --tensors lists every tensor of a damaged model and exits 1", "[ollama][verdict][cli]") {
    BrokenStore s;
    CliRun run = run_mlens({"show", "damaged-st:latest", "--store", s.root(), "--tensors"});
    INFO(run.out << run.err);
    CHECK(run.exit_status == 1);
    CHECK(contains(run.out, "rejected: HeaderTooLarge blobs/sha256-"));
    const std::vector<std::string> names = damaged_st_tensor_names();
    const size_t table = run.out.find("TENSOR ");
    REQUIRE(table != std::string::npos);
    for (size_t i = 0; i < names.size(); ++i) {
        size_t at = run.out.find(names[i], table);
        REQUIRE(at != std::string::npos);
        std::string line = run.out.substr(at, run.out.find('\n', at) - at);
        if (damaged_st_tensor_broken(i)) {
            CHECK(contains(line, "not read (layers[" + std::to_string(i) + "])"));
            CHECK(contains(line, "HeaderTooLarge"));
        } else {
            CHECK(contains(line, " ok"));
        }
    }
    CliRun tiny = run_mlens({"show", "tiny:latest", "--store", s.root(), "--tensors"});
    CHECK(tiny.exit_status == 0);
}

TEST_CASE("permission denied in a store is an error naming the path, never a skip", "[ollama][verdict][permissions]") {
    SECTION("an unreadable model folder") {
        OpenStore s;
        const std::string locked = s.dir.path() + "/manifests/registry.ollama.ai/library/locked";
        std::filesystem::permissions(locked, std::filesystem::perms::none);
        std::string out = as_unprivileged([&] { return errors_of(s.dir.path()); });
        CHECK(contains(out, "E_PERMISSION manifests/registry.ollama.ai/library/locked\n"));
        CHECK(contains(out, "tiny:latest accepted\n"));
    }
    SECTION("an unreadable manifests folder") {
        OpenStore s;
        std::filesystem::permissions(s.dir.path() + "/manifests", std::filesystem::perms::none);
        std::string out = as_unprivileged([&] { return errors_of(s.dir.path()); });
        CHECK(out == "E_PERMISSION manifests\n");
    }
    SECTION("an unreadable manifest and an unreadable blob") {
        OpenStore s;
        std::filesystem::permissions(s.dir.path() + "/manifests/registry.ollama.ai/library/locked/latest", std::filesystem::perms::none);
        LayerSpec secret = s.b.blob(kModelMediaType, std::string("secret model bytes"));
        std::filesystem::permissions(s.b.blob_path(secret), std::filesystem::perms::none);
        s.b.add_model("secret", {secret}, config_json("gguf", "llama", "F32"));
        std::string out = as_unprivileged([&] { return errors_of(s.dir.path()); });
        CHECK(contains(out, "E_PERMISSION manifests/registry.ollama.ai/library/locked/latest\n"));
        CHECK(contains(out, "E_PERMISSION manifests/registry.ollama.ai/library/secret/latest layers[0]\n"));
        CHECK(contains(out, "locked:latest rejected\n"));
        CHECK(contains(out, "secret:latest rejected\n"));
        CHECK(contains(out, "tiny:latest accepted\n"));
    }
}

TEST_CASE("a 600-blob model under a 32-descriptor limit: check, show, stats and compare all work", "[ollama][verdict][fdlimit]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    std::vector<LayerSpec> layers;
    for (int i = 0; i < 600; ++i) {
        std::string name = "model.layers." + std::to_string(i) + ".mlp.up_proj.weight";
        float values[2] = {static_cast<float>(i), 1.0f};
        std::vector<uint8_t> data(reinterpret_cast<uint8_t*>(values), reinterpret_cast<uint8_t*>(values) + 8);
        std::vector<uint8_t> bytes = SafetensorsBuilder().tensor(name, "F32", "[2]", data).bytes();
        layers.push_back(b.blob(kTensorMediaType, bytes, name));
    }
    b.add_model("wide", layers, config_json("safetensors", "qwen3", "F32", "1200"));
    const std::string ref = dir.path() + "/wide:latest";
    CliLimits file_limit;
    file_limit.max_open_files = 32;

    CliRun check = run_mlens({"check", dir.path()}, file_limit);
    INFO(check.out << check.err);
    CHECK(check.exit_status == 0);
    CHECK(contains(check.out, "wide:latest: ok (0 errors, 0 warnings)"));
    CHECK(check.err.empty());

    CliRun show = run_mlens({"show", "wide", "--store", dir.path(), "--tensors"}, file_limit);
    INFO(show.out << show.err);
    CHECK(show.exit_status == 0);
    CHECK(contains(show.out, "model.layers.599.mlp.up_proj.weight"));
    CHECK(show.err.empty());

    CliRun stats = run_mlens({"stats", ref, "model.layers.599.mlp.up_proj.weight"}, file_limit);
    INFO(stats.out << stats.err);
    CHECK(stats.exit_status == 0);
    CHECK(contains(stats.out, "599"));

    CliRun compare = run_mlens({"compare", ref, ref}, file_limit);
    INFO(compare.out << compare.err);
    CHECK(compare.exit_status == 0);
}

TEST_CASE("running out of descriptors is reported as such", "[ollama][verdict][fdlimit]") {
    TempDir dir;
    write_file(dir.file("model.bin"), "bytes");
    const std::string text = in_child(
        [] {
            rlimit limit{32, 32};
            if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(3);
        },
        [&] {
            // Take every descriptor left, outside the pool, so none can be made free.
            do {
                while (::open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {}
            } while (release_idle_descriptor());
            auto opened = open_file(dir.file("model.bin"));
            return opened ? std::string("opened") : std::string(code_name(opened.error().code)) + ": " + opened.error().message;
        });
    CHECK(text == "E_FD_LIMIT: cannot open: out of file descriptors (limit 32)");
}

TEST_CASE("a blob's readability: the mode bits grant it, the kernel confirms a refusal", "[ollama][verdict][permissions]") {
    // As nobody (not the owner, not in the blob's group): which bits let the check read the blob.
    if (::geteuid() != 0) {
        WARN("needs root to read as another user than the blob's owner; skipped");
        return;
    }
    const auto judged = [](mode_t mode) {
        OpenStore s;
        LayerSpec secret = s.b.blob(kModelMediaType, std::string("secret model bytes"));
        std::filesystem::permissions(s.b.blob_path(secret), std::filesystem::perms(mode));
        s.b.add_model("secret", {secret}, config_json("gguf", "llama", "F32"));
        return as_unprivileged([&] { return errors_of(s.dir.path()); });
    };
    // Readable by the group only: refused, in the layer that names the blob.
    CHECK(contains(judged(0640), "E_PERMISSION manifests/registry.ollama.ai/library/secret/latest layers[0]\n"));
    // Everyone's bit without the group's: the bits alone do not decide; the kernel grants it, and
    // the blob is read (and found not to be a GGUF).
    const std::string others = judged(0604);
    CHECK(!contains(others, "E_PERMISSION"));
    CHECK(contains(others, "E_BAD_MAGIC"));
    // The group's and everyone's bits: readable without asking.
    const std::string everyone = judged(0044);
    CHECK(!contains(everyone, "E_PERMISSION"));
    CHECK(contains(everyone, "E_BAD_MAGIC"));
}
