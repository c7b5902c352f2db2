#include "mlens/open/store_input.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

// The store a user may mean by naming a folder above it (the rule in the header).
std::optional<std::string> store_below(const std::string& path) {
    const std::filesystem::path parent(path);
    if (is_store_root((parent / ".ollama" / "models").string())) return (parent / ".ollama" / "models").string();
    std::error_code ec;
    std::vector<std::string> children;
    for (auto it = std::filesystem::directory_iterator(parent, ec);
         !ec && it != std::filesystem::directory_iterator() && children.size() < 1000; it.increment(ec))
        children.push_back(it->path().string());
    std::sort(children.begin(), children.end());
    for (const std::string& child : children)
        if (is_store_root(child)) return child;
    return std::nullopt;
}

}  // namespace

StoreInput open_store_input(const std::string& path) {
    StoreInput input;
    if (!is_store_root(path))
        if (auto below = store_below(path)) {
            input.below = *below;
            input.problem = Error{ErrorCode::E_NOT_DIRECTORY, "", std::nullopt,
                                  escape_for_display(path) + " is not an Ollama store (it has no manifests/ folder); the store below it is " +
                                      escape_for_display(*below)};
            return input;
        }
    std::error_code ec;
    const std::filesystem::path root(path);
    if (std::filesystem::is_directory(root, ec) && !std::filesystem::exists(root / "manifests", ec) &&
        !std::filesystem::exists(root / "blobs", ec)) {
        input.problem = Error{ErrorCode::E_NOT_DIRECTORY, "", std::nullopt,
                              escape_for_display(path) + " is not an Ollama store (it has neither a manifests/ nor a blobs/ folder)"};
        return input;
    }
    Result<Store> store = Store::open(path);
    if (store)
        input.store = std::move(*store);
    else
        input.problem = store.error();
    return input;
}

}  // namespace mlens
