// The fields of an Ollama config blob (config_blob.h) as every view lists them: what each one is,
// with the name Ollama gives it, and its value as text.
//
// Contract:
//  - config_fields(config) gives, in this order, the fields the config sets (an empty text or list
//    and an absent number are left out): format (model_format), family (model_family), parameter
//    size (model_type: Ollama's rounded count, "4.2M"), quantization (file_type), renderer,
//    parser, needs Ollama (requires), remote host (remote_host), remote model (remote_model), base
//    model (base_name), CPU architecture (architecture), operating system (os), families
//    (model_families), capabilities, context length (context_length), embedding length
//    (embedding_length), draft model (draft), root filesystem (rootfs).
//  - label: what the field is, then Ollama's name for it in parentheses where the two differ
//    ("parameter size (model_type)", "capabilities").
//  - value: the text as the config has it (raw: display it through escape_for_display); a list
//    joined by ", ", followed by ", … (N in all)" when the config lists more than it keeps
//    (kMaxConfigListItems); draft as "FORMAT ARCHITECTURE prefix PREFIX config CONFIG", the parts
//    it leaves empty left out (a draft with none is left out); rootfs as "TYPE, N diff_ids".
#pragma once

#include <string>
#include <vector>

#include "mlens/ollama/config_blob.h"

namespace mlens {

struct ConfigField {
    std::string label;
    std::string value;
};

std::vector<ConfigField> config_fields(const ModelConfig& config);

}  // namespace mlens
