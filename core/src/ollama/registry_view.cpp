#include "mlens/ollama/registry_view.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "mlens/io/source_read_error.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/remote_url.h"
#include "text_layer_holder.h"

namespace mlens {

namespace {

// The first `max_bytes` of a layer's blob, its size counted.
Result<TextBlob> fetch_text_blob(const RegistryManifest& registry, const ManifestLayer& layer, uint64_t max_bytes, JobContext* job) {
    auto source = open_remote(registry.blob_url(*layer.blob), registry.blob_options, job);
    if (!source) return source.error();
    TextBlob blob;
    blob.size = (*source)->size();
    blob.text.resize(static_cast<size_t>(std::min(blob.size, max_bytes)));
    if (!blob.text.empty() && !(*source)->read(0, blob.text.size(), blob.text.data()))
        return source_read_error(**source, layer.field, std::nullopt, "cannot read " + std::to_string(blob.text.size()) + " bytes");
    return blob;
}

}  // namespace

ManifestView view_registry_model(const RegistryReference& reference, const RegistryManifest& registry, JobContext* job, uint64_t text_bytes,
                                 uint64_t text_budget) {
    ManifestView view;
    view.stored.found = true;
    view.stored.ref.name = reference.name;
    view.stored.ref.path = display_url(registry.manifest_url(reference.name.tag));
    view.stored.ref.file_size = registry.manifest_bytes;
    view.stored.digest = registry.digest;
    view.stored.manifest = registry.manifest;
    const Manifest& m = view.stored.manifest;
    TransferBatch blobs("blob");
    auto fetch = [&](const ManifestLayer& layer, uint64_t max_bytes) -> Result<TextBlob> {
        if (const std::optional<Error> skipped = blobs.skipped()) return *skipped;
        auto text = fetch_text_blob(registry, layer, max_bytes, job);
        if (!text) blobs.note(text.error());
        return text;
    };
    // A blob of another size than its layer's is an error of that layer, as a store's blob file is
    // (the text is still shown): the registry answered, but not with what the manifest names.
    auto size_error = [](const ManifestLayer& layer, uint64_t size) -> std::optional<Error> {
        if (!layer.has_size || size == layer.size) return std::nullopt;
        return Error{ErrorCode::E_SIZE_MISMATCH, layer.field + ".size", std::nullopt,
                     "the layer says " + std::to_string(layer.size) + " bytes; the registry's blob has " + std::to_string(size)};
    };
    // Each distinct blob is fetched once and held once, however many layers name it; what the
    // view holds of them all stays within text_budget.
    TextLayerHolder texts(text_bytes, text_budget);
    auto text_layer = [&](const ManifestLayer& layer) {
        LayerView lv{layer, std::nullopt, nullptr, std::nullopt};
        if (!layer.blob || !layer_is_text(layer.kind)) return lv;
        auto text = texts.text_of(layer, layer.has_size ? layer.size : text_bytes, [&](uint64_t max_bytes) { return fetch(layer, max_bytes); });
        if (text) {
            lv.text_error = size_error(layer, (*text)->size);
            lv.text = std::move(*text);
        } else {
            lv.text_error = text.error();
        }
        return lv;
    };
    if (m.has_config) view.config_layer = LayerView{m.config, std::nullopt, nullptr, std::nullopt};
    for (const ManifestLayer& layer : m.layers) view.layers.push_back(text_layer(layer));
    if (!m.has_config) {
        view.config_error = Error{ErrorCode::E_CONFIG_MISSING, "config", std::nullopt, "the manifest has no config"};
    } else if (!m.config.blob) {
        view.config_error = Error{ErrorCode::E_BAD_DIGEST, "config.digest", m.config.digest_at, "invalid config digest"};
    } else if (m.config.has_size && m.config.size > kMaxConfigBytes) {
        view.config_error =
            Error{ErrorCode::E_CONFIG_TOO_LARGE, "config", std::nullopt,
                  std::to_string(m.config.size) + " bytes exceeds limit max_config_bytes=" + std::to_string(kMaxConfigBytes)};
    } else if (auto text = fetch(m.config, kMaxConfigBytes); !text) {
        view.config_error = text.error();
    } else if (std::optional<Error> mismatch = size_error(m.config, text->size)) {
        view.config_error = std::move(mismatch);
    } else if (text->truncated()) {
        view.config_error = Error{ErrorCode::E_CONFIG_TOO_LARGE, "config", std::nullopt,
                                  std::to_string(text->size) + " bytes exceeds limit max_config_bytes=" + std::to_string(kMaxConfigBytes)};
    } else if (auto config = parse_model_config(text->text)) {
        view.config = std::move(*config);
    } else {
        view.config_error = config.error();
        view.config_error->field = "config " + view.config_error->field;
    }
    view.format = model_format(m, view.config ? &*view.config : nullptr);
    return view;
}

std::vector<Diagnostic> view_findings(const ManifestView& view) {
    std::vector<Diagnostic> findings;
    auto add = [&](const Error& e, const std::string& field) {
        findings.push_back({Severity::error, "store", e.code, field, std::nullopt, e.message});
    };
    if (view.config_error) add(*view.config_error, view.config_error->field.empty() ? "config" : view.config_error->field);
    for (const LayerView& lv : view.layers)
        if (lv.text_error) add(*lv.text_error, lv.layer.field);
    return findings;
}

std::optional<Error> view_transport_failure(const ManifestView& view) {
    if (view.config_error && is_transport_failure(*view.config_error)) return view.config_error;
    for (const LayerView& lv : view.layers)
        if (lv.text_error && is_transport_failure(*lv.text_error)) return lv.text_error;
    return std::nullopt;
}

}  // namespace mlens
