#include "mlens/analysis/loadability.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include <gguf.h>

#include "formats/gguf_split.h"
#include "mlens/compat/load_rewrite.h"
#include "mlens/formats/llama_asserts.h"
#include "mlens/formats/llama_requirements.h"
#include "mlens/io/path_parts.h"
#include "mlens/io/store_shape.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "mlens/text/nearest_name.h"
#include "mlens/util/build_info.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

constexpr NameRow<LoadVerdict> kVerdictNames[] = {
    {LoadVerdict::loads, "loads"},
    {LoadVerdict::loads_after_compat, "loads_after_compat"},
    {LoadVerdict::does_not_load, "does_not_load"},
};

constexpr NameRow<LoadProblem> kProblemNames[] = {
    {LoadProblem::not_gguf, "not_gguf"},
    {LoadProblem::later_split_part, "later_split_part"},
    {LoadProblem::missing_split_part, "missing_split_part"},
    {LoadProblem::split_mismatch, "split_mismatch"},
    {LoadProblem::damaged_header, "damaged_header"},
    {LoadProblem::duplicate_name, "duplicate_name"},
    {LoadProblem::unknown_type, "unknown_type"},
    {LoadProblem::bad_row_size, "bad_row_size"},
    {LoadProblem::offset_mismatch, "offset_mismatch"},
    {LoadProblem::data_out_of_bounds, "data_out_of_bounds"},
    {LoadProblem::no_architecture, "no_architecture"},
    {LoadProblem::unknown_architecture, "unknown_architecture"},
    {LoadProblem::unsupported_architecture, "unsupported_architecture"},
    {LoadProblem::missing_key, "missing_key"},
    {LoadProblem::load_assert, "load_assert"},
    {LoadProblem::bad_vocabulary, "bad_vocabulary"},
    {LoadProblem::missing_tensor, "missing_tensor"},
    {LoadProblem::wrong_shape, "wrong_shape"},
    {LoadProblem::extra_tensor, "extra_tensor"},
    {LoadProblem::decode_assert, "decode_assert"},
    {LoadProblem::uneven_tensor, "uneven_tensor"},
};

constexpr NameRow<LoadSubject> kSubjectNames[] = {
    {LoadSubject::file, "file"},
    {LoadSubject::key, "key"},
    {LoadSubject::tensor, "tensor"},
};

// Where a Hugging Face config.json usually holds the value of a required key (by the suffix after
// "<arch>."), as convert_hf_to_gguf.py reads it.
constexpr std::pair<std::string_view, std::string_view> kKeySources[] = {
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"attention.layer_norm_epsilon", "layer_norm_eps"},
    {"rope.freq_base", "rope_theta"},
    {"expert_count", "num_experts"},
    {"expert_used_count", "num_experts_per_tok"},
    {"attention.sliding_window", "sliding_window"},
    {"vocab_size", "vocab_size"},
};

uint64_t pad_to(uint64_t n, uint64_t alignment) { return alignment ? (n + alignment - 1) / alignment * alignment : n; }

// Bytes of a tensor of `n_elements` in blocks of `block_size` weights, `type_size` bytes each.
uint64_t block_bytes(uint64_t n_elements, uint64_t block_size, uint64_t type_size) { return n_elements / block_size * type_size; }

LoadReason tensor_reason(LoadProblem p, const TensorInfo& t, std::string text, std::string fix = {}) {
    return {p, LoadSubject::tensor, t.name, t.info_range.offset, std::move(text), std::move(fix)};
}

// The block size (1..1024, a power of two) with the linked type's block bytes that makes `span`
// bytes hold the tensor, padded as the file pads; nullopt when none does.
std::optional<uint64_t> fitting_block_size(const TensorInfo& t, const GgmlTypeFacts& type, uint64_t span, uint64_t alignment) {
    for (uint64_t b = 1; b <= 1024; b *= 2) {
        if (b == type.block_size || t.ne.empty() || t.ne[0] % b != 0) continue;
        if (pad_to(block_bytes(t.n_elements, b, type.type_size), alignment) == span) return b;
    }
    return std::nullopt;
}

uint32_t linked_type_count() {
    uint32_t most = 0;
    for (const GgmlTypeFacts& t : linked_ggml_types()) most = std::max(most, t.id + 1);
    return most;
}

