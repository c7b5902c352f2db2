#include "compat_rows.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "mlens/analysis/tensor_listing.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/model/shape_text.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

using namespace mlens::compat;

constexpr size_t kNameChars = 160, kValueChars = 120, kValueItems = 4, kNoteChars = 400;

uint8_t bit(EditKind k) { return static_cast<uint8_t>(1u << static_cast<unsigned>(k)); }

// Rule parts of one row: consecutive parts of the same handler share its name.
class RuleText {
public:
    // `action`: the part as the rule column shows it (default: `part`).
    void add(const std::string& rule, std::string part, const std::string& note, const std::string& action = {}) {
        m_action += (m_action.empty() ? "" : ", ") + (action.empty() ? part : action);
        if (!m_rule.empty() && rule == m_last)
            m_rule += ", " + part;
        else
            m_rule += (m_rule.empty() ? "" : "; ") + escape_for_display(rule, 80) + ": " + part;
        m_last = rule;
        if (note.empty() || std::find(m_notes.begin(), m_notes.end(), note) != m_notes.end()) return;
        m_notes.push_back(note);
    }
    void note(const std::string& text) { m_notes.push_back(text); }
    void apply(CompatRow& row) const {
        row.rule = m_rule;
        row.action = m_action;
        for (const std::string& n : m_notes) {
            row.note += (row.note.empty() ? "" : "; ") + escape_for_display(n, kNoteChars);
            if (n.starts_with("AMBIGUOUS:")) row.ambiguous = true;
        }
    }

private:
    std::string m_rule, m_last, m_action;
    std::vector<std::string> m_notes;
};

std::string kv_part(const KvEdit& e) {
    std::string part = kv_op_name(e.op);
    if (e.op == KvOp::copy) part += " from " + escape_for_display(e.source_key, kNameChars);
    return part;
}

void fill_value(const Value& v, std::string& type, std::string& value) {
    type = format_type(v);
    value = format_value(v, kValueItems, kValueChars);
}

