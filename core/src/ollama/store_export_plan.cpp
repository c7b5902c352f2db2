#include <algorithm>
#include <map>

#include "mlens/compat/ollama_origin.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/io/checked_math.h"
#include "mlens/ollama/mlx_export.h"
#include "mlens/ollama/modelfile.h"
#include "mlens/ollama/store_export.h"
#include "mlens/ollama/store_model.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "store_export_readme.h"

namespace mlens {

namespace {

// Each export format: its name, the model format it applies to and the layer kind that carries that
// model in a manifest. A manifest with a model layer exports as gguf only, even with tensor layers.
struct ExportFormatFacts {
    ExportFormat format;
    const char* name;
    std::string_view model_format;
    LayerKind layer;
};
constexpr ExportFormatFacts kExportFormats[] = {
    {ExportFormat::gguf, "gguf", "gguf", LayerKind::model},
    {ExportFormat::hf, "hf", "safetensors", LayerKind::tensor},
    {ExportFormat::mlx, "mlx", "safetensors", LayerKind::tensor},
};

template <typename Keep>
std::vector<ExportFormat> formats_where(Keep keep) {
    std::vector<ExportFormat> out;
    for (const ExportFormatFacts& f : kExportFormats)
        if (keep(f)) out.push_back(f.format);
    return out;
}

Error plan_error(ErrorCode code, const std::string& message) { return Error{code, "", std::nullopt, message}; }

// The size write_gguf gives a layout: the padded header, then each tensor padded to the alignment.
Result<uint64_t> gguf_file_size(const Model& layout) {
    auto header = gguf_header_bytes(layout);
    if (!header) return header.error();
    uint64_t alignment = 32;
    if (auto a = layout.get_uint("general.alignment"); a && *a > 0) alignment = *a;
    uint64_t size = header->size();
    for (const TensorInfo& t : layout.tensors) {
        auto padded = checked_align_up(t.n_bytes.value_or(0), alignment);
        auto next = padded ? checked_add(size, *padded) : std::nullopt;
        if (!next) return plan_error(ErrorCode::E_SIZE_OVERFLOW, "the export would be larger than 2^64 bytes");
        size = *next;
    }
    return size;
}

// A file the compat export writes from one side of the plan, sized as write_gguf will write it.
Result<ExportFile> rewritten_file(const Model& model, const compat::SidePlan& side, const std::string& name, ExportFileKind kind,
                                  const std::string& description) {
    auto layout = compat::export_layout(model, side);
    if (!layout) return layout.error();
    auto size = gguf_file_size(layout->model);
    if (!size) return size.error();
    ExportFile f;
    f.name = name;
    f.kind = kind;
    f.bytes = *size;
    f.description = description;
    return f;
}

ExportFile blob_file(const std::string& name, const LayerView& layer, const std::string& description) {
    ExportFile f;
    f.name = name;
    f.kind = ExportFileKind::blob_copy;
    f.bytes = layer.blob->size;
    f.blob_path = layer.blob->path;
    f.digest = layer.layer.digest;
    f.description = description;
    return f;
}

ExportFile text_file(const std::string& name, std::string text, const std::string& description) {
    ExportFile f;
    f.name = name;
    f.kind = ExportFileKind::text;
    f.bytes = text.size();
    f.text = std::move(text);
    f.description = description;
    return f;
}

// A JSON layer's name as a relative path that stays inside OUT_DIR.
bool safe_relative_name(const std::string& name) {
    if (name.empty() || name.front() == '/' || name.back() == '/' || name.size() > 255) return false;
    size_t start = 0;
    while (start <= name.size()) {
        size_t end = name.find('/', start);
        if (end == std::string::npos) end = name.size();
        std::string part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") return false;
        start = end + 1;
    }
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7F || c == '\\') return false;
    return true;
}

Status plan_gguf(PreparedExport& p) {
    StoreExportPlan& plan = p.plan;
    const LayerView* model_layer = nullptr;
    const LayerView* projector = nullptr;
    std::vector<const LayerView*> adapters;
    const LayerView* draft = nullptr;
    ModelfileInput modelfile;
    for (const LayerView& l : p.view.layers) {
        switch (l.layer.kind) {
            case LayerKind::model:
                model_layer = &l;
                break;
            case LayerKind::projector:
                projector = &l;
                break;
            case LayerKind::adapter:
                adapters.push_back(&l);
                break;
            case LayerKind::draft:
                draft = &l;
                break;
            case LayerKind::template_text:
            case LayerKind::system:
            case LayerKind::params:
            case LayerKind::messages:
            case LayerKind::license:
                if (!l.text || l.text->truncated())
                    return plan_error(ErrorCode::E_EXPORT,
                                      "the " + std::string(layer_kind_name(l.layer.kind)) + " layer cannot be read whole");
                modelfile.layers.push_back({l.layer.kind, l.text->text});
                break;
            default:
                break;
        }
    }
    if (!model_layer || !model_layer->blob || !model_layer->blob->found())
        return plan_error(ErrorCode::E_EXPORT, "the model layer's blob cannot be found");

    const auto origin = compat::detect_ollama_origin(p.model);
    plan.ollama_made = origin.ollama_made();
    p.compat_plan = compat::plan_compat(p.model);
    const bool compat_vision = plan.ollama_made && !projector && compat::has_vision_export(p.model, p.compat_plan);
    if (plan.ollama_made) {
        auto f = rewritten_file(p.model, p.compat_plan.text, "model.gguf", ExportFileKind::upstream_text,
                                "the upstream-shaped GGUF of the compat export (the model blob is Ollama-made)");
        if (!f) return f.error();
        plan.files.push_back(std::move(*f));
        plan.notes.push_back("model.gguf: " + origin.summary());
        plan.notes.push_back("text side rewritten: " + p.compat_plan.text.summary());
    } else {
        plan.files.push_back(blob_file("model.gguf", *model_layer, "the model blob as is (no evidence that Ollama made it)"));
    }
    if (projector) {
        plan.files.push_back(blob_file("mmproj.gguf", *projector, "the projector layer's blob as is"));
    } else if (compat_vision) {
        auto f = rewritten_file(p.model, p.compat_plan.clip, "mmproj.gguf", ExportFileKind::upstream_mmproj,
                                "the vision projector of the compat export (clip side of the model blob)");
        if (!f) return f.error();
        plan.files.push_back(std::move(*f));
        plan.notes.push_back("clip side rewritten: " + p.compat_plan.clip.summary());
    }
    for (size_t i = 0; i < adapters.size(); ++i) {
        if (!adapters[i]->blob || !adapters[i]->blob->found())
            return plan_error(ErrorCode::E_EXPORT, "an adapter layer's blob cannot be found");
        const std::string name = "adapter-" + std::to_string(i + 1) + ".gguf";
        plan.files.push_back(blob_file(name, *adapters[i], "adapter layer " + std::to_string(i + 1) + " as is"));
        modelfile.adapters.push_back("./" + name);
    }
    if (draft) {
        if (!draft->blob || !draft->blob->found()) return plan_error(ErrorCode::E_EXPORT, "the draft layer's blob cannot be found");
        plan.files.push_back(blob_file("draft.gguf", *draft, "the draft model layer as is"));
        plan.notes.push_back("draft.gguf: a Modelfile has no instruction for a draft model; load it with llama.cpp's -md");
    }
    modelfile.from = "./model.gguf";
    auto modelfile_text = write_modelfile(modelfile);
    if (!modelfile_text) return plan_error(ErrorCode::E_EXPORT, "the Modelfile cannot be written: " + modelfile_text.error().message);
    plan.files.push_back(text_file("Modelfile", *modelfile_text, "rebuilds the model with `ollama create NAME -f Modelfile`"));
    return ok_status();
}

// The dtypes a shard's tensors are written in, with how many of each: "5 BF16, 2 F16".
std::string dtype_counts(const HfShard& shard) {
    std::vector<std::pair<std::string, size_t>> counts;  // first-seen order
    for (const HfTensor& t : shard.tensors) {
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == t.dtype; });
        if (it == counts.end())
            counts.push_back({t.dtype, 1});
        else
            ++it->second;
    }
    std::string out;
    for (const auto& [dtype, n] : counts) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + dtype;
    return out;
}