// gguf.cpp's checks of one file's tensor infos and llama.cpp's bounds check, in file order.
void check_file_layout(const Model& model, uint32_t file, std::vector<LoadReason>& out) {
    const SourceFile& f = model.files[file];
    uint64_t expected = 0;
    const TensorInfo* previous = nullptr;
    for (const TensorInfo& t : model.tensors) {
        if (t.file != file) continue;
        const GgmlTypeFacts* type = find_linked_ggml_type(t.type.id);
        if (!type) {
            out.push_back(tensor_reason(LoadProblem::unknown_type, t,
                                        "tensor '" + t.name + "' has ggml type id " + std::to_string(t.type.id) +
                                            ", which the linked ggml does not know (it knows ids below " + std::to_string(linked_type_count()) +
                                            ", removed ones aside)",
                                        "requantize it with the linked llama.cpp's llama-quantize, or load it with the llama.cpp build that wrote it"));
            return;
        }
        if (t.ne.empty() || t.ne[0] % type->block_size != 0) {
            out.push_back(tensor_reason(LoadProblem::bad_row_size, t,
                                        "tensor '" + t.name + "' of type " + std::to_string(t.type.id) + " (" + type->name + ") has " +
                                            std::to_string(t.ne.empty() ? 0 : t.ne[0]) + " elements per row, not a multiple of block size (" +
                                            std::to_string(type->block_size) + ")"));
            return;
        }
        if (t.relative_offset != expected) {
            std::string fix;
            if (previous) {
                const GgmlTypeFacts* prev_type = find_linked_ggml_type(previous->type.id);
                const uint64_t span = t.relative_offset - previous->relative_offset;
                if (auto b = t.relative_offset > previous->relative_offset ? fitting_block_size(*previous, *prev_type, span, f.alignment)
                                                                           : std::nullopt)
                    fix = "quantized by a llama.cpp fork: type id " + std::to_string(previous->type.id) + " here has a " + std::to_string(*b) +
                        "-weight block, the linked ggml's (" + prev_type->name + ") has " + std::to_string(prev_type->block_size) +
                        "; load it with that fork, or requantize from the original weights with the linked llama.cpp";
            }
            out.push_back(tensor_reason(LoadProblem::offset_mismatch, t,
                                        "tensor '" + t.name + "' has offset " + std::to_string(t.relative_offset) + ", expected " +
                                            std::to_string(expected),
                                        std::move(fix)));
            return;
        }
        expected += pad_to(block_bytes(t.n_elements, type->block_size, type->type_size), f.alignment);
        previous = &t;
    }
    if (!f.data_start_known() || !f.source) return;
    for (const TensorInfo& t : model.tensors) {
        if (t.file != file) continue;
        const GgmlTypeFacts* type = find_linked_ggml_type(t.type.id);
        const uint64_t end = f.data_start + t.relative_offset + block_bytes(t.n_elements, type->block_size, type->type_size);
        if (end > f.source->size()) {
            out.push_back(tensor_reason(LoadProblem::data_out_of_bounds, t,
                                        "tensor '" + t.name + "' data is not within the file bounds, model is corrupted or incomplete",
                                        "the file is cut short: download or copy it again"));
            return;
        }
    }
}

std::string usual_source(std::string_view key, std::string_view arch) {
    if (key.size() <= arch.size() + 1 || key.substr(0, arch.size()) != arch) return {};
    const std::string_view suffix = key.substr(arch.size() + 1);
    for (const auto& [s, hf] : kKeySources)
        if (s == suffix) return "set it to the model's config.json \"" + std::string(hf) + "\" (the value convert_hf_to_gguf.py writes there)";
    return {};
}

std::vector<std::string> known_arch_names() {
    std::vector<std::string> names;
    for (const LlamaArchRequirements& a : llama_arch_requirements()) names.emplace_back(a.name);
    return names;
}

bool is_load_time(const LlamaAssert& row) { return row.function && std::strcmp(row.function, "llama_model_base::load_hparams") == 0; }

void check_asserts(const Model& model, const std::string& arch, std::vector<LoadReason>& reasons, std::vector<LoadReason>& warnings) {
    const LlamaHparams h = llama_hparams_of(model);
    for (const LlamaAssert& row : llama_asserts()) {
        if (!row.trips(h)) continue;
        const MetadataEntry* at = nullptr;
        for (const char* suffix : row.keys)
            if (suffix && !at) at = model.find(arch + "." + suffix);
        if (!at) continue;  // only llama.cpp's defaults trip it: nothing in the file to point at
        const bool load_time = is_load_time(row);
        LoadReason r{load_time ? LoadProblem::load_assert : LoadProblem::decode_assert, LoadSubject::key, at->key, at->key_range.offset,
                     std::string(load_time ? "llama.cpp aborts while loading: " : "llama.cpp loads it, then aborts at the first decode: ") +
                         row.assert_text + " at " + llama_assert_where(row, arch),
                     "correct " + at->key + " (the value the model's config.json gives)"};
        (load_time ? reasons : warnings).push_back(std::move(r));
    }
}

std::string layer_name(std::string_view pattern, uint64_t layer) {
    std::string name(pattern);
    if (auto at = name.find("%d"); at != std::string::npos) name.replace(at, 2, std::to_string(layer));
    return name;
}

