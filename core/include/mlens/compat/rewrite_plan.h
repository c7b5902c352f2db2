// RewritePlan: what Ollama's llama.cpp compatibility shim (spec/ollama-compat.md §1) would do to
// a Model, as data. One plan feeds both the side-by-side view and the upstream GGUF exporter.
//
// Contract:
//  - plan_compat(model) never fails and never reads tensor data; it reads metadata (arrays
//    included) only. It produces two independent sides: `text` (what llama.cpp's text loader
//    sees after translate_metadata) and `clip` (what the mmproj loader sees after
//    translate_clip_metadata, computed from the *original* metadata, like the shim's second open).
//  - Each side is a replay log. Applying `kv_edits` in order to the stored metadata list gives the
//    resulting metadata in the resulting order: set = remove + append (an overwritten key moves to
//    the end, like current ggml gguf.cpp), inject and copy append, remove removes. Applying
//    `tensor_edits` in order to the stored tensor list gives the resulting names, types and
//    shapes; tensor order never changes (ggml context slots). upstream_view() does that replay.
//  - Tensors are identified by their slot: the index into Model::tensors. Data ops name their
//    destination slot and their source slots; sources are read as stored (the shim captures file
//    offsets before renames). A resulting tensor without a data op reads the first
//    nbytes(type, ne) of its slot's stored data (gemma3n's token_embd row truncation relies on this).
//  - Hidden tensors (text side only) are the ones whose *final* name starts with a skip prefix;
//    the planner records one `hide` edit per such tensor, naming the rule that registered the
//    prefix, after all handlers ran. The clip side hides nothing (its loader simply does not ask
//    for tensors it does not know).
//  - Every edit names the handler that made it (`rule`, e.g. "handle_gemma3") and carries a
//    colouring kind. `note` explains anything non-obvious, and every AMBIGUOUS choice of the spec
//    is stated there (prefixed "AMBIGUOUS:") so the UI can show it.
//  - `checks` records every handler the dispatch considered and why it fired or not, so a
//    non-Ollama file gives an empty plan that says what was checked.
//  - Where upstream would abort or log an error (e.g. a malformed snowflake charsmap), the plan
//    records an `issues` entry and leaves the affected edit out.
//  - SidePlan::counts() counts a side's edits by kind (indexed by EditKind): its KV and tensor
//    edits by their own kind, plus every data op under data_op. `mlens compat` and the Compat
//    panel both show these counts.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/model/model.h"
#include "mlens/model/value.h"

