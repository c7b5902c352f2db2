// A store model as one Model: the GGUF blob, or every tensor blob plus the JSON layers.
#include "mlens/ollama/store_model.h"

#include <algorithm>
#include <set>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/formats/strict_json.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_lookup.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/ollama/text_blob.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

// Finds "bits" under quantization / quantization_config, at the top or under text_config.
class BitsHint final : public JsonHandler {
public:
    std::optional<uint32_t> bits;

    bool begin_object(const JsonToken&) override { return push(); }
    bool end_object(const JsonToken&) override { return pop(); }
    bool begin_array(const JsonToken&) override { return push(); }
    bool end_array(const JsonToken&) override { return pop(); }
    bool key(std::string& name, const JsonToken&) override {
        m_path.back() = name;
        return true;
    }
    bool string_value(std::string&, const JsonToken&) override { return true; }
    bool unsigned_value(uint64_t v, const JsonToken&) override {
        if (!bits && m_path.back() == "bits" && quant_section() && v <= 64) bits = static_cast<uint32_t>(v);
        return true;
    }
    bool other_value(JsonKind, const JsonToken&) override { return true; }
    std::string field() const override { return "config.json"; }

private:
    bool push() {
        m_path.emplace_back();
        return true;
    }
    bool pop() {
        m_path.pop_back();
        return true;
    }
    // m_path holds the current key of each open container: {section, "bits"} or
    // {"text_config", section, "bits"}.
    bool quant_section() const {
        auto is_section = [](const std::string& s) { return s == "quantization" || s == "quantization_config"; };
        if (m_path.size() == 2) return is_section(m_path[0]);
        return m_path.size() == 3 && m_path[0] == "text_config" && is_section(m_path[1]);
    }
    std::vector<std::string> m_path;
};

// Each diagnostic from `first` on came from reading `layer`'s blob: it names the layer, its media
// type and its digest, so that a finding says which blob of the model it is about.
void name_layer_in_diagnostics(Model& model, size_t first, const ManifestLayer& layer) {
    const std::string named =
        " (" + layer.field + ": " + escape_for_display(layer.media_type, 100) + " " + escape_for_display(layer.digest, 100) + ")";
    for (size_t i = first; i < model.diagnostics.size(); ++i) model.diagnostics[i].message += named;
}

// A layer's blob in the store, checked before it is opened (find_blob).
std::optional<ByteSourcePtr> open_store_layer(const Store& store, const BlobDirectory& blobs, Model& model, const ManifestLayer& layer) {
    BlobLookup blob = find_blob_in(store, blobs, *layer.blob);
    for (const Error& w : blob.warnings)
        model.diagnostics.push_back({Severity::warning, "store", w.code, layer.field, std::nullopt, w.message});
    if (!blob.found()) {
        fail_layer(model, layer, *blob.error);
        return std::nullopt;
    }
    if (layer.has_size && blob.size != layer.size)
        model.diagnostics.push_back(
            {Severity::error, "store", ErrorCode::E_SIZE_MISMATCH, layer.field + ".size", std::nullopt,
             "the layer says " + std::to_string(layer.size) + " bytes; " + blob.name + " has " + std::to_string(blob.size)});
    auto source = store.open_blob(blob);
    if (!source) {
        fail_layer(model, layer, source.error());
        return std::nullopt;
    }
    return *source;
}

void add_json_layer(Model& model, const ManifestLayer& layer, const ByteSourcePtr& source, std::optional<uint32_t>& hint) {
    const uint32_t file = static_cast<uint32_t>(model.files.size());
    SourceFile sf;
    sf.path = source->path();
    sf.source = source;
    sf.alignment = 1;
    model.files.push_back(std::move(sf));
    const uint64_t size = source->size();
    if (size > kMaxJsonBlobBytes) {
        model.diagnostics.push_back({Severity::warning, "store", ErrorCode::W_SIDE_FILE_SKIPPED, layer.field, std::nullopt,
                                     "JSON layer of " + std::to_string(size) +
                                         " bytes above limit max_json_blob_bytes=" + std::to_string(kMaxJsonBlobBytes) + " is not shown",
                                     file});
        return;
    }
    MetadataEntry e;
    e.key = "file:" + layer.name.value_or(layer.field);
    e.file = file;
    e.value.type = ValueType::string;
    e.value_range = {0, size};
    if (size > Value::kInlineStringBytes) {
        e.value.lazy_text = LazyBytes{source, 0, size};
    } else {
        e.value.text.resize(static_cast<size_t>(size));
        if (!source->read(0, size, e.value.text.data())) {
            fail_layer(model, layer, {ErrorCode::E_IO, "", std::nullopt, "cannot read the JSON layer"});
            return;
        }
        if (!hint && layer.name && (*layer.name == "config.json")) {
            BitsHint h;
            if (parse_strict_json(e.value.text, 0, h)) hint = h.bits;
        }
    }
    model.metadata.push_back(std::move(e));
}