// llama_vocab::load's type check of the T5 (Unigram) charsmap, which it reads as raw bytes.
void check_vocabulary(const Model& model, std::vector<LoadReason>& out) {
    // llama_vocab::impl::load (llama-vocab.cpp): the tokenizer model is a required STRING key, one
    // of the names the loader knows (llama_tokenizer_models, generated); "no_vocab" and "none" need
    // nothing more; the BPE-like models need their merges (as an array of strings); every other
    // model needs the token list.
    const MetadataEntry* tokenizer = model.find("tokenizer.ggml.model");
    if (!tokenizer) {
        out.push_back({LoadProblem::missing_key, LoadSubject::key, "tokenizer.ggml.model", std::nullopt,
                       "key not found in model: tokenizer.ggml.model",
                       "convert_hf_to_gguf.py writes it with the vocabulary (\"llama\", \"gpt2\", ...; \"none\" for a model without one)"});
        return;
    }
    if (!tokenizer->value.is_string()) {
        out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, tokenizer->key, tokenizer->key_range.offset,
                       std::string("key tokenizer.ggml.model has wrong type ") + gguf_type_name(static_cast<gguf_type>(tokenizer->value.type)) +
                           " but expected type str",
                       "store the tokenizer model's name as a STRING"});
        return;
    }
    const std::string kind = model.get_string("tokenizer.ggml.model").value_or("");
    const auto known = llama_tokenizer_models();
    const auto model_entry = std::find_if(known.begin(), known.end(), [&](const LlamaTokenizerModel& m) { return kind == m.name; });
    if (model_entry == known.end()) {
        std::string names;
        for (const LlamaTokenizerModel& m : known) names += (names.empty() ? "" : ", ") + std::string(m.name);
        out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, tokenizer->key, tokenizer->key_range.offset,
                       "unknown tokenizer: '" + kind + "'", "the linked llama.cpp knows " + names});
        return;
    }
    if (kind == "no_vocab" || kind == "none") return;
    if (model_entry->needs_merges) {
        const MetadataEntry* merges = model.find("tokenizer.ggml.merges");
        const bool exempt = *model_entry->merges_exempt_pre && model.get_string("tokenizer.ggml.pre") == model_entry->merges_exempt_pre;
        if (!merges && !exempt) {
            out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, "tokenizer.ggml.merges", std::nullopt,
                           "cannot find tokenizer merges in model file",
                           "a " + kind + " tokenizer needs its BPE merges (tokenizer.ggml.merges): put back the ones the file was converted with"});
            return;
        }
        if (merges && !(merges->value.is_array() && merges->value.array && merges->value.array->element_type == ValueType::string)) {
            out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, merges->key, merges->key_range.offset,
                           "invalid gguf type for tokenizer.ggml.merges (llama.cpp reads it as an array of strings)",
                           "store the merges as an ARRAY of STRING"});
            return;
        }
    }
    if (!model.find("tokenizer.ggml.tokens")) {
        out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, "tokenizer.ggml.tokens", std::nullopt,
                       "cannot find tokenizer vocab in model file",
                       "the token list (tokenizer.ggml.tokens) is missing: put back the vocabulary the file was converted with"});
        return;
    }
    if (kind != "t5") return;
    const MetadataEntry* charsmap = model.find("tokenizer.ggml.precompiled_charsmap");
    if (!charsmap) return;
    const Value& v = charsmap->value;
    const bool bytes = v.is_array() && v.array && (v.array->element_type == ValueType::u8 || v.array->element_type == ValueType::i8);
    if (bytes) return;
    out.push_back({LoadProblem::bad_vocabulary, LoadSubject::key, charsmap->key, charsmap->key_range.offset,
                   "invalid gguf type for " + charsmap->key + " (llama.cpp reads it as an INT8 or UINT8 array of bytes)",
                   "store the charsmap's bytes as a UINT8 array (convert_hf_to_gguf.py writes it so)"});
}

// The vocabulary's token count as llama.cpp takes it: for a "none" or "no_vocab" tokenizer
// <arch>.vocab_size, else 0 (the token list is never read); otherwise the tokenizer.ggml.tokens
// array, or <arch>.vocab_size for a file without one; nullopt when the file has neither.
std::optional<uint64_t> vocabulary_size(const Model& model, const std::string& arch) {
    const std::optional<std::string> kind = model.get_string("tokenizer.ggml.model");
    if (kind == "no_vocab" || kind == "none") return model.get_uint(arch + ".vocab_size").value_or(0);
    if (const MetadataEntry* tokens = model.find("tokenizer.ggml.tokens"))
        return tokens->value.is_array() && tokens->value.array ? std::optional<uint64_t>(tokens->value.array->count) : std::nullopt;
    return model.get_uint(arch + ".vocab_size");
}