// hf and mlx: the JSON layers, the shards and their index (mlx: config.json with its quantization).
Status plan_folder(PreparedExport& p, const StoreExportOptions& options) {
    StoreExportPlan& plan = p.plan;
    std::string mlx_config;
    if (plan.format == ExportFormat::mlx) {
        auto mlx = plan_mlx_export(p.model, options.shard_limit);
        if (!mlx) return mlx.error();
        plan.hf = std::move(mlx->layout);
        mlx_config = std::move(mlx->config_json);
        plan.notes = std::move(mlx->notes);
    } else {
        auto hf = plan_hf_export(p.model, options.dtype, options.shard_limit);
        if (!hf) return hf.error();
        plan.hf = std::move(*hf);
    }
    std::vector<std::string> ours = {"README.md", "model.safetensors.index.json"};
    for (const HfShard& s : plan.hf.shards) ours.push_back(s.file);
    for (const LayerView& l : p.view.layers) {
        if (l.layer.kind != LayerKind::json) continue;
        const std::string name = l.layer.name.value_or("");
        if (!safe_relative_name(name) || std::find(ours.begin(), ours.end(), name) != ours.end()) {
            plan.notes.push_back("JSON layer \"" + escape_for_display(name) + "\" left out: its name is not a file name inside the folder");
            continue;
        }
        if (!l.blob || !l.blob->found())
            return plan_error(ErrorCode::E_EXPORT, "the blob of JSON layer " + escape_for_display(name) + " cannot be found");
        ours.push_back(name);
        if (name == "config.json" && plan.format == ExportFormat::mlx)
            plan.files.push_back(text_file(name, mlx_config, "the config.json layer with the quantization mlx-lm reads"));
        else if (name == "config.json" && !plan.hf.config_json.empty())
            plan.files.push_back(
                text_file(name, plan.hf.config_json, "the config.json layer with no quantization block and the torch_dtype written"));
        else
            plan.files.push_back(blob_file(name, l, "JSON layer as is"));
    }
    for (size_t i = 0; i < plan.hf.shards.size(); ++i) {
        ExportFile f;
        f.name = plan.hf.shards[i].file;
        f.kind = ExportFileKind::safetensors_shard;
        f.shard = i;
        f.bytes = plan.hf.shards[i].bytes();
        f.description = plural(plan.hf.shards[i].tensors.size(), "tensor") +
            (plan.format == ExportFormat::hf ? " (" + dtype_counts(plan.hf.shards[i]) + ")" : std::string(" in MLX layout"));
        plan.files.push_back(std::move(f));
    }
    plan.files.push_back(text_file("model.safetensors.index.json", plan.hf.index_json, "which shard holds each tensor"));
    if (plan.format == ExportFormat::mlx) return ok_status();
    if (plan.hf.dequantized)
        plan.notes.push_back(plural(plan.hf.dequantized, "quantized tensor") +
                             " written dequantized as " + hf_dtype_name(plan.hf.dtype) + " (" + plan.hf.dtype_origin + ")");
    if (plan.hf.kept_float)
        plan.notes.push_back(plural(plan.hf.kept_float, "floating tensor copied in its own dtype",
                                    "floating tensors copied in their own dtype") +
                             ", losslessly (--dtype converts them)");
    else if (options.dtype)
        plan.notes.push_back(std::string("floating tensors converted to ") + hf_dtype_name(plan.hf.dtype) + " (--dtype)");
    if (plan.hf.unpacked_experts)
        plan.notes.push_back(std::to_string(plan.hf.unpacked_experts) + " expert tensors unpacked from stacked expert groups");
    return ok_status();
}

}  // namespace

