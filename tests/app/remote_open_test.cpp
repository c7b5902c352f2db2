// The app opens remote references like files: resolving one fetches its first bytes, so it runs in
// the open job, never on the thread that draws; the document is named by its URL as shown.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "loopback_server.h"
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
