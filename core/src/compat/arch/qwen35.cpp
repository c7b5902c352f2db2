// qwen35 / qwen35moe: the text side (spec §1.4 apply_qwen35_text_fixes), including the translation of
// Ollama's embedded MTP tensors to llama.cpp's nextn layout.
//
// handle_qwen35_like_clip (spec §1.5) for qwen35 and qwen35moe: KVs with the Qwen3.5-35B-A3B
// reference defaults, the per-block Q/K/V byte concat and the patch-embed split (both before the
// renames, since they find their sources by the stored names), then substring renames.
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

constexpr size_t kMaxName = 63;

// "<prefix><decimal>.<suffix>": the index and the suffix (possibly empty).
bool parse_index(const std::string& name, const std::string& prefix, uint32_t& index, std::string& suffix) {
    if (!name.starts_with(prefix)) return false;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    auto r = std::from_chars(first, last, index);
    if (r.ec != std::errc() || r.ptr == last || *r.ptr != '.') return false;
    suffix.assign(r.ptr + 1, last);
    return true;
}

std::string block_name(uint32_t block, const std::string& suffix) {
    return ("blk." + std::to_string(block) + "." + suffix).substr(0, kMaxName);
}

// MTP destinations that get the RMSNorm +1 shift (and become F32).
bool shifts_norm(const std::string& to) {
    if (to.ends_with(".ssm_norm.weight")) return false;
    return to.ends_with("_norm.weight") || to.ends_with(".nextn.enorm.weight") || to.ends_with(".nextn.hnorm.weight");
}

// One MTP rename; true when it registered a load op (the +1 shift).
bool rename_mtp(PlanState& s, const std::string& from, const std::string& to) {
    auto slot = s.tensor(from);
    if (!slot || s.tensor(to)) return false;
    s.rename_slot(*slot, to, "MTP tensor moved into the nextn block");
    if (!shifts_norm(to)) return false;
    s.set_type(*slot, kTypeF32, "RMSNorm +1 shift produces F32");
    DataOp op;
    op.op = DataOpKind::norm_plus_one;
    op.dest = *slot;
    op.sources = {*slot};
    op.note = "AMBIGUOUS: the legacy converter may already have added +1 to this norm; like the shim, we add +1 again";
    s.add_data_op(std::move(op));
    return true;
}

// Merges the per-expert MTP tensors of one layer into blk.<block>.<dst>; true when it did.
bool merge_experts(PlanState& s, uint32_t layer, uint32_t block, const std::string& src, const std::string& dst) {
    const std::string prefix = "mtp.layers." + std::to_string(layer) + ".mlp.experts.";
    std::vector<std::pair<uint32_t, size_t>> experts;
    for (size_t i = 0; i < s.slot_count(); ++i) {
        uint32_t e = 0;
        std::string suffix;
        if (parse_index(s.slot(i).name, prefix, e, suffix) && suffix == src) experts.emplace_back(e, i);
    }
    if (experts.empty()) return false;
    std::stable_sort(experts.begin(), experts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < experts.size(); ++i) {
        if (experts[i].first != i) {
            s.issue("non-contiguous MTP experts for layer " + std::to_string(layer) + " " + src + ": not merged");
            return false;
        }
    }
    const PlanState::Slot& first = s.slot(experts[0].second);
    const uint64_t ne0 = dim(s, experts[0].second, 0), ne1 = dim(s, experts[0].second, 1);
    for (const auto& [e, slot] : experts) {
        const PlanState::Slot& t = s.slot(slot);
        if (t.type != first.type || dim(s, slot, 0) != ne0 || dim(s, slot, 1) != ne1 || dim(s, slot, 2) != 1 || dim(s, slot, 3) != 1) {
            s.issue("inconsistent MTP expert shape/type at " + t.name + ": not merged");
            return false;
        }
    }
    DataOp op;
    op.op = DataOpKind::byte_concat;
    op.dest = experts[0].second;
    for (const auto& [e, slot] : experts) op.sources.push_back(slot);
    op.note = std::to_string(experts.size()) + " experts concatenated in expert order";
    s.add_data_op(std::move(op));
    s.rename_slot(experts[0].second, block_name(block, dst), "expert 0's slot holds the merged experts");
    s.set_shape(experts[0].second, {ne0, ne1, experts.size()});
    return true;
}

