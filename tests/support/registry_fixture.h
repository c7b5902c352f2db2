// The demo store (MLENS_DEMO_DIR/ollama-store) served as an Ollama registry on loopback
// (serve_store_as_registry), with a range cache of its own (PrivateHttpCache) and OLLAMA_REGISTRY
// naming it while the fixture lives: ollama://MODEL:TAG of a demo model, in the test and in the
// mlens processes it starts, is read from it.
#pragma once

#include <string>
#include <vector>

#include "loopback_server.h"
#include "test_paths.h"

namespace mlens::test {

struct RegistryFixture {
    // A registry that wants `token` (require_bearer); none when it is empty.
    explicit RegistryFixture(const std::string& token = "");

    // The bytes of the demo store's manifest of `model` ("library/tiny-llama/q4_0").
    std::string manifest_text(const std::string& model) const;

    PrivateHttpCache cache;
    LoopbackServer registry;
    ScopedEnv address{"OLLAMA_REGISTRY", registry.base_url()};
    std::string store;  // the demo store's root
    std::vector<std::string> models;  // the models served, as "NAMESPACE/MODEL:TAG"
};

}  // namespace mlens::test
