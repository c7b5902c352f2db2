// Verifying a registry's model where it lives (registry_verify.h) and the streaming hash of a
// byte source it stands on (blob_hash.h): the demo store served as a loopback registry, one of its
// blobs served changed, a registry that fails, and a download limit below the model's size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <set>

#include "build_paths.h"
#include "cli_runner.h"
#include "failing_source.h"
#include "loopback_server.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/registry_verify.h"
#include "mlens/remote/range_cache.h"
#include "mlens/remote/remote_source.h"
#include "registry_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

using test::FailingSource;

std::string file_text(const std::string& path) {
    const std::vector<uint8_t> bytes = test::read_whole_file(path);
    return std::string(bytes.begin(), bytes.end());
}

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + (i >> 9));
    return bytes;
}

// `text` of the registry OLLAMA_REGISTRY names.
RegistryReference reference(const std::string& text) {
    auto parsed = parse_registry_reference(text);
    REQUIRE(parsed);
    return *parsed;
}

// The model blob (the largest) of tiny-llama:q4_0 in the demo store: its URL path and bytes.
std::pair<std::string, std::string> model_blob() {
    const nlohmann::json shown = test::run_mlens_json({"show", "tiny-llama:q4_0", "--store", kStore, "--json"});
    for (const auto& layer : shown["layers"])
        if (layer["kind"] == "model")
            return {"/v2/library/tiny-llama/blobs/" + layer["digest"].get<std::string>(),
                    file_text(kStore + "/" + layer["blob"].get<std::string>())};
    FAIL("no model layer");
    return {};
}

}  // namespace