// apply_qwen35_mtp_fixes; true when a load op was registered.
bool mtp_fixes(PlanState& s, const std::string& p) {
    uint32_t nextn = 0;
    bool any_mtp = false, any_layer = false;
    for (size_t i = 0; i < s.slot_count(); ++i) {
        const std::string& name = s.slot(i).name;
        if (!name.starts_with("mtp.")) continue;
        any_mtp = true;
        uint32_t idx = 0;
        std::string suffix;
        if (parse_index(name, "mtp.layers.", idx, suffix) && !suffix.empty()) {
            nextn = std::max(nextn, idx + 1);
            any_layer = true;
        }
    }
    if (!any_layer) nextn = any_mtp ? 1 : 0;
    if (nextn == 0) return false;
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (s.slot(i).name.starts_with("blk.") && s.slot(i).name.find(".nextn.") != std::string::npos) return false;

    uint32_t base = 0;
    bool any_blk = false;
    for (size_t i = 0; i < s.slot_count(); ++i) {
        uint32_t idx = 0;
        std::string suffix;
        if (parse_index(s.slot(i).name, "blk.", idx, suffix)) {
            base = std::max(base, idx + 1);
            any_blk = true;
        }
    }
    if (!any_blk) base = s.get_u32(p + ".block_count").value_or(0);
    if (base == 0) {
        s.issue("cannot infer the text block count: MTP tensors not translated");
        return false;
    }
    s.set_u32(p + ".nextn_predict_layers", nextn, "MTP layers found in mtp.* tensors");
    s.set_u32(p + ".block_count", base + nextn, "text blocks + MTP layers");

    const bool moe = p == "qwen35moe";
    bool registered = false;
    if (moe) {
        for (uint32_t i = 0; i < nextn; ++i) {
            bool gate = merge_experts(s, i, base + i, "gate_proj.weight", "ffn_gate_exps.weight");
            bool up = merge_experts(s, i, base + i, "up_proj.weight", "ffn_up_exps.weight");
            bool down = merge_experts(s, i, base + i, "down_proj.weight", "ffn_down_exps.weight");
            registered |= gate || up || down;
            if ((gate || up || down) && !(gate && up && down)) s.issue("incomplete MTP expert merge for layer " + std::to_string(i));
        }
    }
    std::vector<std::pair<std::string, std::string>> renames;
    for (size_t i = 0; i < s.slot_count(); ++i) {
        uint32_t idx = 0;
        std::string suffix;
        if (!parse_index(s.slot(i).name, "mtp.layers.", idx, suffix) || suffix.empty() || idx >= nextn) continue;
        if (moe && suffix.starts_with("mlp.experts.")) continue;
        renames.emplace_back(s.slot(i).name, block_name(base + idx, suffix));
    }
    for (const auto& [from, to] : renames) registered |= rename_mtp(s, from, to);

    static const char* const kShared[][2] = {
        {"mtp.fc.weight", "nextn.eh_proj.weight"},
        {"mtp.pre_fc_norm_embedding.weight", "nextn.enorm.weight"},
        {"mtp.pre_fc_norm_hidden.weight", "nextn.hnorm.weight"},
        {"mtp.embed_tokens.weight", "nextn.embed_tokens.weight"},
        {"mtp.shared_head.head.weight", "nextn.shared_head_head.weight"},
        {"mtp.shared_head.norm.weight", "nextn.shared_head_norm.weight"},
        {"mtp.norm.weight", "nextn.shared_head_norm.weight"},
    };
    if (nextn != 1) {
        for (const auto& pair : kShared)
            if (s.tensor(pair[0])) {
                s.issue("cannot share MTP tensors across " + std::to_string(nextn) + " layers: left as mtp.*");
                break;
            }
        return registered;
    }
    for (const auto& pair : kShared) registered |= rename_mtp(s, pair[0], block_name(base, pair[1]));
    return registered;
}

