// One store model at a glance: the facts `ollama show` leads with, each from one place, for the
// command line tool's `show` and the app's store model page alike.
//
// Contract:
//  - summarize_store_model reads the manifest view (manifest_view.h) and, when given, the Model
//    open_store_model made of it; it reads no file.
//  - format: the view's. family: the config's model_family, else the Model's architecture
//    (summary.h). parameters: the elements of the Model's logical tensors (nullopt without a
//    Model or with none); parameter_size: the config's model_type as written ("8.0B").
//    quantization: the config's file_type, else the GGUF's general.file_type name.
//    context_length: the config's, else the GGUF's <arch>.context_length.
//  - capabilities, in Ollama's order (server/images.go Capabilities, ollama-store.md §3):
//      1. a config listing "image" makes the model ["image"] and nothing else;
//      2. with a model layer, the GGUF decides: <arch>.pooling_type present → "embedding", else
//         "completion"; <arch>.vision.block_count → "vision" (nothing when the GGUF could not
//         be read); without one, the config's capabilities as listed;
//      3. the template (the last template layer, else Ollama's default "{{ .Prompt }}"), read
//         by read_go_template: a .Tools field or a built-in parser with tool support → "tools";
//         .Suffix → "insert"; a template that does not parse adds nothing;
//      4. a projector layer → "vision";
//      5. unless "thinking" is already there: thinking tags in the template (both non-empty),
//         the family "gptoss" / "gpt-oss", or a built-in parser with thinking support →
//         "thinking".
//    Each capability appears once. Built-in parsers (config "parser") are known by name:
//    qwen3 (tools), qwen3-thinking and qwen3.5 (tools, thinking), ministral (tools), harmony
//    and nemotron-3-nano (tools, thinking), passthrough (neither); another name adds nothing.
//  - template_text, system_text: the last such layer's text; licenses: every license layer's
//    text in manifest order. Raw, as read (manifest_view.h): display through readable_text.
//  - parameters_text(parameters, parameter_size) is the one text of a store model's parameter
//    count, in its summary and in store listings: human_count of the logical parameters
//    ("4.19 M"), else the config's model_type followed by " (config)" ("4.2M (config)"), else "".
//    parameters_text(summary) is that of the summary's two fields.
//  - readable_layer_text: the text of a text layer as every view shows it (readable_text.h):
//    params and messages pretty-printed as JSON, the others with their lines; at most max_chars
//    code points.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/model.h"
#include "mlens/ollama/manifest_view.h"

namespace mlens {

struct StoreModelSummary {
    std::string format;
    std::string family;
    std::optional<uint64_t> parameters;
    std::string parameter_size;
    std::string quantization;
    std::optional<uint64_t> context_length;
    std::vector<std::string> capabilities;
    std::string template_text, system_text;
    std::vector<std::string> licenses;
};

StoreModelSummary summarize_store_model(const ManifestView& view, const Model* model);

std::vector<std::string> store_model_capabilities(const ManifestView& view, const Model* model);

std::string parameters_text(std::optional<uint64_t> parameters, std::string_view parameter_size);
std::string parameters_text(const StoreModelSummary& summary);

std::string readable_layer_text(LayerKind kind, std::string_view text, size_t max_chars = 4000);

}  // namespace mlens
