#include "mlens/open/target.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/truncation.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/ollama/registry_view.h"
#include "mlens/ollama/store_model.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/open/identify.h"
#include "mlens/quant/imatrix.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

namespace fs = std::filesystem;

bool lexists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

Target failed(Target t, TargetKind kind, Error problem) {
    t.kind = kind;
    t.problem = std::move(problem);
    return t;
}

// The store model a manifest file <root>/manifests/<host>/<namespace>/<model>/<tag> names.
std::optional<std::pair<Store, ModelName>> manifest_model(const std::string& path) {
    fs::path p = fs::path(path).lexically_normal();
    fs::path model_dir = p.parent_path(), ns_dir = model_dir.parent_path(), host_dir = ns_dir.parent_path();
    fs::path manifests = host_dir.parent_path();
    if (manifests.filename() != "manifests") return std::nullopt;
    ModelName name;
    name.host = host_dir.filename().string();
    name.name_space = ns_dir.filename().string();
    name.model = model_dir.filename().string();
    name.tag = p.filename().string();
    std::string root = manifests.parent_path().string();
    if (!name.valid() || !is_store_root(root)) return std::nullopt;
    auto store = Store::open(root);
    if (!store) return std::nullopt;
    return std::pair{std::move(*store), std::move(name)};
}

Target resolve_directory(Target t) {
    if (is_store_root(t.path)) {
        auto store = Store::open(t.path);
        if (!store) return failed(std::move(t), TargetKind::not_a_model, store.error());
        t.kind = TargetKind::store_root;
        t.store = std::move(*store);
        return t;
    }
    std::error_code ec;
    bool blobs = false;
    fs::directory_iterator it(t.path, ec);
    if (ec)
        return failed(std::move(t), TargetKind::not_a_model,
                      {ErrorCode::E_IO, "path", std::nullopt, "cannot list the folder: " + ec.message()});
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec)
            return failed(std::move(t), TargetKind::not_a_model,
                          {ErrorCode::E_IO, "path", std::nullopt, "cannot list the folder: " + ec.message()});
        const std::string name = it->path().filename().string();
        std::error_code type_ec;
        if (name == "blobs" && it->is_directory(type_ec)) blobs = true;
        if ((name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")) && it->is_regular_file(type_ec)) {
            t.kind = TargetKind::safetensors_folder;
            return t;
        }
    }
    return failed(std::move(t), TargetKind::not_a_model,
                  {ErrorCode::E_NOT_A_MODEL, "", std::nullopt,
                   blobs ? "a folder with blobs/ but no manifests/: not an Ollama store (its models are named in manifests/), "
                           "and no safetensors weights"
                         : "a folder without safetensors weights (*.safetensors or *.safetensors.index.json) and without "
                           "manifests/ (not an Ollama store)"});
}

Target resolve_file(Target t) {
    if (auto found = manifest_model(t.path)) {
        t.kind = TargetKind::store_model;
        t.store = std::move(found->first);
        t.name = std::move(found->second);
        return t;
    }
    auto source = open_file(t.path);
    if (!source) return failed(std::move(t), TargetKind::not_a_model, source.error());
    auto format = identify_file(**source);
    const bool imatrix = (format || format.error().code == ErrorCode::E_NOT_A_MODEL) && looks_like_imatrix(**source);
    t.source = std::move(*source);
    if (!format && !imatrix) return failed(std::move(t), TargetKind::not_a_model, format.error());
    t.kind = imatrix ? TargetKind::imatrix : TargetKind::model_file;
    t.format = format ? *format : Format::unknown;
    return t;
}

// The store at `root` when it is one and has the manifest of `name`.
std::optional<Store> store_with(const std::string& root, const ModelName& name) {
    if (!is_store_root(root) || !lexists(root + "/" + name.manifest_path())) return std::nullopt;
    auto store = Store::open(root);
    return store ? std::optional<Store>(std::move(*store)) : std::nullopt;
}

// The tags the store at `root` has of `name`'s model (sorted; none when it has no such model).
std::vector<std::string> tags_in(const std::string& root, const ModelName& name) {
    const std::string manifest = name.manifest_path();
    std::vector<std::string> tags;
    std::error_code ec;
    fs::directory_iterator it(root + "/" + manifest.substr(0, manifest.rfind('/')), ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ModelName tagged = name;
        tagged.tag = it->path().filename().string();
        std::error_code type_ec;
        if (tagged.valid() && it->is_regular_file(type_ec)) tags.push_back(tagged.tag);
    }
    std::sort(tags.begin(), tags.end());
    return tags;
}

