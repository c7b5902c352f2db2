// Assertions for the store cases (malformed-inputs.md B3): run check_store on a root within a time
// limit, then require that `evil` is rejected with a code and field while `tiny` still validates,
// or that the store is accepted with the expected warnings; and snapshots proving the check
// changed nothing on disk. Failures print every diagnostic. StoreCase is the store they start from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlens/ollama/store_check.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

namespace mlens::test {

const std::string kEvilRel = "registry.ollama.ai/library/evil/latest";
constexpr const char* kEvilManifest = "manifests/registry.ollama.ai/library/evil/latest";

// A store in a fresh temporary folder holding tiny:latest; evil(...) adds the model under test.
struct StoreCase {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    StoreCase() { b.add_tiny(); }
    std::string root() const { return dir.path(); }
    // Writes evil's manifest: these layers and tiny's config unless another is given.
    std::string evil(const std::vector<LayerSpec>& layers, std::optional<LayerSpec> config = std::nullopt) {
        std::string text = manifest_json(config.value_or(b.tiny_config_layer()), layers);
        b.write_manifest(kEvilRel, text);
        return text;
    }
};

// check_store(root) with default options; fails the test if it takes longer than max_seconds.
StoreCheckReport check_root(const std::string& root, double max_seconds = 10.0);

std::string describe(const StoreCheckReport& r);
const ModelCheck* find_model(const StoreCheckReport& r, const std::string& display_name);

// An error with this code whose field is `field` exactly (e.g. kEvilManifest + " layers[0].digest"),
// and the offset when given. evil:latest has errors; tiny:latest has none. Returns a copy of it.
Diagnostic require_evil_rejected(const StoreCheckReport& r, const std::string& code, const std::string& field,
                                 std::optional<uint64_t> offset = std::nullopt);
// No error at all; every code in `warnings` appears among the warnings.
void require_store_accepted(const StoreCheckReport& r, const std::vector<std::string>& warnings = {});

// Every entry below root (not following symlinks): path, type, size, mode, mtime, link target.
std::vector<std::string> tree_snapshot(const std::string& root);

}  // namespace mlens::test