// The store check's findings about every layer the model was not read from (config, params,
// projector, text layers, ...) join the Model's diagnostics, so opening a store model gives the
// verdict `mlens check` gives, without parsing the weight blobs twice.
void add_check_of_other_layers(const Store& store, const ModelName& name, const std::vector<const ManifestLayer*>& read, Model& model,
                               JobContext* job) {
    StoreCheckOptions options = kStructureCheck;
    options.parse_weight_blobs = false;
    ModelCheck check = check_store_model(store, name, options, job);
    for (size_t i = 0; i < check.reasons.size(); ++i) {
        const std::string& layer = check.reason_layers[i];
        bool was_read = std::any_of(read.begin(), read.end(), [&](const ManifestLayer* l) { return l->field == layer; });
        if (!was_read && !layer.empty()) model.diagnostics.push_back(check.reasons[i]);
    }
}

// A blob that cannot be read keeps its place among the model's files, with no source
// (Model::missing_files), so that views say which of the model's files they describe.
void add_missing_blob(Model& model, const ManifestLayer& layer) {
    SourceFile missing;
    missing.path = blob_file_name(*layer.blob);
    model.files.push_back(std::move(missing));
}

}  // namespace

void fail_layer(Model& model, const ManifestLayer& layer, const Error& e) {
    model.diagnostics.push_back({Severity::error, "store", e.code, layer.field, e.offset, e.message});
    model.partial = true;
}

Result<Model> open_manifest_model(const std::string& shown, const Manifest& m, const LayerOpener& open_blob,
                                  std::vector<const ManifestLayer*>& read, JobContext* job) {
    Model model;
    const ManifestLayer* gguf = nullptr;
    std::vector<const ManifestLayer*> tensors, json;
    for (const ManifestLayer& l : m.layers) {
        if (l.kind == LayerKind::model) gguf = &l;
        if (l.kind == LayerKind::tensor) tensors.push_back(&l);
        if (l.kind == LayerKind::json) json.push_back(&l);
    }
    if (tensors.empty()) {
        if (!gguf) return Error{ErrorCode::E_NO_MODEL_LAYER, "layers", std::nullopt, shown + ": no model or tensor layer"};
        const size_t first = model.diagnostics.size();
        auto source = open_blob(model, *gguf);
        if (source)
            read_gguf_into(model, *source, 0, {}, job);
        else
            add_missing_blob(model, *gguf);
        name_layer_in_diagnostics(model, first, *gguf);
        model.format = Format::gguf;
        read = {gguf};
        return model;
    }
    model.format = Format::safetensors;
    std::vector<std::string> blob_names;
    std::set<std::string> seen;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (job_cancelled(job)) return cancelled_error("opening");
        job_report(job, static_cast<double>(i) / static_cast<double>(tensors.size()));
        const ManifestLayer& l = *tensors[i];
        if (!seen.insert(l.blob->hex).second) continue;
        const size_t first = model.diagnostics.size();
        auto source = open_blob(model, l);
        if (source) {
            read_safetensors_into(model, *source, static_cast<uint32_t>(model.files.size()), {}, job);
        } else {
            add_missing_blob(model, l);
        }
        name_layer_in_diagnostics(model, first, l);
        blob_names.push_back(l.name.value_or(""));
    }
    std::optional<uint32_t> hint;
    for (const ManifestLayer* l : json) {
        const size_t first = model.diagnostics.size();
        auto source = open_blob(model, *l);
        if (source) add_json_layer(model, *l, *source, hint);
        name_layer_in_diagnostics(model, first, *l);
    }
    model.format = Format::safetensors;
    describe_tensor_blobs(model, blob_names, hint);
    read = tensors;
    read.insert(read.end(), json.begin(), json.end());
    job_report(job, 1.0);
    return model;
}

Result<Model> open_store_model(const Store& store, const ModelName& name, JobContext* job) {
    StoredManifest stored = store.read_manifest(name);
    for (const Diagnostic& d : stored.manifest.diagnostics)
        if (d.severity == Severity::error) return Error{d.code, d.field, d.offset, name.display() + ": " + d.message};
    std::vector<const ManifestLayer*> read;
    const BlobDirectory blobs = open_blob_directory(store);
    auto model = open_manifest_model(
        name.display(), stored.manifest,
        [&store, &blobs](Model& m, const ManifestLayer& layer) { return open_store_layer(store, blobs, m, layer); }, read, job);
    if (model) add_check_of_other_layers(store, name, read, *model, job);
    return model;
}

}  // namespace mlens