const ExportFileKindFacts& export_file_kind(ExportFileKind kind) {
    static constexpr ExportFileKindFacts kKinds[] = {
        // in the enum's order
        {ExportFileKind::blob_copy, "blob", false, true},
        {ExportFileKind::upstream_text, "compat_text", true, false},
        {ExportFileKind::upstream_mmproj, "compat_mmproj", true, false},
        {ExportFileKind::text, "text", false, true},
        {ExportFileKind::safetensors_shard, "safetensors", false, false},
    };
    static_assert(kKinds[static_cast<size_t>(ExportFileKind::safetensors_shard)].kind == ExportFileKind::safetensors_shard);
    return kKinds[static_cast<size_t>(kind)];
}

const char* export_format_name(ExportFormat format) {
    for (const ExportFormatFacts& f : kExportFormats)
        if (f.format == format) return f.name;
    return "?";
}

std::optional<ExportFormat> parse_export_format(std::string_view text) {
    for (const ExportFormatFacts& f : kExportFormats)
        if (text == f.name) return f.format;
    return std::nullopt;
}

std::vector<ExportFormat> store_export_formats(const Manifest& manifest) {
    for (const ExportFormatFacts& first : kExportFormats) {
        const bool present =
            std::any_of(manifest.layers.begin(), manifest.layers.end(), [&](const ManifestLayer& l) { return l.kind == first.layer; });
        if (present) return formats_where([&](const ExportFormatFacts& f) { return f.layer == first.layer; });
    }
    return {};
}

