// CompatRows: what the Compat panel shows of a RewritePlan — for each side (text loader, clip
// loader) the stored file and the upstream view as aligned rows, plus counts — computed once per
// document on a worker thread so the panel only filters and draws.
//
// Contract:
//  - build_compat_view(model) runs plan_compat, detect_ollama_origin and upstream_view for both
//    sides. Progress: 0.5 after the plan, 1 when done; a cancelled job stops early with
//    E_CANCELLED.
//  - Metadata rows: every stored key in file order (left: key, type, value), its right side the
//    key's resulting type and value, or empty when removed; then every key the plan created, in
//    resulting order, with an empty left side. Keys keep their row when an overwrite moves them to
//    the end of the resulting list (the note says so).
//  - Tensor rows: one per slot in slot order; left the stored name, type and shape, right the
//    resulting ones; a hidden tensor's right value is "hidden" (skipped by the text loader).
//  - A row lists the kinds of every edit touching it (and `data_op` when a data op fills it);
//    `kind` is the one it is coloured by: hidden, else data op, else retyped, else renamed for
//    tensors; for keys the kind of the edit that produced the result (removed when it is gone).
//    Rows without edits are unchanged (no kinds).
//  - `rule` joins "handler: op …" of each edit touching the row, in plan order, and `action` the
//    same parts without the handlers' names ("set"; a key the plan copies from a stored key K has
//    `copied_from` K and the action "copy"); `note` joins their
//    notes (and last "moved to the end of the key list" for a stored key an overwrite moved);
//    `ambiguous` is set when a note starts with "AMBIGUOUS:".
//  - Every text comes from the file or the plan and is escaped (values as format_value renders
//    them: arrays as type, count and first items).
//  - counts: the side plan's counts() (rewrite_plan.h), as `mlens compat` shows them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/compat/ollama_origin.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

struct CompatRow {
    std::optional<size_t> stored;  // index into Model::metadata / Model::tensors
    std::optional<compat::EditKind> kind;  // colour; none when unchanged
    uint8_t kinds = 0;  // bit (1 << EditKind) per kind touching the row
    std::string left_name, left_type, left_value;  // left_name empty: absent as stored
    std::string right_name, right_type, right_value;  // right_name empty: absent in the upstream view
    bool hidden = false;  // tensor hidden from the text loader
    std::string rule;
    std::string action;  // the rule's operations without the handlers' names
    std::string copied_from;  // a created key copied from a stored key: that key, escaped
    std::string note;
    bool ambiguous = false;
    bool changed() const { return kinds != 0; }
    bool has(compat::EditKind k) const { return kinds & (1u << static_cast<unsigned>(k)); }
};

struct CompatSide {
    compat::PlanSide side = compat::PlanSide::text;
    std::vector<CompatRow> metadata;
    std::vector<CompatRow> tensors;
    compat::EditCounts counts{};
    bool empty = true;  // the plan changes nothing on this side
    std::string summary;  // the plan's summary(), escaped
    std::string arch_before, arch_after;  // escaped
};

struct CompatView {
    compat::RewritePlan plan;
    compat::OllamaOrigin origin;  // whether Ollama made the file, on evidence only
    CompatSide text;
    CompatSide clip;
    bool vision_export = false;  // has_vision_export(): an mmproj can be written
};

Result<CompatView> build_compat_view(const Model& model, JobContext* job = nullptr);

// "+", "~", "−", "→", "⊘", "⇄", "ƒ": the marker drawn for a kind.
const char* edit_kind_glyph(compat::EditKind k);

}  // namespace mlens