// Tensors whose last dimension the loader gives as the vocabulary size, in file order.
void check_vocabulary_rows(const Model& model, const LlamaArchRequirements& req, std::vector<LoadReason>& out) {
    const auto n_vocab = vocabulary_size(model, req.name);
    if (!n_vocab) return;
    for (const TensorInfo& t : model.tensors) {
        // ggml pads shapes with 1s: a stored trailing 1 is no dimension of its own.
        size_t dims = t.ne.size();
        while (dims > 1 && t.ne[dims - 1] == 1) --dims;
        if (dims == 0 || t.ne[dims - 1] == *n_vocab) continue;
        const bool vocab_rows = std::any_of(req.tensors.begin(), req.tensors.end(), [&](const LlamaTensorNeed& need) {
            return need.vocab_rows && tensor_name_matches(need.name, t.name);
        });
        if (!vocab_rows) continue;
        out.push_back(tensor_reason(LoadProblem::wrong_shape, t,
                                    "tensor '" + t.name + "' has wrong shape: its last dimension is " + std::to_string(t.ne[dims - 1]) +
                                        ", the vocabulary's token count (" + std::to_string(*n_vocab) + ") is expected",
                                    "the vocabulary arrays (tokenizer.ggml.*) and the tensor disagree: one of them was cut or padded without "
                                    "the other"));
    }
}

// Tensors whose first dimension the loader gives as n_embd (LlamaTensorNeed::embd_cols), against
// the embedding length the loader reads (embd_key), in file order; only for tensors the loader
// creates when the file has them (required or optional ones).
void check_embedding_cols(const Model& model, const LlamaArchRequirements& req, std::vector<LoadReason>& out) {
    if (!*req.embd_key) return;
    const std::optional<uint64_t> n_embd = model.get_uint(req.embd_key);
    if (!n_embd) return;
    for (const TensorInfo& t : model.tensors) {
        if (t.ne.empty() || t.ne[0] == *n_embd) continue;
        const bool embd_cols = std::any_of(req.tensors.begin(), req.tensors.end(), [&](const LlamaTensorNeed& need) {
            return need.embd_cols && need.need != Need::conditional && tensor_name_matches(need.name, t.name);
        });
        if (!embd_cols) continue;
        out.push_back(tensor_reason(LoadProblem::wrong_shape, t,
                                    "tensor '" + t.name + "' has wrong shape: its first dimension is " + std::to_string(t.ne[0]) +
                                        ", the embedding length (" + req.embd_key + " = " + std::to_string(*n_embd) + ") is expected",
                                    std::string(req.embd_key) + " and the tensors disagree: one was changed without the other"));
    }
}

// Conditional per-layer tensors present in some layers and absent in others.
void check_uneven_layers(const Model& model, const LlamaArchRequirements& req, uint64_t n_main, uint64_t n_all, std::vector<LoadReason>& out) {
    for (const LlamaTensorNeed& need : req.tensors) {
        if (need.need != Need::conditional || (need.layers != LayerSpan::main && need.layers != LayerSpan::all)) continue;
        const uint64_t layers = need.layers == LayerSpan::main ? n_main : n_all;
        std::optional<uint64_t> first_absent;
        bool any_present = false;
        for (uint64_t l = 0; l < layers; ++l) {
            if (model.find_tensor(layer_name(need.name, l)))
                any_present = true;
            else if (!first_absent)
                first_absent = l;
        }
        if (!any_present || !first_absent) continue;
        const std::string name = layer_name(need.name, *first_absent);
        out.push_back({LoadProblem::uneven_tensor, LoadSubject::tensor, name, std::nullopt,
                       "tensor '" + name + "' is absent although other layers have it; the " + req.name +
                           " loader creates it under a condition not decided here, and llama.cpp refuses the file if it asks for it",
                       "check that the file is complete"});
    }
}

void check_tensors(const Model& model, const LlamaArchRequirements& req, std::vector<LoadReason>& out, std::vector<LoadReason>& warnings) {
    const uint64_t n_all = model.get_uint(std::string(req.name) + ".block_count").value_or(0);
    const uint64_t nextn = model.get_uint(std::string(req.name) + ".nextn_predict_layers").value_or(0);
    const uint64_t n_main = n_all > nextn ? n_all - nextn : 0;
    for (const LlamaTensorNeed& need : req.tensors) {
        if (need.need != Need::required) continue;
        const uint64_t layers = need.layers == LayerSpan::none ? 1 : need.layers == LayerSpan::main ? n_main : n_all;
        for (uint64_t l = 0; l < layers; ++l) {
            const std::string name = need.layers == LayerSpan::none ? std::string(need.name) : layer_name(need.name, l);
            if (!model.find_tensor(name))
                out.push_back({LoadProblem::missing_tensor, LoadSubject::tensor, name, std::nullopt, "tensor '" + name + "' not found",
                               "the " + std::string(req.name) + " loader requires it in every file: the file is incomplete or its converter named it differently"});
        }
    }
    check_vocabulary_rows(model, req, out);
    check_embedding_cols(model, req, out);
    check_uneven_layers(model, req, n_main, n_all, warnings);
    if (!req.tensors_complete) return;
    // Tensors the loader never creates, one reason per leading name part ("v", "mm", "blk"), so a
    // vision tower in the file is one reason, not hundreds.
    std::vector<std::pair<std::string, std::vector<const TensorInfo*>>> extra;
    for (const TensorInfo& t : model.tensors) {
        const bool created = std::any_of(req.tensors.begin(), req.tensors.end(), [&](const LlamaTensorNeed& need) {
            uint64_t layer = 0;
            if (!tensor_name_matches(need.name, t.name, &layer)) return false;
            return std::string_view(need.name).find("%d") == std::string_view::npos || layer < n_all;
        });
        if (created) continue;
        const std::string part = t.name.substr(0, t.name.find('.'));
        auto group = std::find_if(extra.begin(), extra.end(), [&](const auto& g) { return g.first == part; });
        if (group == extra.end()) group = extra.insert(extra.end(), {part, {}});
        group->second.push_back(&t);
    }
    for (const auto& [part, tensors] : extra) {
        const TensorInfo& first = *tensors.front();
        const std::string what = tensors.size() == 1 ? "tensor '" + first.name + "' is"
                                                     : std::to_string(tensors.size()) + " tensors named " + part + ".* (first '" + first.name + "') are";
        out.push_back(tensor_reason(LoadProblem::extra_tensor, first,
                                    what + " not created by the " + req.name + " loader: llama.cpp counts them and stops with \"wrong number of tensors\"",
                                    "remove them (they belong to another architecture or to a separate file, e.g. an mmproj)"));
    }
}