namespace mlens::compat {

enum class PlanSide { text, clip };
const char* plan_side_name(PlanSide s);  // "text", "clip"

// How an edit is coloured in the side-by-side view.
enum class EditKind {
    injected,  // a key that did not exist (inject, copy, set of an absent key)
    changed,  // an existing key overwritten (value or type; it also moves to the end)
    removed,  // a key removed
    renamed,  // a tensor renamed
    hidden,  // a tensor hidden from the text loader
    retyped,  // a tensor's type and/or shape changed
    data_op,  // a tensor's bytes are produced by a data operation
};
const char* edit_kind_name(EditKind k);  // "injected", "changed", ..., "data op"

// Every kind, in EditKind order (the order counts and legends list them).
inline constexpr std::array<EditKind, 7> kEditKinds = {EditKind::injected, EditKind::changed, EditKind::removed, EditKind::renamed,
                                                       EditKind::hidden,   EditKind::retyped, EditKind::data_op};
// Edits per kind, indexed by EditKind.
using EditCounts = std::array<size_t, kEditKinds.size()>;

enum class KvOp { set, copy, inject, remove };
const char* kv_op_name(KvOp op);

struct KvEdit {
    KvOp op = KvOp::set;
    EditKind kind = EditKind::changed;
    std::string key;
    std::string source_key;  // copy: the key the value came from
    Value value;  // resulting type and value (unused for remove)
    std::optional<Value> previous;  // the value the key had before this edit, if any
    std::string rule;
    std::string note;
};

enum class TensorOp { rename, hide, retype, reshape };
const char* tensor_op_name(TensorOp op);

struct TensorEdit {
    TensorOp op = TensorOp::rename;
    EditKind kind = EditKind::renamed;
    size_t slot = 0;  // index into Model::tensors
    std::string name;  // the tensor's name when the edit was made
    std::string new_name;  // rename
    uint32_t new_type = 0;  // retype: ggml type id
    std::vector<uint64_t> new_ne;  // reshape: GGUF order, unlisted dims dropped
    std::string rule;
    std::string note;
};

enum class DataOpKind {
    byte_concat,  // dest = stored bytes of sources[0] ‖ sources[1] ‖ … (all of dest's type)
    concat_to_f32,  // each source dequantized to F32 (F32 copied), concatenated
    f16_to_f32,  // sources[0] is F16; converted element-wise
    dequant_to_f32,  // sources[0] of any type dequantized; element order unchanged
    norm_plus_one,  // sources[0] dequantized to F32, +1.0 added to every element
    interleave_experts,  // sources {gate, up}; for e < params[0] (n_expert): gate bytes of e, up bytes of e
    rope_permute_rows,  // sources[0] F16; params[0] = n_head; out row oa = src row h*hd + p*hd/2 + d
    zero_fill,  // no sources; all zero bytes
    patch_split,  // sources[0] F16 [W,H,T,C_out*C_in] → F32 [W,H,C_in,C_out]; params {slice, T, C_in}
    pos_embd_resample,  // sources[0] any type → F32 [E, T*T] bilinear; params {E, P, T, layout}
};
const char* data_op_name(DataOpKind k);

struct DataOp {
    DataOpKind op = DataOpKind::byte_concat;
    size_t dest = 0;  // slot whose resulting tensor this op fills
    std::vector<size_t> sources;  // slots read as stored
    uint32_t dest_type = 0;  // resulting ggml type of dest
    std::vector<uint64_t> dest_ne;  // resulting shape of dest
    std::vector<int64_t> params;  // kind-specific, documented on DataOpKind
    std::string rule;
    std::string note;
};

// A handler the dispatch considered: did it fire, and which marker decided.
struct DetectionCheck {
    std::string rule;  // e.g. "handle_gemma3"
    std::string arch;  // the arch name it is gated on
    bool fired = false;
    std::string detail;  // e.g. "marker: tensor prefix v.", "arch is llama"
};

struct SkipPrefix {
    std::string prefix;
    std::string rule;
};

struct PlanIssue {
    std::string rule;
    std::string message;
};

struct SidePlan {
    PlanSide side = PlanSide::text;
    std::string arch_before;  // general.architecture as stored
    std::string arch_after;  // the loader's arch after translation
    std::vector<KvEdit> kv_edits;
    std::vector<TensorEdit> tensor_edits;
    std::vector<DataOp> data_ops;
    std::vector<SkipPrefix> skip_prefixes;  // text side
    std::vector<DetectionCheck> checks;
    std::vector<PlanIssue> issues;
    std::vector<std::string> handlers;  // handlers that fired, in order
    bool no_mmap = false;  // text side: translate_metadata would return true
    std::string no_mmap_rule;

    bool empty() const { return kv_edits.empty() && tensor_edits.empty() && data_ops.empty(); }
    EditCounts counts() const;
    // "no handler fired; checked: handle_llama3_metadata (…), …" or the handlers that fired.
    std::string summary() const;
};

struct RewritePlan {
    SidePlan text;
    SidePlan clip;
    // Why the shim never sees this model, empty for a GGUF: it rewrites GGUF files as llama.cpp
    // loads them, so a safetensors model is "not a GGUF model (safetensors)" and has no sides.
    std::string not_applicable;
    bool empty() const { return text.empty() && clip.empty(); }
};

// Builds both sides for a GGUF Model (any other format gives two empty sides with one check
// saying why, and the same reason in not_applicable).
RewritePlan plan_compat(const Model& model);

// The upstream-shaped result of one side.
struct ResultKv {
    std::string key;
    Value value;
    std::optional<size_t> stored;  // index into Model::metadata when the entry is the stored one, untouched
    std::optional<size_t> edit;  // index into SidePlan::kv_edits of the edit that produced it
};

struct ResultTensor {
    size_t slot = 0;  // index into Model::tensors
    std::string name;  // resulting name
    StorageType type;  // resulting type
    std::vector<uint64_t> ne;  // resulting shape
    uint64_t n_elements = 0;
    std::optional<uint64_t> n_bytes;  // nbytes(type, ne) when the type is known
    bool hidden = false;  // text side: skipped by the loader (exporter leaves it out)
    std::optional<size_t> data_op;  // index into SidePlan::data_ops
    std::vector<size_t> edits;  // indices into SidePlan::tensor_edits touching this slot
};

struct UpstreamView {
    PlanSide side = PlanSide::text;
    std::string architecture;  // resulting general.architecture
    std::vector<ResultKv> metadata;  // in resulting order
    std::vector<ResultTensor> tensors;  // in slot order (hidden ones included, flagged)
};

UpstreamView upstream_view(const Model& model, const SidePlan& plan);

}  // namespace mlens::compat
