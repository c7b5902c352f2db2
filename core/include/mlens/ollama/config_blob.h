// The config blob of an Ollama manifest: Ollama's ConfigV2 (ollama-store.md §3 "Config blob").
//
// Contract:
//  - parse_model_config reads the text with parse_strict_json (UTF-8, depth, duplicate keys).
//    Known fields must have their Go types: strings (model_format, model_family, model_type,
//    file_type, renderer, parser, requires (held as requires_version), remote_host, remote_model,
//    base_name, architecture, os), string arrays (model_families, capabilities), non-negative
//    integers (context_length, embedding_length), objects (draft {model_format, architecture,
//    tensor_prefix, config}, rootfs {type, diff_ids[]}, removed from new configs in 2026-08).
//    null is accepted anywhere, as Go's decoder accepts it. Unknown fields are ignored. A wrong
//    type is E_CONFIG_JSON naming the field ("config.file_type") at its offset (+ base); a
//    JSON-level error (syntax, UTF-8, duplicate key, depth) is E_CONFIG_JSON with the field
//    "config" at the byte where parsing stopped.
//  - Arrays keep at most kMaxConfigListItems items; their full length is counted.
//  - Texts above kMaxConfigBytes are refused (E_CONFIG_TOO_LARGE) by the caller before reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/result.h"

namespace mlens {

constexpr uint64_t kMaxConfigBytes = 4ull << 20;  // max_config_bytes
constexpr uint64_t kMaxConfigListItems = 1024;  // max_config_list_items

struct ConfigList {
    std::vector<std::string> items;  // the first kMaxConfigListItems
    uint64_t count = 0;  // all of them
};

struct ModelConfig {
    std::string model_format, model_family, model_type, file_type;
    std::string renderer, parser, requires_version, remote_host, remote_model, base_name;
    std::string architecture, os;
    ConfigList model_families, capabilities;
    std::optional<uint64_t> context_length, embedding_length;
    struct Draft {
        std::string model_format, architecture, tensor_prefix, config;
    };
    std::optional<Draft> draft;
    bool has_rootfs = false;
    std::string rootfs_type;
    ConfigList rootfs_diff_ids;

    // model_format, with "" read as "gguf" (as Ollama does).
    std::string format() const { return model_format.empty() ? "gguf" : model_format; }
};

// The config's fields, each named once: its key in the blob (and in `mlens show --json`'s
// config), what it is for a reader (the label config_fields.h lists it by: what the field is, then
// the key in parentheses where the two differ), and where ModelConfig keeps it. The parser, the
// views and the JSON all walk these tables, in this order.
template <class T, class Owner = ModelConfig>
struct ConfigMember {
    const char* key;
    const char* label;
    T Owner::*member;
};

inline constexpr ConfigMember<std::string> kConfigTextFields[] = {
    {"model_format", "format (model_format)", &ModelConfig::model_format},
    {"model_family", "family (model_family)", &ModelConfig::model_family},
    {"model_type", "parameter size (model_type)", &ModelConfig::model_type},
    {"file_type", "quantization (file_type)", &ModelConfig::file_type},
    {"renderer", "renderer", &ModelConfig::renderer},
    {"parser", "parser", &ModelConfig::parser},
    {"requires", "needs Ollama (requires)", &ModelConfig::requires_version},
    {"remote_host", "remote host (remote_host)", &ModelConfig::remote_host},
    {"remote_model", "remote model (remote_model)", &ModelConfig::remote_model},
    {"base_name", "base model (base_name)", &ModelConfig::base_name},
    {"architecture", "CPU architecture (architecture)", &ModelConfig::architecture},
    {"os", "operating system (os)", &ModelConfig::os}};
inline constexpr ConfigMember<ConfigList> kConfigListFields[] = {
    {"model_families", "families (model_families)", &ModelConfig::model_families},
    {"capabilities", "capabilities", &ModelConfig::capabilities}};
inline constexpr ConfigMember<std::optional<uint64_t>> kConfigNumberFields[] = {
    {"context_length", "context length (context_length)", &ModelConfig::context_length},
    {"embedding_length", "embedding length (embedding_length)", &ModelConfig::embedding_length}};
// A draft's parts; the label is what precedes the part's value in the draft's one-line text.
inline constexpr ConfigMember<std::string, ModelConfig::Draft> kConfigDraftFields[] = {
    {"model_format", "", &ModelConfig::Draft::model_format},
    {"architecture", "", &ModelConfig::Draft::architecture},
    {"tensor_prefix", "prefix ", &ModelConfig::Draft::tensor_prefix},
    {"config", "config ", &ModelConfig::Draft::config}};

Result<ModelConfig> parse_model_config(std::string_view text, uint64_t base = 0);

}  // namespace mlens
