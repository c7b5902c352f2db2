#include "mlens/compat/rewrite_plan.h"

#include <algorithm>

#include "dispatch.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/text/plural.h"
#include "mlens/util/name_table.h"
#include "plan_state.h"

namespace mlens::compat {

const char* plan_side_name(PlanSide s) { return s == PlanSide::text ? "text" : "clip"; }

const char* edit_kind_name(EditKind k) {
    static constexpr NameRow<EditKind> kNames[] = {
        {EditKind::injected, "injected"}, {EditKind::changed, "changed"}, {EditKind::removed, "removed"}, {EditKind::renamed, "renamed"},
        {EditKind::hidden, "hidden"}, {EditKind::retyped, "retyped"}, {EditKind::data_op, "data op"}};
    return name_of(kNames, k);
}

const char* kv_op_name(KvOp op) {
    static constexpr NameRow<KvOp> kNames[] = {
        {KvOp::set, "set"}, {KvOp::copy, "copy"}, {KvOp::inject, "inject"}, {KvOp::remove, "remove"}};
    return name_of(kNames, op);
}

const char* tensor_op_name(TensorOp op) {
    static constexpr NameRow<TensorOp> kNames[] = {
        {TensorOp::rename, "rename"}, {TensorOp::hide, "hide"}, {TensorOp::retype, "retype"}, {TensorOp::reshape, "reshape"}};
    return name_of(kNames, op);
}

const char* data_op_name(DataOpKind k) {
    static constexpr NameRow<DataOpKind> kNames[] = {
        {DataOpKind::byte_concat, "byte concat"}, {DataOpKind::concat_to_f32, "concat to F32"}, {DataOpKind::f16_to_f32, "F16→F32"},
        {DataOpKind::dequant_to_f32, "dequantize to F32"}, {DataOpKind::norm_plus_one, "norm +1"},
        {DataOpKind::interleave_experts, "interleave experts"}, {DataOpKind::rope_permute_rows, "RoPE permute"},
        {DataOpKind::zero_fill, "zero fill"}, {DataOpKind::patch_split, "patch split"},
        {DataOpKind::pos_embd_resample, "position resample"}};
    return name_of(kNames, k);
}

EditCounts SidePlan::counts() const {
    EditCounts n{};
    for (const KvEdit& e : kv_edits) ++n[static_cast<size_t>(e.kind)];
    for (const TensorEdit& e : tensor_edits) ++n[static_cast<size_t>(e.kind)];
    n[static_cast<size_t>(EditKind::data_op)] += data_ops.size();
    return n;
}

std::string SidePlan::summary() const {
    if (!handlers.empty()) {
        std::string out = "handlers fired:";
        for (const std::string& h : handlers) out += " " + h;
        return out;
    }
    std::string out = "no handler fired for architecture \"" + arch_before + "\"";
    std::string tried;
    size_t other = 0;
    for (const DetectionCheck& c : checks) {
        if (c.detail.starts_with("architecture is")) {
            ++other;
            continue;
        }
        tried += (tried.empty() ? "" : "; ") + c.rule + ": " + c.detail;
    }
    if (!tried.empty()) out += "; checked " + tried;
    if (other) out += "; " + plural(other, "handler") + " gated on other architectures";
    return out;
}

RewritePlan plan_compat(const Model& model) {
    RewritePlan plan;
    plan.text.side = PlanSide::text;
    plan.clip.side = PlanSide::clip;
    if (model.format != Format::gguf) {
        plan.not_applicable = std::string("not a GGUF model (") + format_name(model.format) + ")";
        for (SidePlan* side : {&plan.text, &plan.clip}) side->checks.push_back({"plan_compat", "", false, plan.not_applicable});
        return plan;
    }
    PlanState text(model, plan.text);
    dispatch_text(text);
    text.finish();
    PlanState clip(model, plan.clip);
    dispatch_clip(clip);
    clip.finish();
    return plan;
}

UpstreamView upstream_view(const Model& model, const SidePlan& plan) {
    UpstreamView view;
    view.side = plan.side;
    for (size_t i = 0; i < model.metadata.size(); ++i)
        view.metadata.push_back({model.metadata[i].key, model.metadata[i].value, i, std::nullopt});
    for (size_t e = 0; e < plan.kv_edits.size(); ++e) {
        const KvEdit& edit = plan.kv_edits[e];
        auto it = std::find_if(view.metadata.begin(), view.metadata.end(), [&](const ResultKv& r) { return r.key == edit.key; });
        if (edit.op == KvOp::inject || edit.op == KvOp::copy) {
            if (it != view.metadata.end()) continue;
        } else if (it != view.metadata.end()) {
            view.metadata.erase(it);
        }
        if (edit.op != KvOp::remove) view.metadata.push_back({edit.key, edit.value, std::nullopt, e});
    }
    for (const ResultKv& r : view.metadata)
        if (r.key == "general.architecture" && r.value.is_string()) view.architecture = r.value.string_value();

    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        ResultTensor r;
        r.slot = i;
        r.name = t.name;
        r.type = t.type;
        r.ne = t.ne;
        view.tensors.push_back(std::move(r));
    }
    for (size_t e = 0; e < plan.tensor_edits.size(); ++e) {
        const TensorEdit& edit = plan.tensor_edits[e];
        if (edit.slot >= view.tensors.size()) continue;
        ResultTensor& r = view.tensors[edit.slot];
        r.edits.push_back(e);
        switch (edit.op) {
            case TensorOp::rename:
                r.name = edit.new_name;
                break;
            case TensorOp::hide:
                r.hidden = true;
                break;
            case TensorOp::retype:
                r.type = describe_ggml_type(edit.new_type);
                break;
            case TensorOp::reshape:
                r.ne = edit.new_ne;
                break;
        }
    }
    for (size_t d = 0; d < plan.data_ops.size(); ++d)
        if (plan.data_ops[d].dest < view.tensors.size()) view.tensors[plan.data_ops[d].dest].data_op = d;
    for (ResultTensor& r : view.tensors) {
        r.n_elements = 1;
        for (uint64_t n : r.ne) r.n_elements *= n;
        if (r.ne.empty()) r.n_elements = 0;
        if (r.type.known && !r.ne.empty()) r.n_bytes = ggml_tensor_bytes(r.type, r.ne[0], r.n_elements);
    }
    return view;
}

}  // namespace mlens::compat