std::vector<CompatRow> metadata_rows(const Model& model, const SidePlan& plan, const UpstreamView& view) {
    std::unordered_map<std::string, size_t> result_of;  // key -> index into view.metadata (first)
    for (size_t r = 0; r < view.metadata.size(); ++r) result_of.emplace(view.metadata[r].key, r);
    std::unordered_map<std::string, std::vector<size_t>> edits_of;
    for (size_t e = 0; e < plan.kv_edits.size(); ++e) edits_of[plan.kv_edits[e].key].push_back(e);

    auto annotate = [&](CompatRow& row, const std::string& key, bool stored) {
        auto it = edits_of.find(key);
        if (it == edits_of.end()) return;
        RuleText rule;
        for (size_t e : it->second) {
            const KvEdit& edit = plan.kv_edits[e];
            row.kinds |= bit(edit.kind);
            // A key copied from a stored one names its source as stored; the action is then "copy".
            const bool copied = edit.op == KvOp::copy && !stored;
            if (copied) row.copied_from = escape_for_display(edit.source_key, kNameChars);
            rule.add(edit.rule, kv_part(edit), edit.note, copied ? kv_op_name(edit.op) : std::string());
        }
        if (stored && result_of.count(key) && !view.metadata[result_of.at(key)].stored) rule.note("moved to the end of the key list");
        rule.apply(row);
        auto r = result_of.find(key);
        if (r == result_of.end())
            row.kind = EditKind::removed;
        else if (view.metadata[r->second].edit)
            row.kind = plan.kv_edits[*view.metadata[r->second].edit].kind;
        else
            row.kind = plan.kv_edits[it->second.back()].kind;
    };

    std::vector<CompatRow> rows;
    std::unordered_map<std::string, bool> stored_keys;  // keys that have a row
    for (size_t i = 0; i < model.metadata.size(); ++i) {
        const MetadataEntry& e = model.metadata[i];
        stored_keys.emplace(e.key, true);
        CompatRow row;
        row.stored = i;
        row.left_name = escape_for_display(e.key, kNameChars);
        fill_value(e.value, row.left_type, row.left_value);
        if (auto r = result_of.find(e.key); r != result_of.end()) {
            row.right_name = row.left_name;
            fill_value(view.metadata[r->second].value, row.right_type, row.right_value);
        }
        annotate(row, e.key, true);
        rows.push_back(std::move(row));
    }
    for (const ResultKv& r : view.metadata) {
        if (stored_keys.count(r.key)) continue;
        CompatRow row;
        row.right_name = escape_for_display(r.key, kNameChars);
        fill_value(r.value, row.right_type, row.right_value);
        annotate(row, r.key, false);
        rows.push_back(std::move(row));
    }
    // A key the plan created and removed again (a prefix copy, then a remove) is on neither side.
    for (const KvEdit& edit : plan.kv_edits) {
        const std::string& key = edit.key;
        if (stored_keys.count(key) || result_of.count(key)) continue;
        stored_keys.emplace(key, false);
        CompatRow row;
        row.right_name = escape_for_display(key, kNameChars);
        row.right_value = "removed again";
        annotate(row, key, false);
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string data_op_part(const Model& model, const DataOp& op) {
    std::string part = data_op_name(op.op);
    if (op.sources.empty()) return part;
    part += " from";
    for (size_t s : op.sources)
        part += " " + (s < model.tensors.size() ? escape_for_display(model.tensors[s].name, kNameChars) : "slot " + std::to_string(s));
    return part;
}

std::vector<CompatRow> tensor_rows(const Model& model, const SidePlan& plan, const UpstreamView& view) {
    std::vector<CompatRow> rows;
    rows.reserve(model.tensors.size());
    for (size_t i = 0; i < model.tensors.size() && i < view.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        const ResultTensor& r = view.tensors[i];
        CompatRow row;
        row.stored = i;
        row.left_name = escape_for_display(t.name, kNameChars);
        row.left_type = t.type.name;
        row.left_value = shape_text(t.ne, ShapeStyle::times, ShapeOrder::fastest_first);
        row.right_name = escape_for_display(r.name, kNameChars);
        row.hidden = r.hidden;
        if (r.hidden) {
            row.right_value = "hidden";
        } else {
            row.right_type = r.type.name;
            row.right_value = shape_text(r.ne, ShapeStyle::times, ShapeOrder::fastest_first);
        }
        RuleText rule;
        for (size_t e : r.edits) {
            const TensorEdit& edit = plan.tensor_edits[e];
            row.kinds |= bit(edit.kind);
            rule.add(edit.rule, tensor_op_name(edit.op), edit.note);
        }
        if (r.data_op) {
            const DataOp& op = plan.data_ops[*r.data_op];
            row.kinds |= bit(EditKind::data_op);
            rule.add(op.rule, data_op_part(model, op), op.note);
        }
        rule.apply(row);
        for (EditKind k : {EditKind::renamed, EditKind::retyped, EditKind::data_op, EditKind::hidden})
            if (row.has(k)) row.kind = k;
        rows.push_back(std::move(row));
    }
    return rows;
}

CompatSide build_side(const Model& model, const SidePlan& plan) {
    CompatSide side;
    side.side = plan.side;
    UpstreamView view = upstream_view(model, plan);
    side.metadata = metadata_rows(model, plan, view);
    side.tensors = tensor_rows(model, plan, view);
    side.counts = plan.counts();
    side.empty = plan.empty();
    side.summary = escape_for_display(plan.summary(), 4000);
    side.arch_before = escape_for_display(plan.arch_before, 80);
    side.arch_after = escape_for_display(plan.arch_after, 80);
    return side;
}

}  // namespace

const char* edit_kind_glyph(EditKind k) {
    static constexpr NameRow<EditKind> kNames[] = {
        {EditKind::injected, "+"}, {EditKind::changed, "~"}, {EditKind::removed, "\xE2\x88\x92"}, {EditKind::renamed, "\xE2\x86\x92"},
        {EditKind::hidden, "\xE2\x8A\x98"}, {EditKind::retyped, "\xE2\x87\x84"}, {EditKind::data_op, "\xC6\x92"}};
    return name_of(kNames, k);
}

Result<CompatView> build_compat_view(const Model& model, JobContext* job) {
    CompatView out;
    out.plan = plan_compat(model);
    out.origin = compat::detect_ollama_origin(model);
    job_report(job, 0.5);
    if (job_cancelled(job)) return cancelled_error();
    out.text = build_side(model, out.plan.text);
    job_report(job, 0.75);
    out.clip = build_side(model, out.plan.clip);
    out.vision_export = has_vision_export(model, out.plan);
    job_report(job, 1.0);
    return out;
}

}  // namespace mlens