// Architecture, keys, asserts and tensors: what the loader checks once the GGUF parsed.
void check_loader(const Model& model, std::vector<LoadReason>& reasons, std::vector<LoadReason>& warnings) {
    const MetadataEntry* arch_entry = model.find("general.architecture");
    if (!arch_entry || !arch_entry->value.is_string()) {
        reasons.push_back({LoadProblem::no_architecture, LoadSubject::key, "general.architecture", std::nullopt,
                           "key not found in model: general.architecture", "the file is not a model llama.cpp can load without it"});
        return;
    }
    const std::string arch = arch_entry->value.string_value(256);
    const LlamaArchRequirements* req = find_llama_arch(arch);
    if (!req) {
        auto near = nearest_name(arch, known_arch_names());
        reasons.push_back({LoadProblem::unknown_architecture, LoadSubject::key, "general.architecture", arch_entry->key_range.offset,
                           "unknown model architecture: '" + arch + "'",
                           near ? "the closest architecture the linked llama.cpp knows is '" + *near + "'" : std::string()});
        return;
    }
    if (!*req->loader) {
        reasons.push_back({LoadProblem::unsupported_architecture, LoadSubject::key, "general.architecture", arch_entry->key_range.offset,
                           "unsupported model architecture: '" + arch + "'", {}});
        return;
    }
    for (const LlamaKeyNeed& k : req->keys)
        if (k.need == Need::required && !model.find(k.key))
            reasons.push_back({LoadProblem::missing_key, LoadSubject::key, k.key, std::nullopt, std::string("key not found in model: ") + k.key,
                               usual_source(k.key, arch)});
    check_asserts(model, arch, reasons, warnings);
    check_vocabulary(model, reasons);
    check_tensors(model, *req, reasons, warnings);
}

// The text side of the compat plan applied: metadata and the tensors the loader sees.
Model rewritten_model(const Model& model, const compat::SidePlan& plan) {
    const compat::UpstreamView view = compat::upstream_view(model, plan);
    Model out;
    out.format = Format::gguf;
    for (const compat::ResultKv& kv : view.metadata) {
        MetadataEntry e;
        e.key = kv.key;
        e.value = kv.value;
        out.metadata.push_back(std::move(e));
    }
    for (const compat::ResultTensor& t : view.tensors) {
        if (t.hidden) continue;
        TensorInfo info;
        info.name = t.name;
        info.type = t.type;
        info.ne = t.ne;
        info.n_elements = t.n_elements;
        out.tensors.push_back(std::move(info));
    }
    return out;
}

// What to do about split keys that do not fit the parts.
constexpr const char* kSplitFix = "llama-gguf-split writes the split keys and names the parts: split the model again with it";

// The split keys' types, as llama.cpp reads them: split.count and split.no UINT16,
// split.tensors.count INT32; another type is refused.
std::optional<LoadReason> split_key_type_reason(const Model& model) {
    for (const auto& [key, type] : {std::pair{"split.count", ValueType::u16}, std::pair{"split.no", ValueType::u16},
                                    std::pair{"split.tensors.count", ValueType::i32}})
        if (const MetadataEntry* e = model.find(key); e && e->value.type != type)
            return LoadReason{LoadProblem::split_mismatch,
                              LoadSubject::key,
                              key,
                              std::nullopt,
                              std::string("key ") + key + " has wrong type " + gguf_type_name(static_cast<gguf_type>(e->value.type)) +
                                  " but expected type " + gguf_type_name(static_cast<gguf_type>(type)),
                              kSplitFix};
    return std::nullopt;
}

