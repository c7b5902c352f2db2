#include "registry_fixture.h"

#include "build_paths.h"

namespace mlens::test {

RegistryFixture::RegistryFixture(const std::string& token) : store(std::string(MLENS_DEMO_DIR) + "/ollama-store") {
    if (!token.empty()) registry.require_bearer(token);
    models = serve_store_as_registry(registry, store);
}

std::string RegistryFixture::manifest_text(const std::string& model) const {
    const std::vector<uint8_t> bytes = read_whole_file(store + "/manifests/registry.ollama.ai/" + model);
    return std::string(bytes.begin(), bytes.end());
}

}  // namespace mlens::test
