#include "store_export_readme.h"

#include <map>

#include "mlens/model/shape_text.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

std::string cell(const std::string& s) {
    std::string out = escape_for_display(s, 300);
    for (size_t i = 0; (i = out.find('|', i)) != std::string::npos; i += 2) out.replace(i, 1, "\\|");
    return out;
}

bool has_file(const StoreExportPlan& plan, const std::string& name) {
    for (const ExportFile& f : plan.files)
        if (f.name == name) return true;
    return false;
}

void files_section(std::string& out, const StoreExportPlan& plan) {
    out += "## Files\n\n| file | bytes | what |\n| --- | ---: | --- |\n";
    for (const ExportFile& f : plan.files)
        out += "| " + cell(f.name) + " | " + std::to_string(f.bytes) + " | " + cell(f.description) + " |\n";
    out += "| README.md | | this file |\n\n";
}

void layers_section(std::string& out, const PreparedExport& p) {
    out += "## Source\n\nOllama model `" + cell(p.name.full()) + "` in the store `" + cell(p.store.root()) + "`.\n\n";
    out += "Manifest " + cell(p.view.stored.ref.path) + ", digest `" + cell(p.view.stored.digest) + "`.\n\n";
    out += "| layer | media type | digest | bytes | name |\n| --- | --- | --- | ---: | --- |\n";
    out += "| config | " + cell(p.view.config_layer.layer.media_type) + " | `" + cell(p.view.config_layer.layer.digest) + "` | " +
        std::to_string(p.view.config_layer.layer.size) + " | |\n";
    for (const LayerView& l : p.view.layers)
        out += std::string("| ") + layer_kind_name(l.layer.kind) + " | " + cell(l.layer.media_type) + " | `" + cell(l.layer.digest) +
            "` | " + std::to_string(l.layer.size) + " | " + cell(l.layer.name.value_or("")) + " |\n";
    out += "\n";
}

void notes_section(std::string& out, const StoreExportPlan& plan) {
    out += "## What was rewritten or converted\n\n";
    if (plan.notes.empty()) out += "Nothing: the model files are blobs of the store as they are.\n";
    for (const std::string& n : plan.notes) out += "- " + cell(n) + "\n";
    out += "\n";
}

void gguf_run_section(std::string& out, const StoreExportPlan& plan) {
    out += "## How to run\n\n```sh\nllama-cli -m model.gguf";
    if (has_file(plan, "mmproj.gguf")) out += " --mmproj mmproj.gguf";
    for (const ExportFile& f : plan.files)
        if (f.name.starts_with("adapter-")) out += " --lora " + f.name;
    if (has_file(plan, "draft.gguf")) out += " -md draft.gguf";
    out += "\nollama create MODEL -f Modelfile   # the same model back in Ollama\n```\n\n";
    out +=
        "Every file was re-read after writing: blob copies byte for byte against their blob, the compat export by the "
        "GGUF reader against its layout.\n";
}

void folder_section(std::string& out, const StoreExportPlan& plan) {
    const HfPlan& hf = plan.hf;
    if (plan.format == ExportFormat::hf)
        out += "## Tensors\n\nDequantized with ModelLens's decoding of Ollama's MLX tensor blobs and rounded to " +
            std::string(hf_dtype_name(hf.dtype)) +
            " (round to nearest even); stacked expert groups unpacked to one tensor per "
            "expert. After writing, every tensor was read back and compared bit for bit with that rounding.\n\n";
    else
        out +=
            "## Tensors\n\nQuantized tensors kept bit for bit in MLX's layout (weight, scales, biases; experts stacked as "
            "switch_mlp), their quantization in config.json. After writing, every tensor was read back and compared byte for "
            "byte with the store's.\n\n";
    std::map<std::string, std::pair<size_t, uint64_t>> by_type;
    for (const HfShard& s : hf.shards)
        for (const HfTensor& t : s.tensors) {
            auto& [count, bytes] = by_type[t.source_type + " -> " + t.dtype + (t.converted ? "" : " (copied)")];
            ++count;
            bytes += t.bytes;
        }
    out += "| stored as -> written as | tensors | bytes |\n| --- | ---: | ---: |\n";
    for (const auto& [type, v] : by_type)
        out += "| " + cell(type) + " | " + std::to_string(v.first) + " | " + std::to_string(v.second) + " |\n";
    out += "\n| tensor | stored as | written as | shape | shard |\n| --- | --- | --- | --- | --- |\n";
    for (const HfShard& s : hf.shards)
        for (const HfTensor& t : s.tensors) {
            out += "| " + cell(t.name) + " | " + cell(t.source_type) + " | " + t.dtype + " | " + shape_text(t.ne, ShapeStyle::bracketed, ShapeOrder::slowest_first) +
                " | " + s.file + " |\n";
        }
    if (plan.format == ExportFormat::hf)
        out +=
            "\n## How to run\n\n```python\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "model = AutoModelForCausalLM.from_pretrained(\".\")\ntokenizer = AutoTokenizer.from_pretrained(\".\")\n```\n";
    else
        out += "\n## How to run\n\n```sh\nmlx_lm.generate --model . --prompt \"Hello\"\n```\n";
}

}  // namespace

std::string export_readme(const PreparedExport& p) {
    const StoreExportPlan& plan = p.plan;
    std::string out = "# " + cell(plan.reference) + "\n\nExported from an Ollama store by ModelLens (`mlens export --format " +
        export_format_name(plan.format) + "`).\n\n";
    layers_section(out, p);
    files_section(out, plan);
    notes_section(out, plan);
    if (plan.format == ExportFormat::gguf)
        gguf_run_section(out, plan);
    else
        folder_section(out, plan);
    return out;
}

}  // namespace mlens