LoadReason split_reason(std::string key, std::string text) {
    return LoadReason{LoadProblem::split_mismatch, LoadSubject::key, std::move(key), std::nullopt, std::move(text), kSplitFix};
}

// The first part's split keys against its name, checked before llama.cpp looks for the other parts.
std::optional<LoadReason> split_first_part_reason(const Model& model, uint64_t count) {
    const std::string& first = model.files[0].path;
    const std::optional<uint64_t> no = model.get_uint("split.no");
    if (!no) return split_reason("split.no", "key not found in model: split.no");
    if (*no != 0)
        return split_reason("split.no",
                            "illegal split file idx: " + std::to_string(*no) + " (file: " + escape_for_display(first) +
                                "), model must be loaded with the first split");
    char postfix[64];
    std::snprintf(postfix, sizeof postfix, "-%05d-of-%05llu.gguf", 1, static_cast<unsigned long long>(count));
    if (first.size() <= std::strlen(postfix) || !first.ends_with(postfix))
        return split_reason("split.count",
                            "invalid split file name: " + escape_for_display(first) + " (split.count " + std::to_string(count) +
                                " asks for a name ending in " + postfix + ")");
    return std::nullopt;
}

// The parts read against each other and split.tensors.count, checked after every part is read.
std::optional<LoadReason> split_parts_reason(const Model& model) {
    // Each later part says it is the part its place is (gguf_get_val_u16 asserts the type).
    for (uint32_t k = 1; k < model.files.size(); ++k) {
        const SourceFile& part = model.files[k];
        const std::string path = escape_for_display(part.path);
        if (!part.own_split_no) return split_reason("split.no", "missing key split.no in GGUF split " + path);
        if (part.own_split_no->type != ValueType::u16)
            return split_reason("split.no",
                                "split.no of " + path + " is " + gguf_type_name(static_cast<gguf_type>(part.own_split_no->type)) +
                                    ", not u16: llama.cpp aborts on it (GGML_ASSERT in gguf_get_val_u16)");
        if (part.own_split_no->scalar.as_uint() != k)
            return split_reason("split.no",
                                "invalid split file idx: " + std::to_string(part.own_split_no->scalar.as_uint()) + " (file: " + path +
                                    "), expected " + std::to_string(k));
    }
    // A name in two parts (each part's own are the reader's E_DUPLICATE_TENSOR).
    std::set<std::string_view> seen;
    for (const TensorInfo& t : model.tensors)
        if (!seen.insert(t.name).second) return split_reason("split.count", "invalid model: tensor '" + t.name + "' is duplicated");
    const MetadataEntry* declared = model.find("split.tensors.count");
    if (!declared) return split_reason("split.tensors.count", "key not found in model: split.tensors.count");
    const int64_t expected = declared->value.scalar.as_int();
    if (expected != static_cast<int64_t>(model.tensors.size()))
        return split_reason(
            "split.tensors.count",
            "corrupted model: " + std::to_string(expected) + " tensors expected but " + std::to_string(model.tensors.size()) + " found");
    return std::nullopt;
}

// What stops llama.cpp before it reads a split model's header: given by a later part, split keys
// of the wrong type or against the first part's name, parts missing, parts that do not add up
// (the contract). Empty for a model whose split.count is absent or 1 (llama.cpp reads its first
// file alone: assess_loadability judges that file).
std::vector<LoadReason> split_reasons(const Model& model) {
    std::vector<LoadReason> out;
    if (model.opened_file > 0 && model.opened_file < model.files.size()) {
        const std::string count = std::to_string(model.files.size());
        out.push_back({LoadProblem::later_split_part, LoadSubject::file, "split.no", std::nullopt,
                       "given by part " + std::to_string(model.opened_file + 1) + " of " + count +
                           ": llama.cpp loads a split model from its first part only (\"model must be loaded with the first split\")",
                       "give llama.cpp the first part, " + escape_for_display(model.files[0].path)});
        return out;
    }
    if (std::optional<LoadReason> r = split_key_type_reason(model)) return {std::move(*r)};
    const uint64_t count = model.get_uint("split.count").value_or(0);
    if (count <= 1 || model.files.empty()) return out;
    if (std::optional<LoadReason> r = split_first_part_reason(model, count)) return {std::move(*r)};
    for (uint32_t file : model.missing_files()) {
        const auto said = std::find_if(model.diagnostics.begin(), model.diagnostics.end(),
                                       [&](const Diagnostic& d) { return d.code == ErrorCode::E_SPLIT_MISSING && d.file == file; });
        std::string text = said != model.diagnostics.end() ? said->message
                                                           : "part " + std::to_string(file + 1) + " of " +
                std::to_string(model.files.size()) + " (" + escape_for_display(model.files[file].path) + ") is missing";
        out.push_back({LoadProblem::missing_split_part, LoadSubject::file, "split", std::nullopt, std::move(text),
                       "put every part of the split model beside the first: llama.cpp reads them all"});
    }
    if (out.empty())
        if (std::optional<LoadReason> r = split_parts_reason(model)) out.push_back(std::move(*r));
    return out;
}