// "STORE has kitten but not kitten:latest; its tags: 1b, 4b" when the store has other tags of the
// model; "" otherwise.
std::string other_tags_note(const std::string& root, const ModelName& name) {
    const std::vector<std::string> tags = tags_in(root, name);
    if (tags.empty()) return {};
    std::string list;
    for (const std::string& tag : tags) list += (list.empty() ? "" : ", ") + escape_for_display(tag);
    return escape_for_display(root) + " has " + escape_for_display(name.model) + " but not " + escape_for_display(name.display()) +
        "; its tags: " + list;
}

Target resolve_reference(Target t) {
    const std::string& text = t.text;
    for (size_t slash = text.rfind('/'); slash != std::string::npos && slash > 0; slash = text.rfind('/', slash - 1)) {
        auto name = parse_model_reference(std::string_view(text).substr(slash + 1));
        if (!name) continue;
        const std::string root = text.substr(0, slash);
        if (auto store = store_with(root, *name)) {
            t.kind = TargetKind::store_model;
            t.name = std::move(*name);
            t.path = store->path_of(t.name.manifest_path());
            t.store = std::move(store);
            return t;
        }
        if (!is_store_root(root)) continue;
        if (std::string note = other_tags_note(root, *name); !note.empty()) {
            if (auto store = Store::open(root)) t.store = std::move(*store);
            return failed(std::move(t), TargetKind::missing, {ErrorCode::E_NOT_FOUND, "", std::nullopt, note});
        }
    }
    auto name = parse_model_reference(text);
    std::string looked;
    if (name) {
        for (const StoreLocation& location : find_stores()) {
            looked += (looked.empty() ? "" : ", ") + escape_for_display(location.path);
            if (auto store = store_with(location.path, *name)) {
                t.kind = TargetKind::store_model;
                t.name = std::move(*name);
                t.path = store->path_of(t.name.manifest_path());
                t.store = std::move(store);
                return t;
            }
        }
        for (const StoreLocation& location : find_stores())
            if (std::string note = other_tags_note(location.path, *name); !note.empty()) {
                if (auto store = Store::open(location.path)) t.store = std::move(*store);
                return failed(std::move(t), TargetKind::missing, {ErrorCode::E_NOT_FOUND, "", std::nullopt, note});
            }
    }
    std::string message = "no such file or directory";
    if (name)
        message +=
            ", and no Ollama model " + escape_for_display(name->display()) + " in " + (looked.empty() ? "any store (none found)" : looked);
    return failed(std::move(t), TargetKind::missing, {ErrorCode::E_NOT_FOUND, "", std::nullopt, message});
}

// An http(s):// URL or hf:// reference: the remote file, opened (its first bytes fetched) and
// identified like a local one.
Target resolve_remote(Target t) {
    std::string url = t.text;
    if (t.text.rfind("hf://", 0) == 0) {
        auto hub = resolve_hub_reference(t.text);
        if (!hub) return failed(std::move(t), TargetKind::missing, hub.error());
        url = hub->url;
    } else if (t.text.rfind("ollama://", 0) == 0) {
        auto reference = parse_registry_reference(std::string_view(t.text).substr(9));
        if (!reference) return failed(std::move(t), TargetKind::missing, reference.error());
        t.kind = TargetKind::registry_model;
        t.registry = reference->base;
        t.name = reference->name;
        return t;
    }
    if (display_url(url).ends_with(".safetensors.index.json")) {
        // Opened whole by open_target: the index, then its shards beside it.
        t.kind = TargetKind::safetensors_folder;
        t.path = url;
        return t;
    }
    auto source = open_source(url);
    if (!source) return failed(std::move(t), source.error().code == ErrorCode::E_NOT_FOUND ? TargetKind::missing : TargetKind::not_a_model, source.error());
    t.path = (*source)->path();
    auto format = identify_file(**source);
    t.source = std::move(*source);
    if (!format) return failed(std::move(t), TargetKind::not_a_model, format.error());
    t.kind = TargetKind::model_file;
    t.format = *format;
    return t;
}

}  // namespace

