// Modelfiles: the text `ollama create` reads, written from a manifest's layers so the exported
// GGUF bundle rebuilds the same model, and read back to check that it does.
//
// Contract:
//  - parse_modelfile reads the grammar of Ollama's parser (parser/parser.go, ParseFile): one
//    instruction per line (a "#" line is a comment), the keyword case-insensitive and followed by
//    one blank; PARAMETER takes a name of [A-Za-z0-9_], MESSAGE a role (system, user, assistant).
//    The value runs to the first line break (LF or CR) at which the text read so far, trimmed of
//    blanks and line breaks, reads as complete: """text""" (at least six characters), "text", or
//    anything not starting with a quote; the quotes are then removed. Characters Ollama's parser
//    drops are dropped (see write_modelfile), bytes that are not UTF-8 read as U+FFFD. Unknown
//    keywords, a missing name and an unclosed quote are E_MODELFILE naming the line.
//  - write_modelfile: "FROM <from>", one "ADAPTER <path>" per adapter, then the text layers in
//    manifest order: TEMPLATE, SYSTEM and LICENSE; PARAMETER lines from the params JSON object (an
//    array value gives one line per item; numbers and booleans as their JSON text); MESSAGE
//    <role> <content> from the messages JSON array. Every value is written in the form
//    parse_modelfile (and Ollama) reads back as exactly that value, so no value can add an
//    instruction: paths bare when one line without outer blanks or a leading quote, parameter
//    strings as "text" when one line without quotes, everything else (and TEMPLATE, SYSTEM,
//    LICENSE and MESSAGE always) as """text""", which holds quotes, a trailing quote and even """
//    as long as no line ends in """ before more text. A value that no form carries
//    is E_MODELFILE naming the instruction and the reason, and nothing is written: a line ending
//    in """ followed by more text, characters Ollama's parser drops (controls other than tab,
//    CR and LF, invisible format characters, spaces other than U+0020, private use,
//    noncharacters; unassigned code points are not recognised), bytes that are not UTF-8, a
//    parameter name outside [A-Za-z0-9_]+ or a value that is not a string, number or boolean, a
//    message role other than system, user and assistant, and params or messages that are not the
//    JSON Ollama writes.
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

Result<std::string> write_modelfile(const ModelfileInput& input);

struct ModelfileInstruction {
    std::string keyword;  // upper case: FROM, ADAPTER, TEMPLATE, SYSTEM, PARAMETER, MESSAGE, LICENSE, DRAFT, ...
    std::string name;  // PARAMETER name, MESSAGE role
    std::string value;
    bool quoted = false;
};

Result<std::vector<ModelfileInstruction>> parse_modelfile(std::string_view text);

std::vector<ModelfileTextLayer> modelfile_layers(const std::vector<ModelfileInstruction>& instructions);

// Bytes equal, or for params and messages equal as JSON values.
bool same_layer_content(LayerKind kind, std::string_view a, std::string_view b);

}  // namespace mlens