// The first file of a model joined from parts by their names, alone: what llama.cpp reads when
// the first part's split.count is absent or 1.
// A key, else a tensor name, the file gives twice (the reader's diagnostic, at the second):
// gguf_init refuses the file at the first. The reason names the key or the tensor.
std::optional<LoadReason> duplicate_name(const Model& model) {
    for (ErrorCode code : {ErrorCode::E_DUPLICATE_KEY, ErrorCode::E_DUPLICATE_TENSOR})
        for (const Diagnostic& d : model.diagnostics) {
            if (d.code != code) continue;
            const bool key = code == ErrorCode::E_DUPLICATE_KEY;
            // The reader says it as "\"NAME\" appears more than once", NAME escaped for display:
            // the name of a key or tensor of any part, whose metadata may not be kept.
            const size_t open = d.message.find('"'), close = d.message.rfind("\" appears");
            const std::string name = open == 0 && close != std::string::npos && close > open ? d.message.substr(1, close - 1) : d.field;
            const std::string part = model.files.size() > 1 ? " in part " + std::to_string(d.file + 1) : std::string();
            return LoadReason{LoadProblem::duplicate_name,
                              key ? LoadSubject::key : LoadSubject::tensor,
                              name,
                              d.offset,
                              std::string(key ? "key '" : "tensor '") + name + "' appears more than once" + part +
                                  ": llama.cpp refuses the file (\"duplicate " + (key ? "key" : "tensor name") + "\")",
                              "the writer gave the name twice: write the file again, keeping one of them"};
        }
    return std::nullopt;
}

// A header that did not parse to its end: gguf_init stops where our reader stopped.
LoadReason damaged_header(const Model& model) {
    for (const Diagnostic& d : model.diagnostics)
        if (d.severity == Severity::error)
            return {LoadProblem::damaged_header, LoadSubject::file, d.field, d.offset, d.message, "the file is damaged or cut short: get it again"};
    return {LoadProblem::damaged_header, LoadSubject::file, "", std::nullopt, "the GGUF header did not parse to its end", "get the file again"};
}

Loadability not_gguf(const Model& model) {
    Loadability l;
    l.verdict = LoadVerdict::does_not_load;
    const std::string hf = hf_architecture_class(model);
    std::string text = std::string("llama.cpp loads only GGUF files; this is ") + format_name(model.format);
    std::string fix;
    if (hf.empty() && !model.files.empty() && is_blob_file_name(base_name(model.files[0].path))) {
        // A store's tensor blob read alone: its config is in the store, beside the manifest.
        fix = "open its model in the store (mlens show NAME), which has its config, and get it out with mlens export";
    } else if (hf.empty()) {
        fix =
            "convert its folder with convert_hf_to_gguf.py, which reads the config.json beside the weights (open the folder "
            "here to see what it names)";
    } else if (converter_knows_hf_class(hf)) {
        text += "; the pinned converter knows " + hf;
        fix = "convert it with the pinned llama.cpp's convert_hf_to_gguf.py";
    } else {
        text += "; the pinned converter does not know " + hf;
        fix = "no converter of the pinned llama.cpp registers " + hf + ": a newer llama.cpp may";
    }
    l.reasons.push_back({LoadProblem::not_gguf, LoadSubject::file, "", std::nullopt, std::move(text), std::move(fix)});
    return l;
}

}  // namespace

const char* load_verdict_name(LoadVerdict v) { return name_of(kVerdictNames, v); }
const char* load_problem_name(LoadProblem p) { return name_of(kProblemNames, p); }
const char* load_subject_name(LoadSubject s) { return name_of(kSubjectNames, s); }

std::string Loadability::summary() const {
    switch (verdict) {
        case LoadVerdict::loads:
            return "loads in " + llama_cpp_version();
        case LoadVerdict::loads_after_compat:
            return "loads only after the compat rewrite (Ollama's shim does it; mlens export-upstream writes an upstream file)";
        case LoadVerdict::does_not_load:
            break;
    }
    std::string s = "does not load: " + (reasons.empty() ? std::string("no reason recorded") : reasons.front().text);
    if (reasons.size() > 1) s += " (and " + std::to_string(reasons.size() - 1) + " more)";
    return s;
}

nlohmann::json loadability_json(const Loadability& l) {
    auto reasons = [](const std::vector<LoadReason>& list) {
        nlohmann::json out = nlohmann::json::array();
        for (const LoadReason& r : list) {
            auto optional_text = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
            out.push_back({{"problem", load_problem_name(r.problem)},
                           {"subject", load_subject_name(r.subject)},
                           {"name", optional_text(r.name)},
                           {"offset", r.offset ? nlohmann::json(*r.offset) : nlohmann::json(nullptr)},
                           {"text", r.text},
                           {"fix", optional_text(r.fix)}});
        }
        return out;
    };
    return {{"verdict", load_verdict_name(l.verdict)}, {"summary", l.summary()}, {"reasons", reasons(l.reasons)}, {"warnings", reasons(l.warnings)}};
}

