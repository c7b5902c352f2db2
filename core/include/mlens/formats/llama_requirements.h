// What the pinned llama.cpp requires of a GGUF to load it, generated at build time from its own
// sources by third_party/llama_requirements/generate_llama_requirements.py (never typed by hand; another
// llama.cpp is one rebuild with another MLENS_LLAMA_SOURCE). The generator fails the build when a
// source pattern it relies on finds nothing.
//
// Contract (what is generated, and how far it is decided statically):
//  - llama_arch_requirements(): every architecture name of llama-arch.cpp's LLM_ARCH_NAMES (the
//    LLM_ARCH_UNKNOWN placeholder left out), with the loader class llama_model_mapping creates for
//    it ("" when none: llama.cpp refuses the name as unsupported).
//  - keys: every metadata key the common reader (llama_model_base::load_hparams) and the class's
//    load_arch_hparams (or its base class's) read through get_key / get_arr / get_arr_n /
//    get_key_or_arr, with "%s" replaced by the architecture. required: read with required = true
//    outside any condition; optional: read with required = false; conditional: read inside an
//    if/else/switch/loop body, after an earlier conditional return, or in an expression with
//    || / && (a fallback) — whether it is needed depends on other values, so it is never claimed
//    missing. Conditions on the architecture alone (`arch == LLM_ARCH_X || ...`, and the
//    vocab_only load mode, off for a full load) are decided per architecture.
//  - tensors: every name the common load_tensors and the class's load_arch_tensors create with
//    create_tensor(tn(LLM_TENSOR_X, "suffix", i), ...), including those created through the
//    llama_model_base::create_tensor_* helpers. `%d` stands for the layer; layers is `main` when
//    created in `for (i = 0; i < n_layer; ...)` (block_count minus nextn_predict_layers), `all`
//    with n_layer_all, `none` for a tensor outside the layers; any other index makes the tensor
//    conditional with layers `some`. required: created with flags 0 (or only DUPLICATED /
//    ALLOW_RESHAPE) outside any condition; optional: TENSOR_NOT_REQUIRED or TENSOR_SKIP;
//    conditional: created under a condition the generator cannot decide (hyperparameters such as
//    n_expert, per-layer tests), so never claimed missing, but still a name the loader may create.
//    op: the ggml op the loader tests buffer types with for the weight (llama-arch.cpp's
//    LLM_TENSOR_INFOS; a ".bias" is GGML_OP_ADD, or GGML_OP_ADD_ID beside an expert matmul).
//    vocab_rows: the shape the loader gives the tensor ends in n_vocab (the vocabulary's token
//    count), written as such in the create_tensor call (`{n_embd, n_vocab}`); llama.cpp refuses a
//    tensor whose last dimension differs ("wrong shape").
//    embd_cols: every create_tensor call of the name gives its first dimension as n_embd, in a
//    body whose n_embd is hparams.n_embd (LLAMA_LOAD_LOCALS, or a local of that value), without
//    TENSOR_ALLOW_RESHAPE; embd_key names the key hparams.n_embd comes from, when it is read
//    unconditionally from that one key and never assigned otherwise ("" else): llama.cpp refuses
//    such a tensor whose first dimension differs from the key's value ("wrong shape").
//    tensors_complete is false when some create_tensor call of the loader does not name its
//    tensor through tn(LLM_TENSOR_...): then the list may lack names and no tensor of the file may
//    be called extra.
//  - linked_ggml_types(): the ggml type ids of ggml.h with their type_traits name, block size
//    (weights per block) and block bytes, evaluated by the compiler from ggml-common.h; ids whose
//    traits have no block size (removed types) are left out, so they are unknown.
//  - llama_assert_sites(): the GGML_ASSERTs of load_hparams, the CPU norm ops and ggml_mul_mat,
//    as written, with file:line (function). llama_graph_asserts(): each GGML_ASSERT of each graph
//    builder file (src/models/*.cpp) with the architectures whose loader class is defined there.
//  - converter_hf_classes(): the Hugging Face architecture classes convert_hf_to_gguf.py (and its
//    conversion/ modules) registers with @ModelBase.register, sorted.
//  - llama_tokenizer_models(): every tokenizer.ggml.model value llama_vocab::impl::load
//    (llama-vocab.cpp) knows, sorted (any other is its "unknown tokenizer"), each with whether its
//    branch refuses a file without tokenizer.ggml.merges ("cannot find tokenizer merges in model
//    file") and the tokenizer.ggml.pre value it lets go without them ("" for none).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace mlens {

enum class Need : uint8_t { required, optional, conditional };
enum class LayerSpan : uint8_t { none, main, all, some };

struct LlamaKeyNeed {
    const char* key;
    Need need;
};

struct LlamaTensorNeed {
    const char* name;  // "blk.%d.attn_q.weight", "token_embd.weight"
    Need need;
    LayerSpan layers;
    int op;  // ggml.h's enum ggml_op the loader picks the weight's buffer type with
    bool vocab_rows;  // its last dimension is the vocabulary size
    bool embd_cols;  // its first dimension is n_embd (hparams.n_embd) in every creation, none with TENSOR_ALLOW_RESHAPE
};

struct LlamaArchRequirements {
    const char* name;
    const char* loader;  // the llama_model_* class; "" when llama.cpp has none for the name
    bool tensors_complete;
    std::span<const LlamaKeyNeed> keys;
    std::span<const LlamaTensorNeed> tensors;
    const char* embd_key;  // the key hparams.n_embd is read from ("llama.embedding_length"); "" when not that alone
};

struct LlamaTokenizerModel {
    const char* name;  // "gpt2"
    bool needs_merges;
    const char* merges_exempt_pre;  // "kimi-k2"; "" for none
};

struct GgmlTypeFacts {
    uint32_t id;
    const char* name;  // ggml's type_name: "q4_K"
    uint64_t block_size;  // weights per block
    uint64_t type_size;  // bytes per block
};

struct LlamaAssertSite {
    const char* text;  // "GGML_ASSERT(eps >= 0.0f)"
    const char* where;  // "ggml/src/ggml-cpu/ops.cpp:3949 (ggml_compute_forward_rms_norm, at the first decode)"
};

struct GraphAssertArchs {
    const char* text;
    const char* file;  // "src/models/qwen2.cpp"
    std::span<const char* const> archs;
};

std::span<const LlamaArchRequirements> llama_arch_requirements();
std::span<const GgmlTypeFacts> linked_ggml_types();
std::span<const LlamaAssertSite> llama_assert_sites();
std::span<const GraphAssertArchs> llama_graph_asserts();
std::span<const char* const> converter_hf_classes();
std::span<const LlamaTokenizerModel> llama_tokenizer_models();

// Lookups over the tables above; null when absent.
const LlamaArchRequirements* find_llama_arch(std::string_view name);
const GgmlTypeFacts* find_linked_ggml_type(uint32_t id);
// The site of `text` whose `where` contains `function`; null when the source has none.
const LlamaAssertSite* find_llama_assert_site(std::string_view text, std::string_view function);
// The graph builder file of `arch` that holds the assert `text`; null when none does.
const char* graph_assert_file(std::string_view text, std::string_view arch);
bool converter_knows_hf_class(std::string_view hf_class);
// Whether `name` matches `pattern`, each "%d" standing for a decimal number; the number matched
// by the first "%d" goes to *layer when given.
bool tensor_name_matches(std::string_view pattern, std::string_view name, uint64_t* layer = nullptr);

}  // namespace mlens
