// Modelfiles: the text `ollama create` reads, written from a manifest's layers so the exported
// GGUF bundle rebuilds the same model, and read back to check that it does.
//
// Contract:
//  - write_modelfile: "FROM ./<model>", one "ADAPTER ./<file>" per adapter, then the text layers
//    in manifest order: TEMPLATE, SYSTEM and LICENSE with their text verbatim between triple
//    quotes; PARAMETER lines from the params JSON object (an array value gives one line per
//    item; strings in double quotes, or triple quotes when they hold a quote; numbers and
//    booleans as their JSON text); MESSAGE <role> """<content>""" from the messages JSON array.
//    A text holding three quotes in a row cannot be quoted: it is left out with a note, as is a
//    params or messages layer that is not the JSON Ollama writes.
//  - parse_modelfile reads that grammar: one instruction per line (a "#" line is a comment),
//    the keyword case-insensitive, an argument quoted with """ (ending at the last quote of the
//    first run of three or more quotes, so a text ending in '"' reads back), with " or bare to
//    the end of the line. Unknown keywords are E_MODELFILE naming the line.
//  - modelfile_layers: the text layers `ollama create` would make of it, as (kind, bytes):
//    template, system and license byte for byte; params as a JSON object (repeated names and
//    "stop" as arrays; a quoted value is a string, a bare one a number or boolean when it parses
//    as one); messages as [{"role","content"}]. Compare params and messages as JSON values
//    (same_layer_content), the others as bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlens/ollama/manifest.h"
#include "mlens/result.h"

namespace mlens {

struct ModelfileTextLayer {
    LayerKind kind = LayerKind::template_text;
    std::string text;
};

struct ModelfileInput {
    std::string from;  // "./model.gguf"
    std::vector<std::string> adapters;  // "./adapter-1.gguf", ...
    std::vector<ModelfileTextLayer> layers;  // template, system, params, messages, license; manifest order
};

std::string write_modelfile(const ModelfileInput& input, std::vector<std::string>& notes);

struct ModelfileInstruction {
    std::string keyword;  // upper case: FROM, ADAPTER, TEMPLATE, SYSTEM, PARAMETER, MESSAGE, LICENSE
    std::string name;  // PARAMETER name, MESSAGE role
    std::string value;
    bool quoted = false;
};

Result<std::vector<ModelfileInstruction>> parse_modelfile(std::string_view text);

std::vector<ModelfileTextLayer> modelfile_layers(const std::vector<ModelfileInstruction>& instructions);

// Bytes equal, or for params and messages equal as JSON values.
bool same_layer_content(LayerKind kind, std::string_view a, std::string_view b);

}  // namespace mlens