const char* target_kind_name(const Target& target) {
    if (target.kind == TargetKind::model_file) return target.format == Format::safetensors ? "safetensors file" : "GGUF file";
    static constexpr NameRow<TargetKind> kNames[] = {
        {TargetKind::safetensors_folder, "safetensors folder"}, {TargetKind::store_root, "Ollama store"},
        {TargetKind::store_model, "Ollama model"}, {TargetKind::imatrix, "imatrix file"}, {TargetKind::missing, "missing"},
        {TargetKind::not_a_model, "not a model"}, {TargetKind::registry_model, "Ollama registry model"}};
    return name_of(kNames, target.kind, "not a model");
}

Target resolve(const std::string& text) {
    Target t;
    t.text = text;
    t.path = text;
    struct stat st {};
    if (::stat(text.c_str(), &st) != 0) {
        if (lexists(text)) return resolve_file(std::move(t));
        return is_remote_reference(text) ? resolve_remote(std::move(t)) : resolve_reference(std::move(t));
    }
    if (S_ISDIR(st.st_mode)) return resolve_directory(std::move(t));
    return resolve_file(std::move(t));
}

bool is_transport_code(ErrorCode code) {
    return code == ErrorCode::E_DOWNLOAD_LIMIT || code == ErrorCode::E_NETWORK || code == ErrorCode::E_HTTP ||
        code == ErrorCode::E_REMOTE_CHANGED || code == ErrorCode::E_NO_RANGE;
}

namespace {

// A read the transport refused (a download limit, the network, a file that changed on its
// server) says nothing about the file: the open fails with it instead of a verdict. Tensor data
// past the end of a file is summarized.
Result<Model> finish_open(Result<Model> model) {
    if (!model) return model;
    for (const Diagnostic& d : model->diagnostics)
        if (d.severity == Severity::error && is_transport_code(d.code)) return Error{d.code, d.field, d.offset, d.message};
    mark_missing_data(*model);
    return model;
}

}  // namespace

Result<Model> open_target(const Target& target, JobContext* job, SplitParts parts) {
    Result<Model> model = Error{};
    switch (target.kind) {
        case TargetKind::model_file:
            if (target.format == Format::safetensors) {
                // An Ollama tensor blob opened by itself gets the logical view a store model gets.
                Model file = read_safetensors(target.source, {}, job);
                describe_tensor_blobs(file);
                model = std::move(file);
            } else {
                model = parts == SplitParts::joined ? read_gguf_with_siblings(target.source, {}, job) : read_gguf(target.source, {}, job);
            }
            break;
        case TargetKind::imatrix:
            if (target.format != Format::gguf)
                return Error{ErrorCode::E_NOT_A_MODEL, "", std::nullopt,
                             "a legacy importance matrix (llama-imatrix .dat), not a model: `mlens imatrix PATH` reads it"};
            model = read_gguf(target.source, {}, job);
            break;
        case TargetKind::safetensors_folder:
            model = is_http_url(target.path) ? open_safetensors_index(target.path, {}, job) : open_safetensors_folder(target.path, {}, job);
            break;
        case TargetKind::store_model:
            model = open_store_model(*target.store, target.name, job);
            break;
        case TargetKind::registry_model: {
            const RegistryReference reference{target.registry, target.name};
            auto registry = fetch_registry_manifest(reference, job);
            if (!registry) return registry.error();
            return open_fetched_registry_model(reference, *registry, view_registry_model(reference, *registry, job), job);
        }
        case TargetKind::store_root:
            return Error{ErrorCode::E_STORE_ROOT, "", std::nullopt,
                         "an Ollama store, not one model: `mlens store PATH` lists its models, PATH/MODEL:TAG names one"};
        case TargetKind::missing:
        case TargetKind::not_a_model:
            return target.problem;
    }
    return finish_open(std::move(model));
}

Result<Model> open_fetched_registry_model(const RegistryReference& reference, const RegistryManifest& registry, const ManifestView& view,
                                          JobContext* job) {
    if (std::optional<Error> failed = view_transport_failure(view)) return *failed;
    auto model = open_registry_model(reference, registry, job);
    // The view was read before the blobs: its findings come first, as `show` lists them.
    if (model) {
        const std::vector<Diagnostic> findings = view_findings(view);
        model->diagnostics.insert(model->diagnostics.begin(), findings.begin(), findings.end());
    }
    return finish_open(std::move(model));
}

Result<Model> open_model(const std::string& text, JobContext* job) { return open_target(resolve(text), job); }

}  // namespace mlens