Detection qwen35_like(const PlanState& s, const std::string& p, bool with_ffn) {
    Markers m(s);
    m.kv(p + ".vision.block_count").kv(p + ".image_token_id").kv(p + ".ssm.v_head_reordered");
    if (with_ffn) m.kv(p + ".feed_forward_length");
    m.kv(p + ".rope.mrope_interleaved").prefix("mtp.").prefix("v.");
    return m.any();
}

Detection detect_qwen35moe(const PlanState& s, const std::string& arch) {
    if (arch != "qwen35moe") return wrong_arch(arch, "qwen35moe");
    return qwen35_like(s, "qwen35moe", true);
}

Detection detect_qwen35(const PlanState& s, const std::string& arch) {
    if (arch != "qwen35") return wrong_arch(arch, "qwen35");
    return qwen35_like(s, "qwen35", false);
}

void handle_qwen35_like(PlanState& s, std::string& arch) {
    const std::string p = arch;
    s.collapse_u32_array_to_max(p + ".attention.head_count_kv", 2);
    const Value* sections = s.kv(p + ".rope.dimension_sections");
    if (sections && array_count(*sections) == 3) pad_sections(s, p + ".rope.dimension_sections", p + ".rope.dimension_sections", false);
    rename_ssm_dt_bias(s);
    if (mtp_fixes(s, p)) s.disable_mmap();
    hide_vision_tensors(s);
    s.skip_prefix("mtp.");
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::head_count, vision_key::patch_size,
    vision_key::spatial_merge_size, vision_key::num_channels, vision_key::projection_dim,
};
// clang-format on

void handle_qwen35_like_clip(PlanState& s, const std::string& arch) {
    const std::string p = arch + ".";
    s.copy_keys(p, kClipKeys);
    s.inject_u32("clip.vision.feed_forward_length", 4304);
    s.inject_u32("clip.vision.image_size", 768);
    s.inject_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    if (!s.has_kv("clip.vision.is_deepstack_layers")) set_deepstack_layers(s, {}, "one false per vision block");
    declare_vision_clip(s, "gelu", "qwen3vl_merger");

    const uint32_t blocks =
        s.block_span("v.blk.", s.has_kv("clip.vision.block_count") ? s.read_u32("clip.vision.block_count").value_or(0) : 27);
    for (uint32_t b = 0; b < blocks; ++b) merge_vision_qkv(s, b, false);
    int64_t c_in = 3;
    if (s.has_kv("clip.vision.num_channels")) c_in = s.read_u32("clip.vision.num_channels").value_or(0);
    split_patch_embed(s, c_in);

    rename_all_containing(s,
                          {
                              {"v.pos_embed", "v.position_embd"},
                              {"v.patch_embed", "v.patch_embd"},
                              {"v.merger.norm", "v.post_ln"},
                              {"v.merger.linear_fc1", "mm.0"},
                              {"v.merger.linear_fc2", "mm.2"},
                              {".mlp.linear_fc1", ".ffn_up"},
                              {".mlp.linear_fc2", ".ffn_down"},
                              {".norm1", ".ln1"},
                              {".norm2", ".ln2"},
                          });
    s.promote_tensor_to_f32("v.position_embd.weight");
}

}  // namespace

const ArchRules kQwen35MoeRules = {"qwen35moe", "qwen35moe", detect_qwen35moe, handle_qwen35_like, handle_qwen35_like_clip};
const ArchRules kQwen35Rules = {"qwen35", "qwen35", detect_qwen35, handle_qwen35_like, handle_qwen35_like_clip};

}  // namespace mlens::compat