std::optional<Loadability> loadability_from_json(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("verdict") || !j["verdict"].is_string()) return std::nullopt;
    const std::optional<LoadVerdict> verdict = value_of(kVerdictNames, j["verdict"].get<std::string>());
    if (!verdict) return std::nullopt;
    auto reasons = [](const nlohmann::json& list, std::vector<LoadReason>& out) {
        if (!list.is_array()) return false;
        for (const nlohmann::json& r : list) {
            if (!r.is_object()) return false;
            auto text_of = [&](const char* key, bool may_be_null, std::string& into) {
                const auto it = r.find(key);
                if (it == r.end()) return false;
                if (it->is_null()) return may_be_null;
                if (!it->is_string()) return false;
                into = it->get<std::string>();
                return true;
            };
            LoadReason reason;
            std::string problem, subject;
            if (!text_of("problem", false, problem) || !text_of("subject", false, subject) || !text_of("name", true, reason.name) ||
                !text_of("text", false, reason.text) || !text_of("fix", true, reason.fix))
                return false;
            const auto p = value_of(kProblemNames, problem);
            const auto s = value_of(kSubjectNames, subject);
            const auto offset = r.find("offset");
            if (!p || !s || offset == r.end() || !(offset->is_null() || offset->is_number_unsigned())) return false;
            reason.problem = *p;
            reason.subject = *s;
            if (!offset->is_null()) reason.offset = offset->get<uint64_t>();
            out.push_back(std::move(reason));
        }
        return true;
    };
    Loadability l;
    l.verdict = *verdict;
    if (!j.contains("reasons") || !j.contains("warnings") || !reasons(j["reasons"], l.reasons) || !reasons(j["warnings"], l.warnings))
        return std::nullopt;
    return l;
}

std::string Loadability::label() const {
    if (verdict == LoadVerdict::loads) return "loads";
    if (verdict == LoadVerdict::loads_after_compat) return "after compat";
    return std::string("no: ") + (reasons.empty() ? "unknown" : load_problem_name(reasons.front().problem));
}

namespace {

// The verdict on a GGUF model as read.
Loadability assess_as_read(const Model& model) {
    Loadability l;
    l.reasons = split_reasons(model);
    if (!l.reasons.empty()) {
        l.verdict = LoadVerdict::does_not_load;
        return l;
    }
    if (model.partial) {
        l.verdict = LoadVerdict::does_not_load;
        l.reasons.push_back(damaged_header(model));
        return l;
    }
    if (std::optional<LoadReason> twice = duplicate_name(model)) {
        l.verdict = LoadVerdict::does_not_load;
        l.reasons.push_back(std::move(*twice));
        return l;
    }
    for (uint32_t f = 0; f < model.files.size(); ++f) check_file_layout(model, f, l.reasons);
    if (!l.reasons.empty()) {
        l.verdict = LoadVerdict::does_not_load;  // gguf_init fails: the loader never runs
        return l;
    }
    check_loader(model, l.reasons, l.warnings);
    if (l.reasons.empty()) return l;
    l.verdict = LoadVerdict::does_not_load;
    const std::optional<compat::LoadRewrite> rewrite = compat::load_rewrite(model);
    if (!rewrite) return l;
    std::vector<LoadReason> after, after_warnings;
    check_loader(rewritten_model(model, rewrite->plan.text), after, after_warnings);
    if (!after.empty()) return l;
    l.verdict = LoadVerdict::loads_after_compat;
    l.warnings = std::move(after_warnings);
    for (LoadReason& r : l.reasons)
        r.fix = "Ollama's shim rewrites this when Ollama loads it; `mlens export-upstream FILE OUT.gguf` writes the rewritten file for llama.cpp";
    return l;
}

}  // namespace

Loadability assess_loadability(const Model& model) {
    if (model.format != Format::gguf) return not_gguf(model);
    Loadability l = assess_as_read(model);
    // A file named as a part that says it is no split model: the reader read it alone, as
    // llama.cpp does (gguf_split.h); the parts beside it are not read.
    const std::optional<SplitName> name = model.files.size() == 1 ? parse_split_name(model.files[0].path) : std::nullopt;
    if (name && name->count > 1 && says_no_split(model))
        l.warnings.insert(
            l.warnings.begin(),
            {LoadProblem::split_mismatch, LoadSubject::key, "split.count", std::nullopt,
             "the file is " + no_split_text(model, *name) + ": llama.cpp reads it alone, and the other parts beside it are not read",
             kSplitFix});
    return l;
}

}  // namespace mlens
