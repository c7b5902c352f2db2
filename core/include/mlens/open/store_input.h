// The Ollama store a store command is pointed at by path (`mlens store PATH [MODEL]`,
// `show MODEL --store PATH`, `verify MODEL --store PATH`, the default stores), opened in core as
// every input is (target.h resolves the one-argument form).
//
// Contract of open_store_input(path):
//  - A folder that is not a store root (is_store_root) but holds one is not opened: `below` names
//    that store (its .ollama/models, else the first child folder by name, among its first 1000
//    entries, that is a store root), and `problem` is E_NOT_DIRECTORY saying "<path> is not an
//    Ollama store (it has no manifests/ folder); the store below it is <store>", so the command
//    points to it. Only those entries are looked at, so a huge folder costs nothing.
//  - A folder with neither manifests/ nor blobs/ (any folder that is no store: /etc, Downloads)
//    is not opened either: `problem` is E_NOT_DIRECTORY "<path> is not an Ollama store (it has
//    neither a manifests/ nor a blobs/ folder)", never an empty listing.
//  - Anything else is opened with Store::open: `store`, or its error in `problem`.
#pragma once

#include <optional>
#include <string>

#include "mlens/ollama/store.h"

namespace mlens {

struct StoreInput {
    std::optional<Store> store;
    std::string below;  // the store below a folder that is not one
    Error problem;  // why there is no store
};

StoreInput open_store_input(const std::string& path);

}  // namespace mlens
