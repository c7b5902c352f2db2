#include "mlens/ollama/manifest_view.h"

#include "text_layer_holder.h"

namespace mlens {

Result<ModelConfig> read_model_config(const Store& store, const Manifest& manifest) {
    if (!manifest.has_config) return Error{ErrorCode::E_CONFIG_MISSING, "config", std::nullopt, "the manifest has no config"};
    if (!manifest.config.blob) return Error{ErrorCode::E_BAD_DIGEST, "config.digest", manifest.config.digest_at, "invalid config digest"};
    BlobLookup blob = store.find_blob(*manifest.config.blob);
    if (!blob.found()) {
        Error e = *blob.error;
        e.field = "config";
        return e;
    }
    if (blob.size > kMaxConfigBytes)
        return Error{
            ErrorCode::E_CONFIG_TOO_LARGE, "config", std::nullopt,
            blob.name + ": " + std::to_string(blob.size) + " bytes exceeds limit max_config_bytes=" + std::to_string(kMaxConfigBytes)};
    auto text = read_text_blob(store, blob, kMaxConfigBytes);
    if (!text) return text.error();
    auto config = parse_model_config(text->text);
    if (config) return config;
    Error e = config.error();
    e.field = blob.name + " " + e.field;
    return e;
}

std::string model_format(const Manifest& manifest, const ModelConfig* config) {
    if (config) return config->format();
    for (const ManifestLayer& l : manifest.layers)
        if (l.kind == LayerKind::tensor) return "safetensors";
    for (const ManifestLayer& l : manifest.layers)
        if (l.kind == LayerKind::model) return "gguf";
    return "";
}

Result<ManifestView> view_manifest(const Store& store, const ModelName& name, uint64_t text_bytes, uint64_t text_budget) {
    ManifestView view;
    view.stored = store.read_manifest(name);
    if (!view.stored.found) {
        const auto& d = view.stored.manifest.diagnostics;
        Error e{ErrorCode::E_NOT_FOUND, "", std::nullopt, "no manifest for " + name.display()};
        if (!d.empty()) e = Error{d[0].code, d[0].field, d[0].offset, d[0].message};
        return e;
    }
    const Manifest& m = view.stored.manifest;
    TextLayerHolder texts(text_bytes, text_budget);
    auto resolve = [&](const ManifestLayer& layer) {
        LayerView lv{layer, std::nullopt, nullptr, std::nullopt};
        if (!layer.blob || layer.kind == LayerKind::unknown) return lv;
        lv.blob = store.find_blob(*layer.blob);
        if (layer_is_text(layer.kind) && lv.blob->found()) {
            const BlobLookup& blob = *lv.blob;
            auto text = texts.text_of(layer, blob.size, [&](uint64_t max_bytes) { return read_text_blob(store, blob, max_bytes); });
            if (text)
                lv.text = std::move(*text);
            else
                lv.text_error = text.error();
        }
        return lv;
    };
    if (m.has_config) view.config_layer = resolve(m.config);
    for (const ManifestLayer& l : m.layers) view.layers.push_back(resolve(l));
    auto config = read_model_config(store, m);
    if (config)
        view.config = std::move(*config);
    else
        view.config_error = config.error();
    view.format = model_format(m, view.config ? &*view.config : nullptr);
    return view;
}

}  // namespace mlens