TEST_CASE("sha256_source hashes a source in reads of 4 MiB and names the failure of a read", "[ollama][verify]") {
    for (size_t n : {size_t{0}, size_t{1}, size_t{4u << 20}, size_t{(9u << 20) + 3}}) {
        const std::vector<uint8_t> bytes = pattern(n);
        std::vector<uint64_t> progress;
        auto hash = sha256_source(*memory_source(bytes), nullptr, [&](uint64_t done) { progress.push_back(done); });
        REQUIRE(hash);
        CHECK(hash->hex == sha256_hex_digest(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
        CHECK(hash->bytes == n);
        CHECK(progress.size() == (n + (4u << 20) - 1) / (4u << 20));
    }
    const FailingSource limited(pattern(9u << 20), 5u << 20, "E_DOWNLOAD_LIMIT: the limit of 5 MiB is reached");
    auto failed = sha256_source(limited);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == ErrorCode::E_DOWNLOAD_LIMIT);
    CHECK(failed.error().offset == std::optional<uint64_t>(4u << 20));
    CHECK(failed.error().message == "cannot read 4194304 bytes for hashing: the limit of 5 MiB is reached");
    const FailingSource silent(pattern(100), 0, "");
    CHECK(sha256_source(silent).error().code == ErrorCode::E_IO);
    CHECK(sha256_source(silent).error().message == "cannot read 100 bytes for hashing: the read failed");
}

TEST_CASE("a registry's model verifies where it lives: every blob fetched whole behind the token and hashed", "[remote][ollama][verify]") {
    const test::RegistryFixture served("registry-token-3");
    auto verified = verify_registry_model(reference("tiny-llama:q4_0"));
    REQUIRE(verified);
    CHECK(verified->ok());
    CHECK(verified->mismatched() == 0);
    REQUIRE(verified->blobs.size() == 6);
    CHECK(verified->blobs[0].field == "config");
    CHECK(verified->bytes_hashed == 3086062);  // the manifest's total
    for (const RegistryBlobCheck& blob : verified->blobs) CHECK(blob.actual == blob.digest);
    CHECK(verified->manifest_digest == "sha256:" + sha256_hex_digest(served.manifest_text("library/tiny-llama/q4_0")));
}

TEST_CASE("a registry blob served with other bytes is the one mismatch, named with both digests", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    auto [path, bytes] = model_blob();
    bytes[bytes.size() / 2] ^= 0x01;
    registry.serve(path, bytes);
    auto verified = verify_registry_model(reference("tiny-llama:q4_0"));
    REQUIRE(verified);
    CHECK_FALSE(verified->ok());
    CHECK(verified->mismatched() == 1);
    for (const RegistryBlobCheck& blob : verified->blobs) {
        INFO(blob.field);
        CHECK(bool(blob.result) == (blob.field != "layers[0]"));
    }
    const Error& e = verified->blobs[1].result.error();
    CHECK(e.code == ErrorCode::E_DIGEST_MISMATCH);
    CHECK(e.message == "expected " + verified->blobs[1].digest + " actual sha256:" + sha256_hex_digest(bytes));

    // The command: the MISMATCH row, the diagnostic on stderr, exit 1.
    const test::CliRun run = test::run_mlens({"verify", "ollama://tiny-llama:q4_0"});
    CHECK(run.exit_status == 1);
    CHECK(run.out.find("model     sha256:a407bde6efaf…  3.09 MB  MISMATCH") != std::string::npos);
    CHECK(run.out.find("verdict: rejected, 1 of 6 blobs do not match their digests") != std::string::npos);
    CHECK(run.err.find("E_DIGEST_MISMATCH ollama://tiny-llama:q4_0 layers[0].digest: expected sha256:a407bde6efaf") != std::string::npos);
}

TEST_CASE("verify hashes what the registry serves now, never cached ranges, and drops a blob that failed from the cache",
          "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    auto [path, bytes] = model_blob();
    registry.set_validators(path, "\"same\"", "", "");
    // A read of the model keeps its blob's ranges in the cache.
    REQUIRE(test::run_mlens({"info", "ollama://tiny-llama:q4_0"}).exit_status == 0);
    const std::shared_ptr<RangeCache> ranges = RangeCache::open();
    REQUIRE(ranges->has_url(registry.url(path)));

    // The registry now serves other bytes under the same validator: the cache would answer with
    // the old ones, verify fetches and hashes the new.
    std::string changed = bytes;
    changed[changed.size() - 2] ^= 0x01;
    registry.serve(path, changed);
    registry.set_validators(path, "\"same\"", "", "");
    const test::CliRun run = test::run_mlens({"verify", "ollama://tiny-llama:q4_0"});
    CHECK(run.exit_status == 1);
    CHECK(run.out.find("verdict: rejected, 1 of 6 blobs do not match their digests") != std::string::npos);
    CHECK_FALSE(ranges->has_url(registry.url(path)));

    // Mended, the registry's blob verifies, from what it serves.
    registry.serve(path, bytes);
    registry.set_validators(path, "\"same\"", "", "");
    CHECK(test::run_mlens({"verify", "ollama://tiny-llama:q4_0"}).exit_status == 0);
}

TEST_CASE("check of a registry's model whose config is not JSON is rejected as the same model in a store is", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    const nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    const std::string digest = manifest["config"]["digest"];
    // As long as the config it replaces: no size to blame, only its content.
    registry.serve("/v2/library/tiny-llama/blobs/" + digest, std::string(manifest["config"]["size"].get<size_t>(), '{'));
    for (const char* command : {"check", "info"}) {
        INFO(command);
        const test::CliRun run = test::run_mlens({command, "ollama://tiny-llama:q4_0"});
        CHECK(run.exit_status == 1);
        CHECK((run.out + run.err).find("E_CONFIG_JSON") != std::string::npos);
    }
    CHECK(test::run_mlens({"show", "ollama://tiny-llama:q4_0"}).exit_status == 1);
    // show names the config's error once, whether the model was opened (a GGUF's header) or not.
    const test::CliRun shown = test::run_mlens({"show", "ollama://tiny-llama:q4_0", "--json"});
    const nlohmann::json out = nlohmann::json::parse(shown.out);
    REQUIRE(out["diagnostics"].size() == 1);
    CHECK(out["diagnostics"][0]["code"] == "E_CONFIG_JSON");
    CHECK(out["reason"].get<std::string>().find("more)") == std::string::npos);
}

TEST_CASE("verify of a manifest that names no weights is no model and fetches no blob", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    nlohmann::json texts = nlohmann::json::array();
    for (const auto& layer : manifest["layers"])
        if (layer["mediaType"] != "application/vnd.ollama.image.model") texts.push_back(layer);
    manifest["layers"] = texts;
    registry.serve("/v2/library/tiny-llama/manifests/texts", manifest.dump());
    registry.clear_log();
    auto verified = verify_registry_model(reference("tiny-llama:texts"));
    REQUIRE_FALSE(verified);
    CHECK(verified.error().code == ErrorCode::E_NO_MODEL_LAYER);
    for (const test::LoggedRequest& r : registry.log()) CHECK(r.target.find("/blobs/") == std::string::npos);
}

TEST_CASE("verify fetches a blob that many layers name once, and answers for each layer", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    nlohmann::json text_layer;
    for (const auto& layer : manifest["layers"])
        if (layer["mediaType"] != "application/vnd.ollama.image.model") text_layer = layer;
    REQUIRE(!text_layer.is_null());
    for (int i = 0; i < 200; ++i) manifest["layers"].push_back(text_layer);
    registry.serve("/v2/library/tiny-llama/manifests/repeated", manifest.dump());
    registry.clear_log();
    auto verified = verify_registry_model(reference("tiny-llama:repeated"));
    REQUIRE(verified);
    REQUIRE(verified->blobs.size() == manifest["layers"].size() + 1);
    for (const RegistryBlobCheck& b : verified->blobs) CHECK(b.verdict() == "ok");
    size_t asked = 0;
    for (const test::LoggedRequest& r : registry.log())
        if (r.target.find(text_layer["digest"].get<std::string>()) != std::string::npos) ++asked;
    CHECK(asked == 1);
}

TEST_CASE("verify counts a blob that many layers name once against the download limit, and names each layer's own field",
          "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    const size_t layers = manifest["layers"].size();
    nlohmann::json model_layer, text_layer;
    for (const auto& layer : manifest["layers"]) {
        if (layer["mediaType"] == "application/vnd.ollama.image.model")
            model_layer = layer;
        else
            text_layer = layer;
    }
    manifest["layers"].push_back(model_layer);
    manifest["layers"].push_back(text_layer);
    registry.serve("/v2/library/tiny-llama/manifests/twice", manifest.dump());

    // The text layer's blob served with other bytes: each layer naming it is a mismatch on its own field.
    const std::string digest = text_layer["digest"];
    const std::string path = "/v2/library/tiny-llama/blobs/" + digest;
    const std::string bytes = file_text(kStore + "/blobs/sha256-" + digest.substr(7));
    std::string changed = bytes;
    changed[0] ^= 0x01;
    registry.serve(path, changed);
    auto verified = verify_registry_model(reference("tiny-llama:twice"));
    REQUIRE(verified);
    CHECK(verified->mismatched() == 2);
    REQUIRE(verified->blobs.back().field == "layers[" + std::to_string(layers + 1) + "]");
    CHECK_FALSE(verified->blobs.back().result);
    for (const RegistryBlobCheck& blob : verified->blobs) {
        if (blob.result) continue;
        INFO(blob.field);
        CHECK(blob.result.error().field == blob.field + ".digest");
    }

    // Twice the model's blob is past 5 MiB; it is fetched once, which is not.
    registry.serve(path, bytes);
    REQUIRE(model_layer["size"].get<uint64_t>() > (5u << 20) / 2);
    set_download_budget(5u << 20);
    verified = verify_registry_model(reference("tiny-llama:twice"));
    set_download_budget(0);
    REQUIRE(verified);
    CHECK(verified->ok());
    CHECK(verified->bytes_hashed == 3086062);  // the blobs of tiny-llama:q4_0, each once
}

TEST_CASE("verify asks for no blob past the download limit, and for none after the registry failed one", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    const test::CliRun limited = test::run_mlens({"--max-download", "1M", "verify", "ollama://tiny-llama:q4_0"});
    CHECK(limited.exit_status == 1);
    CHECK(limited.err.find("E_DOWNLOAD_LIMIT") != std::string::npos);
    CHECK(limited.err.find("verifying reads every blob whole: 3.09 MB, past the 1.05 MB the download limit has left") != std::string::npos);
    for (const test::LoggedRequest& r : registry.log()) CHECK(r.target.find("/blobs/") == std::string::npos);

    registry.clear_log();
    registry.fail_paths_containing("/blobs/", 503);
    test::ScopedEnv retry("MLENS_HTTP_RETRY_MS", std::string("10"));
    const test::CliRun failing = test::run_mlens({"verify", "ollama://tiny-llama:q4_0", "--json"});
    CHECK(failing.exit_status == 1);
    const nlohmann::json out = nlohmann::json::parse(failing.out);
    // `store ollama://... --verify` is the same verification.
    CHECK(test::run_mlens({"store", "ollama://tiny-llama:q4_0", "--verify", "--json"}).out == failing.out);
    for (const auto& layer : out["layers"]) CHECK(layer["verified"] == "E_HTTP");
    CHECK(out["diagnostics"][1]["message"].get<std::string>().starts_with("not fetched after an earlier blob failed: "));
    std::set<std::string> blobs_asked;
    for (const test::LoggedRequest& r : registry.log())
        if (r.target.find("/blobs/") != std::string::npos) blobs_asked.insert(r.target);
    CHECK(blobs_asked.size() == 1);
}

TEST_CASE("check of a store or registry model says its blob digests were not verified, and by what", "[remote][ollama][verify]") {
    test::RegistryFixture served;
    test::ScopedEnv wide("COLUMNS", std::string("200"));
    const test::CliRun remote = test::run_mlens({"check", "ollama://tiny-llama:q4_0"});
    CHECK(remote.exit_status == 0);
    CHECK(remote.out.find("blob digests not verified: mlens verify ollama://tiny-llama:q4_0 hashes them\n") != std::string::npos);
    const test::CliRun local = test::run_mlens({"check", kStore + "/tiny-llama:q4_0"});
    CHECK(local.out.find("blob digests not verified: mlens verify " + kStore + "/tiny-llama:q4_0 hashes them\n") != std::string::npos);
    const test::CliRun file = test::run_mlens({"check", std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf"});
    CHECK(file.out.find("blob digests") == std::string::npos);
    // A registry's model is never looked for in a store.
    const test::CliRun show = test::run_mlens({"show", "ollama://tiny-llama:q4_0", "--store", kStore});
    CHECK(show.exit_status == 2);
    CHECK(show.err.find("an ollama:// model is read from its registry, not from a store: give it alone") != std::string::npos);
    CHECK(test::run_mlens({"verify", "ollama://tiny-llama:q4_0", "--store", kStore}).exit_status == 2);
}
