// The app opens remote references like files: resolving one fetches its first bytes, so it runs in
// the open job, never on the thread that draws; the document is named by its URL as shown. A
// registry's model verifies its blobs in the Health panel.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "headless.h"
#include "loopback_server.h"
#include "panels/health_panel.h"
#include "panels/registry_panel.h"
#include "registry_fixture.h"
#include "test_paths.h"
#include "workspace_harness.h"

using namespace mlens;

TEST_CASE("a remote reference opens as a document in its open job, named by its URL without query", "[gui][remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf"));
    test::WorkspaceHarness h;
    Document& doc = h.workspace.open(server.url("/q4.gguf?token=s3cr3t"));
    CHECK(doc.path == server.url("/q4.gguf"));
    CHECK(doc.title == "q4.gguf");
    h.jobs.wait_all();
    h.workspace.poll();
    REQUIRE(doc.ready());
    CHECK(doc.model()->tensors.size() == 21);
    CHECK(h.settings.recent_files == std::vector<std::string>{server.url("/q4.gguf")});
    CHECK(server.log().size() == 2);
}

TEST_CASE("a remote reference that fails leaves a failed document with the server's reason", "[gui][remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    test::WorkspaceHarness h;
    Document& doc = h.workspace.open(server.url("/missing.gguf"));
    h.jobs.wait_all();
    h.workspace.poll();
    CHECK(doc.state == DocumentState::failed);
    CHECK(doc.error_code == ErrorCode::E_NOT_FOUND);
    CHECK(doc.error == server.url("/missing.gguf") + ": HTTP 404 Not Found");
}

namespace {

// The demo store served as a registry, its model blob of tiny-llama:q4_0 with one byte changed
// when `tampered`; the workspace opens ollama://tiny-llama:q4_0 from it.
struct RegistryWorkspace : test::RegistryFixture {
    test::WorkspaceHarness h;

    explicit RegistryWorkspace(bool tampered) {
        if (!tampered) return;
        const std::string digest = "a407bde6efaf23aedfa5099f27b86ef35d364fe284dfb85c7d1826e2a3d14180";
        std::vector<uint8_t> bytes = test::read_whole_file(store + "/blobs/sha256-" + digest);
        bytes[bytes.size() / 2] ^= 0x01;
        registry.serve("/v2/library/tiny-llama/blobs/sha256:" + digest, std::string(bytes.begin(), bytes.end()));
    }
};

// Draws the Health panel until its blob verification has ended.
void verify_blobs(RegistryWorkspace& f, Document& doc, HealthPanel& panel) {
    PanelContext ctx = f.h.context_of(doc);
    REQUIRE(panel.accept_link(kVerifyBlobsLink, doc));
    for (int i = 0; i < 4; ++i) {
        f.h.imgui.window_frame("health", 1366, 768, [&] { panel.draw(ctx); });
        f.h.jobs.wait_all();
    }
    CHECK_FALSE(panel.blobs().running());
}

}  // namespace

TEST_CASE("the Health panel of a registry's model verifies its blobs on request, as mlens verify does", "[gui][remote][verify]") {
    RegistryWorkspace f(false);
    Document& doc = f.h.open_ready("ollama://tiny-llama:q4_0");
    HealthPanel panel;
    PanelContext ctx = f.h.context_of(doc);
    f.h.imgui.window_frame("health", 1366, 768, [&] { panel.draw(ctx); });
    f.h.jobs.wait_all();
    // Nothing is hashed at open: no blob is fetched whole until asked.
    CHECK(panel.blobs().result() == nullptr);
    verify_blobs(f, doc, panel);
    REQUIRE(panel.blobs().result() != nullptr);
    CHECK(panel.blobs().result()->verdict_text() == "ok, 6 blobs match their digests (3.09 MB hashed)");
    CHECK(panel.badge(doc).empty());
}

TEST_CASE("a registry blob served with other bytes is the Health panel's mismatch and counts in its badge", "[gui][remote][verify]") {
    RegistryWorkspace f(true);
    Document& doc = f.h.open_ready("ollama://tiny-llama:q4_0");
    HealthPanel panel;
    verify_blobs(f, doc, panel);
    REQUIRE(panel.blobs().result() != nullptr);
    CHECK(panel.blobs().result()->verdict_text() == "rejected, 1 of 6 blobs do not match their digests");
    CHECK(panel.blobs().result()->blobs[1].verdict() == "MISMATCH");
    CHECK(panel.badge(doc) == "1");
}

TEST_CASE("only a registry's model takes the link that verifies blobs", "[gui][remote][verify]") {
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf");
    HealthPanel panel;
    CHECK_FALSE(panel.accept_link(kVerifyBlobsLink, doc));
    CHECK_FALSE(RegistryBlobsView::shows(doc));
}

TEST_CASE("the Ollama panel of a registry's model shows its manifest, config and text layers, fetched with the open", "[gui][remote]") {
    RegistryWorkspace f(false);
    Document& doc = f.h.open_ready("ollama://tiny-llama:q4_0");
    REQUIRE(doc.registry() != nullptr);
    const ManifestView& v = *doc.registry();
    CHECK(v.stored.ref.path == f.registry.base_url() + "/v2/library/tiny-llama/manifests/q4_0");
    CHECK(v.format == "gguf");
    REQUIRE(v.config.has_value());
    CHECK(v.config->file_type == "Q4_0");
    REQUIRE(v.layers.size() == 5);
    REQUIRE(v.layers[1].text);
    CHECK(v.layers[1].text->text.starts_with("{{- if .System }}"));
    CHECK(v.layers[2].text->text == "You are a tiny demo model.");
    // The manifest was asked for once, for the model and the view alike.
    size_t manifests = 0;
    for (const test::LoggedRequest& r : f.registry.log()) manifests += r.target.find("/manifests/") != std::string::npos;
    CHECK(manifests == 1);

    // Drawn, the panel asks the registry for nothing, even once it has stopped answering.
    f.registry.clear_log();
    f.registry.fail_paths_containing("/v2/", 404);
    RegistryPanel panel;
    PanelContext ctx = f.h.context_of(doc);
    for (int i = 0; i < 3; ++i) {
        f.h.imgui.window_frame("ollama", 1366, 768, [&] { panel.draw(ctx); });
        f.h.jobs.wait_all();
    }
    CHECK(f.registry.log().empty());
}

TEST_CASE("a local model has no registry view and no Ollama panel", "[gui][remote]") {
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf");
    CHECK(doc.registry() == nullptr);
}