std::vector<ExportFormat> export_formats_of(std::string_view model_format) {
    return formats_where([&](const ExportFormatFacts& f) { return f.model_format == model_format; });
}

uint64_t StoreExportPlan::total_bytes() const {
    uint64_t n = 0;
    for (const ExportFile& f : files) n += f.bytes;
    return n;
}

Result<PreparedExport> prepare_store_export(const Store& store, const ModelName& name, const StoreExportOptions& options, JobContext* job) {
    auto view = view_manifest(store, name);
    if (!view) return view.error();
    if (!view->stored.valid())
        return plan_error(ErrorCode::E_EXPORT, "the manifest of " + escape_for_display(name.display()) + " has errors; run `mlens check`");
    auto model = open_store_model(store, name, job);
    if (!model) return model.error();
    if (model->partial || model->error_count() > 0)
        return plan_error(ErrorCode::E_EXPORT, escape_for_display(name.display()) + " has errors; run `mlens check` for details");
    PreparedExport p{store, name, std::move(*view), std::move(*model), {}, {}};
    StoreExportPlan& plan = p.plan;
    plan.reference = name.display();
    plan.formats = store_export_formats(p.view.stored.manifest);
    if (plan.formats.empty()) return plan_error(ErrorCode::E_EXPORT, "the model has neither a model layer nor tensor layers");
    plan.format = options.format.value_or(plan.formats.front());
    if (std::find(plan.formats.begin(), plan.formats.end(), plan.format) == plan.formats.end())
        return plan_error(ErrorCode::E_ARGS,
                          std::string("format ") + export_format_name(plan.format) +
                              " does not apply to this model (it applies: " + export_format_name(plan.formats.front()) + ")");
    if (options.dtype && plan.format != ExportFormat::hf) return plan_error(ErrorCode::E_ARGS, "--dtype applies to --format hf only");
    Status s = plan.format == ExportFormat::gguf ? plan_gguf(p) : plan_folder(p, options);
    if (!s) return s.error();
    plan.files.push_back(text_file("README.md", export_readme(p), "what this folder is, where it came from and how to run it"));
    return p;
}

}  // namespace mlens
