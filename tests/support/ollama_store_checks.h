// Assertions for the store cases (malformed-inputs.md B3): run check_store on a root within a time
// limit, then require that `evil` is rejected with a code and field while `tiny` still validates,
// or that the store is accepted with the expected warnings; and snapshots proving the check
// changed nothing on disk. Failures print every diagnostic.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlens/ollama/store_check.h"

namespace mlens::test {

constexpr const char* kEvilManifest = "manifests/registry.ollama.ai/library/evil/latest";

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
