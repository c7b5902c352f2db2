#include "mlens/formats/open_model.h"

#include <sys/stat.h>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_model.h"
#include "mlens/ollama/tensor_blobs.h"

namespace mlens {

namespace {

bool path_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

struct ReferencedModel {
    Store store;
    ModelName name;
};

// The model `name` in the store at `root`, when that store has its manifest.
std::optional<ReferencedModel> find_in_store(const std::string& root, const ModelName& name) {
    auto store = Store::open(root);
    if (store && store->read_manifest(name).present()) return ReferencedModel{std::move(*store), name};
    return std::nullopt;
}

// The model `reference` names: "STORE/reference" first (a store directory, a '/', then a
// reference; the longest existing directory first), then the reference in the default stores.
std::optional<ReferencedModel> find_reference(const std::string& reference) {
    for (size_t slash = reference.rfind('/'); slash != std::string::npos && slash > 0;
         slash = reference.rfind('/', slash - 1)) {
        // Store::open refuses a prefix that is not a directory.
        auto name = parse_model_reference(std::string_view(reference).substr(slash + 1));
        if (!name) continue;
        if (auto found = find_in_store(reference.substr(0, slash), *name)) return found;
    }
    auto name = parse_model_reference(reference);
    if (!name) return std::nullopt;
    for (const StoreLocation& location : find_stores())
        if (auto found = find_in_store(location.path, *name)) return found;
    return std::nullopt;
}

}  // namespace

std::optional<std::string> find_reference_manifest(const std::string& reference) {
    if (path_exists(reference)) return std::nullopt;
    auto found = find_reference(reference);
    if (!found) return std::nullopt;
    return found->store.root() + "/" + found->name.manifest_path();
}

Result<Model> open_model(const std::string& path, JobContext* job) {
    struct stat st {};
    bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return open_safetensors_folder(path, {}, job);
    if (!exists)
        if (auto found = find_reference(path)) return open_store_model(found->store, found->name, job);
    auto source = open_file(path);
    if (!source) return source.error();
    uint8_t magic[4];
    bool gguf_magic = (*source)->read(0, 4, magic) && magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U' && magic[3] == 'F';
    if (!gguf_magic && looks_like_safetensors(**source)) {
        // An Ollama tensor blob opened by itself gets the logical view a store model gets.
        Model model = read_safetensors(*source, {}, job);
        describe_tensor_blobs(model);
        return model;
    }
    return open_gguf(path, GgufLimits{}, job);
}

}  // namespace mlens
