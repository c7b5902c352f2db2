// Quantization recipe: which type each tensor of a model got, as a layer × tensor-kind map, the
// keys that say how it was made, and the llama-quantize command that reproduces the mix.
//
// Contract:
//  - Every logical tensor is one cell: a tensor named with a block number (summary.h layer_of:
//    "blk.N.", "model.layers.N.", ...) goes to row N under its kind, the rest of its name
//    ("attn_q.weight"); any other tensor goes to `other` under its whole name. Kinds keep the
//    order they are first seen in; layers are ascending.
//  - provenance: general.quantized_by, general.file_type (with its llama_ftype name),
//    general.quantization_version and every quantize.* key (quantize.imatrix.file, .dataset,
//    .entries_count, .chunks_count), as displayed text, in file order.
//  - The command is `llama-quantize --pure [--imatrix FILE] [--token-embedding-type T]
//    [--output-tensor-type T] [--tensor-type PATTERN=T ...] IN OUT BASE`. --pure turns off
//    llama-quantize's own per-tensor mixing, so the types are exactly: a rule's type where one of
//    the patterns matches (first match wins), else BASE. BASE is the quantized ggml type held by
//    the most tensors of two or more dimensions (ties: the first seen); its ftype name is the
//    first of the type's ftype names in ggml_type_table.h: mostly the type's own name
//    (llama-quantize accepts Q3_K, Q4_K, Q5_K as aliases), MXFP4_MOE for MXFP4, IQ2_M for IQ2_S
//    (llama-quantize's IQ2_S makes IQ2_XS). A base no ftype produces (Q8_K, NVFP4: llama-quantize
//    refuses their names as ftypes) gives no command: ftype stays empty and no_command says why.
//    token_embd.weight and output.weight get their options only when their type differs from
//    BASE. Rules: per kind, the type most of its layers have (BASE on a tie) is one catch-all rule
//    (none when it is BASE), every other type one rule listing its layers; rules of one type over the same
//    layers are merged into one pattern over their kinds; layer-listing rules come before the
//    catch-alls. Tensors of one dimension and tensors stored unquantized (F32, F16, BF16) get no
//    rule: llama-quantize leaves one-dimensional tensors and the tensors it never quantizes as
//    the source has them. Other tensors outside the layers (besides token_embd and output) of a
//    type other than BASE get a rule of their exact name. Patterns are lowercase regexes
//    (llama-quantize lowercases them) anchored at both ends.
//  - A GGUF without quantized tensors of two or more dimensions takes as BASE the most common of
//    F16, BF16 and F32 among them (llama-quantize's F16, BF16 and F32 ftypes make such files).
//  - Any other model without quantized tensors of two or more dimensions has no command (empty base);
//    no_command says why: the per-tensor modes of MLX and Ollama tensor-blob tensors with how
//    many tensors each ("quantized per tensor (int4 g64 ×7, int8 g32 ×2), which llama-quantize
//    does not make"), else "no quantized tensors of two or more dimensions".
//  - recipe_runs reads the layer map as kind × layer ranges: per kind (in `kinds` order), each run
//    of consecutive layers holding the kind with one type and bits per weight is one RecipeRun; a
//    layer without the kind, a gap in the layer numbers or another type ends a run. short_kind
//    drops a kind's ".weight" ending ("attn_q.weight" -> "attn_q"); other kinds stay whole.
//  - recipe_difference lists the tensors present in both recipes whose types differ, in the first
//    recipe's order, then tensors present in only one (type "" on the missing side). Tensors pair
//    by name, B's names first taken through `b_to_a` (the renames a diff paired, B's name to A's:
//    renamed_pairs, model_diff.h), so that a tensor diff and the recipe difference of the same two
//    models pair the same tensors; a pair is listed under A's name.
//  - group_recipe_changes folds those changes into one group per tensor kind and change
//    (from → to), in the order first seen: a tensor with a block number (layer_of) counts under
//    the part of its name after that number ("attn_v.weight") with its layer listed; any other
//    under its whole name with no layers. `mlens diff` and the app's Diff view print these groups;
//    recipe_group_layers_text gives a group's layers as they read there ("layers 0, 1, 5"; "" when
//    it has none).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

struct RecipeCell {
    std::string tensor;  // full name
    size_t tensor_index = 0;  // into Model::tensors
    std::string type;  // "Q4_K", "F32", "int4 g64"
    double bits_per_weight = 0;
    uint32_t dims = 0;
};

struct RecipeLayerRow {
    uint32_t layer = 0;
    std::vector<std::optional<RecipeCell>> cells;  // one per kind (QuantRecipe::kinds)
};

struct QuantRecipe {
    std::vector<std::string> kinds;
    std::vector<RecipeLayerRow> layers;
    std::vector<RecipeCell> other;
    std::vector<std::pair<std::string, std::string>> provenance;  // key, value as text
    bool imatrix = false;  // a quantize.imatrix.* key is present
    std::string base;  // ggml type name, "" when nothing is quantized
    std::string ftype;  // llama-quantize's name for the base, "" when no ftype produces it
    std::string no_command;  // why there is no llama-quantize command ("" when there is one)
    std::string token_embedding_type, output_type;  // "" when BASE (or absent)
    std::vector<std::string> rules;  // "pattern=type" arguments of --tensor-type
    // The file's general.file_type when it is not FTYPE's own number: llama-quantize records the
    // ftype it ran with, and a file whose rows fell back to other types (a K-quant ftype on rows
    // shorter than 256 values) records the ftype asked for, not the one its types name. The
    // command restores it with --override-kv general.file_type=int:N, so the file comes out
    // byte for byte.
    std::optional<uint64_t> file_type_override;
};

QuantRecipe quant_recipe(const Model& model);

// The arguments after the program name; `imatrix` is passed when the recipe used one.
std::vector<std::string> llama_quantize_arguments(const QuantRecipe& recipe, const std::string& input, const std::string& output,
                                                  const std::string& imatrix = "IMATRIX");
// The command as one shell line (arguments quoted where a shell needs it); "" when there is none.
std::string llama_quantize_command(const QuantRecipe& recipe, const std::string& input = "MODEL-F32.gguf",
                                   const std::string& output = "OUT.gguf");

struct RecipeRun {
    std::string kind;
    uint32_t first_layer = 0, last_layer = 0;
    std::string type;
    double bits_per_weight = 0;
};
std::vector<RecipeRun> recipe_runs(const QuantRecipe& recipe);
std::string short_kind(std::string_view kind);

struct RecipeChange {
    std::string tensor;
    std::string from, to;  // "" where the tensor is missing
};
std::vector<RecipeChange> recipe_difference(const QuantRecipe& a, const QuantRecipe& b,
                                            const std::map<std::string, std::string>& b_to_a = {});

struct RecipeChangeGroup {
    std::string kind;  // "attn_v.weight", or a whole name outside the layers
    std::string from, to;  // "" where the tensors are missing
    std::vector<uint32_t> layers;  // ascending as found; empty outside the layers
};
std::vector<RecipeChangeGroup> group_recipe_changes(const std::vector<RecipeChange>& changes);
std::string recipe_group_layers_text(const RecipeChangeGroup& group);

}  // namespace mlens
