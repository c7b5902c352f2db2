#include "plan_state.h"

#include <algorithm>
#include <cstring>

namespace mlens::compat {

namespace {

constexpr size_t kMaxTensorName = 63;  // GGML_MAX_NAME - 1

}  // namespace

std::vector<uint64_t> trim_shape(std::vector<uint64_t> ne) {
    while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
    return ne;
}

PlanState::PlanState(const Model& model, SidePlan& plan) : m_model(model), m_plan(plan) {
    for (const MetadataEntry& e : model.metadata) m_kvs.emplace_back(e.key, e.value);
    for (const TensorInfo& t : model.tensors) m_slots.push_back({t.name, t.type.id, t.ne});
    if (auto arch = get_str("general.architecture")) {
        m_plan.arch_before = *arch;
        m_plan.arch_after = *arch;
    }
}

void PlanState::begin_rule(std::string rule) {
    m_rule = std::move(rule);
    m_plan.handlers.push_back(m_rule);
}

void PlanState::record_check(std::string rule, std::string arch, const Detection& d) {
    m_plan.checks.push_back({std::move(rule), std::move(arch), d.fired, d.detail});
}

void PlanState::issue(std::string message) { m_plan.issues.push_back({m_rule, std::move(message)}); }

const Value* PlanState::kv(std::string_view key) const {
    for (const auto& [k, v] : m_kvs)
        if (k == key) return &v;
    return nullptr;
}

std::optional<uint32_t> PlanState::get_u32(std::string_view key) const {
    const Value* v = kv(key);
    if (!v || v->type != ValueType::u32) return std::nullopt;
    return static_cast<uint32_t>(v->scalar.bits);
}

std::optional<float> PlanState::get_f32(std::string_view key) const {
    const Value* v = kv(key);
    if (!v || v->type != ValueType::f32) return std::nullopt;
    return static_cast<float>(v->scalar.as_double());
}

std::optional<std::string> PlanState::get_str(std::string_view key) const {
    const Value* v = kv(key);
    if (!v || !v->is_string()) return std::nullopt;
    return v->string_value();
}

std::vector<std::string> PlanState::keys() const {
    std::vector<std::string> out;
    for (const auto& kv_pair : m_kvs) out.push_back(kv_pair.first);
    return out;
}

void PlanState::add_kv_edit(KvOp op, const std::string& key, const std::string& source_key, Value v, std::string note) {
    KvEdit e;
    e.op = op;
    e.key = key;
    e.source_key = source_key;
    if (const Value* prev = kv(key)) e.previous = *prev;
    e.kind = op == KvOp::remove ? EditKind::removed : e.previous ? EditKind::changed : EditKind::injected;
    e.value = std::move(v);
    e.rule = m_rule;
    e.note = std::move(note);
    auto it = std::find_if(m_kvs.begin(), m_kvs.end(), [&](const auto& p) { return p.first == key; });
    if (it != m_kvs.end()) m_kvs.erase(it);
    if (op != KvOp::remove) m_kvs.emplace_back(key, e.value);
    m_plan.kv_edits.push_back(std::move(e));
}

void PlanState::set(const std::string& key, Value v, std::string note) { add_kv_edit(KvOp::set, key, {}, std::move(v), std::move(note)); }

void PlanState::remove(const std::string& key, std::string note) {
    if (has_kv(key)) add_kv_edit(KvOp::remove, key, {}, Value{}, std::move(note));
}

bool PlanState::inject(const std::string& key, Value v, std::string note) {
    if (has_kv(key)) return false;
    add_kv_edit(KvOp::inject, key, {}, std::move(v), std::move(note));
    return true;
}

bool PlanState::copy_kv(const std::string& src, const std::string& dst, std::string note) {
    const Value* v = kv(src);
    if (!v || has_kv(dst)) return false;
    add_kv_edit(KvOp::copy, dst, src, *v, std::move(note));
    return true;
}

const Value* PlanState::typed_value(std::string_view key, ValueType expected, const char* upstream_getter) {
    const Value* v = kv(key);
    if (!v) return nullptr;
    if (v->type != expected) {
        issue(std::string(key) + " is " + value_type_name(v->type) + ", not " + value_type_name(expected) + ": upstream asserts in " +
              upstream_getter);
        return nullptr;
    }
    return v;
}

std::optional<uint32_t> PlanState::read_u32(std::string_view key) {
    const Value* v = typed_value(key, ValueType::u32, "gguf_get_val_u32");
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(v->scalar.bits);
}

std::optional<float> PlanState::read_f32(std::string_view key) {
    const Value* v = typed_value(key, ValueType::f32, "gguf_get_val_f32");
    if (!v) return std::nullopt;
    return static_cast<float>(v->scalar.as_double());
}

bool PlanState::copy_typed(const std::string& src, const std::string& dst, ValueType expected, const char* upstream_getter) {
    if (!has_kv(src) || has_kv(dst)) return false;
    if (!typed_value(src, expected, upstream_getter)) return false;
    return copy_kv(src, dst);
}

bool PlanState::copy_u32(const std::string& src, const std::string& dst) {
    return copy_typed(src, dst, ValueType::u32, "gguf_get_val_u32");
}

bool PlanState::copy_f32(const std::string& src, const std::string& dst) {
    return copy_typed(src, dst, ValueType::f32, "gguf_get_val_f32");
}

void PlanState::copy_keys(const std::string& from_prefix, std::span<const KeyCopy> copies) {
    for (const KeyCopy& c : copies) {
        const std::string src = from_prefix + c.from;
        switch (c.type) {
            case CopyAs::u32:
                copy_u32(src, c.to);
                break;
            case CopyAs::f32:
                copy_f32(src, c.to);
                break;
            case CopyAs::any:
                copy_kv(src, c.to);
                break;
        }
    }
}

void PlanState::rename_kv_prefix(const std::string& old_prefix, const std::string& new_prefix) {
    std::vector<std::string> matching;
    for (const auto& kv_pair : m_kvs)
        if (kv_pair.first.starts_with(old_prefix)) matching.push_back(kv_pair.first);
    for (const std::string& k : matching)
        copy_kv(k, new_prefix + k.substr(old_prefix.size()), "prefix " + old_prefix + " copied to " + new_prefix + " (old key kept)");
}

void PlanState::truncate_str_arr(const std::string& key, uint64_t n) {
    const Value* v = kv(key);
    if (!v || array_element_type(*v) != ValueType::string || array_count(*v) <= n) return;
    uint64_t was = array_count(*v);
    set(key, truncated_array(*v, n), "truncated from " + std::to_string(was) + " to " + std::to_string(n) + " entries");
}

void PlanState::truncate_data_arr(const std::string& key, ValueType element, uint64_t n) {
    const Value* v = kv(key);
    if (!v || !v->is_array() || array_count(*v) <= n) return;
    uint64_t was = array_count(*v);
    std::string note = "truncated from " + std::to_string(was) + " to " + std::to_string(n) + " entries";
    if (array_element_type(*v) == element) {
        set(key, truncated_array(*v, n), std::move(note));
        return;
    }
    auto elems = array_scalars(*v);
    if (!elems) return;
    elems->resize(n);
    note += ", rewritten as " + std::string(value_type_name(element));
    if (element == ValueType::f32) {
        std::vector<float> f;
        for (const Scalar& s : *elems) f.push_back(static_cast<float>(s.as_double()));
        set(key, array_f32(f), std::move(note));
    } else {
        std::vector<int32_t> i;
        for (const Scalar& s : *elems) i.push_back(static_cast<int32_t>(s.bits));
        set(key, array_i32(i), std::move(note));
    }
}

void PlanState::collapse_u32_array_to_max(const std::string& key, uint32_t fallback) {
    const Value* v = kv(key);
    if (!v || !v->is_array() || !v->array) return;
    uint32_t max = 0;
    // Elements are read as uint32 whatever their declared type (the shim does not check it).
    for (uint64_t i = 0; i < v->array->count; ++i) {
        uint32_t x = 0;
        uint64_t off = v->array->data_offset + i * 4;
        if (v->array->element_type != ValueType::string && v->array->source->read(off, 4, &x)) max = std::max(max, x);
    }
    if (max == 0) max = fallback;
    if (max == 0) return;
    set_u32(key, max, "per-layer array collapsed to its maximum");
}

std::optional<size_t> PlanState::tensor(std::string_view name) const {
    for (size_t i = 0; i < m_slots.size(); ++i)
        if (m_slots[i].name == name) return i;
    return std::nullopt;
}

bool PlanState::any_tensor_prefix(std::string_view prefix) const {
    return std::any_of(m_slots.begin(), m_slots.end(), [&](const Slot& s) { return s.name.starts_with(prefix); });
}

uint32_t PlanState::block_span(std::string_view prefix, uint32_t declared) const {
    uint64_t span = 0;
    for (const Slot& slot : m_slots) {
        if (!slot.name.starts_with(prefix)) continue;
        uint64_t n = 0;
        size_t i = prefix.size(), digits = 0;
        for (; i < slot.name.size() && digits < 10 && slot.name[i] >= '0' && slot.name[i] <= '9'; ++i, ++digits)
            n = n * 10 + static_cast<uint64_t>(slot.name[i] - '0');
        if (digits == 0 || i >= slot.name.size() || slot.name[i] != '.') continue;
        span = std::max(span, n + 1);
    }
    return static_cast<uint32_t>(std::min<uint64_t>(span, declared));
}

void PlanState::add_tensor_edit(TensorEdit e) {
    e.rule = m_rule;
    m_plan.tensor_edits.push_back(std::move(e));
}

void PlanState::rename_slot(size_t slot, const std::string& new_name, std::string note) {
    TensorEdit e;
    e.op = TensorOp::rename;
    e.kind = EditKind::renamed;
    e.slot = slot;
    e.name = m_slots[slot].name;
    e.new_name = new_name.substr(0, kMaxTensorName);
    e.note = std::move(note);
    m_slots[slot].name = e.new_name;
    add_tensor_edit(std::move(e));
}

bool PlanState::rename_tensor(const std::string& old_name, const std::string& new_name, std::string note) {
    auto slot = tensor(old_name);
    if (!slot) return false;
    rename_slot(*slot, new_name, std::move(note));
    return true;
}

void PlanState::rename_tensors_containing(const std::string& needle, const std::string& repl) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < m_slots.size(); ++i)
        if (m_slots[i].name.find(needle) != std::string::npos) candidates.push_back(i);
    for (size_t i : candidates) {
        std::string name = m_slots[i].name;
        name.replace(name.find(needle), needle.size(), repl);
        rename_slot(i, name, "substring " + needle + " → " + repl + " (first occurrence)");
    }
}

void PlanState::set_type(size_t slot, uint32_t type, std::string note) {
    TensorEdit e;
    e.op = TensorOp::retype;
    e.kind = EditKind::retyped;
    e.slot = slot;
    e.name = m_slots[slot].name;
    e.new_type = type;
    e.note = std::move(note);
    m_slots[slot].type = type;
    add_tensor_edit(std::move(e));
}

void PlanState::set_shape(size_t slot, std::vector<uint64_t> ne, std::string note) {
    TensorEdit e;
    e.op = TensorOp::reshape;
    e.kind = EditKind::retyped;
    e.slot = slot;
    e.name = m_slots[slot].name;
    e.new_ne = trim_shape(std::move(ne));
    e.note = std::move(note);
    m_slots[slot].ne = e.new_ne;
    add_tensor_edit(std::move(e));
}

bool PlanState::reclaim_slot_as(const std::string& orphan, const std::string& new_name, std::vector<uint64_t> ne, uint32_t type,
                                std::string note) {
    auto slot = tensor(orphan);
    if (!slot) return false;
    rename_slot(*slot, new_name, note.empty() ? "reclaimed slot of " + orphan : note);
    set_shape(*slot, std::move(ne), "reclaimed slot: synthesized tensor");
    set_type(*slot, type, "reclaimed slot: synthesized tensor");
    return true;
}

bool PlanState::promote_tensor_to_f32(const std::string& name) {
    auto slot = tensor(name);
    if (!slot || m_slots[*slot].type != kTypeF16) return false;
    set_type(*slot, kTypeF32, "F16 promoted to F32");
    DataOp op;
    op.op = DataOpKind::f16_to_f32;
    op.dest = *slot;
    op.sources = {*slot};
    add_data_op(std::move(op));
    return true;
}

void PlanState::add_data_op(DataOp op) {
    op.rule = m_rule;
    op.dest_type = m_slots[op.dest].type;
    op.dest_ne = m_slots[op.dest].ne;
    // A later op for the same destination replaces the earlier one (the registry is keyed by name).
    auto it = std::find_if(m_plan.data_ops.begin(), m_plan.data_ops.end(), [&](const DataOp& d) { return d.dest == op.dest; });
    if (it != m_plan.data_ops.end()) m_plan.data_ops.erase(it);
    m_plan.data_ops.push_back(std::move(op));
}

void PlanState::skip_prefix(const std::string& prefix) { m_plan.skip_prefixes.push_back({prefix, m_rule}); }

void PlanState::disable_mmap() {
    if (m_plan.no_mmap) return;
    m_plan.no_mmap = true;
    m_plan.no_mmap_rule = m_rule;
}

void PlanState::finish() {
    for (DataOp& op : m_plan.data_ops) {
        op.dest_type = m_slots[op.dest].type;
        op.dest_ne = m_slots[op.dest].ne;
    }
    if (m_plan.side != PlanSide::text) return;
    for (size_t i = 0; i < m_slots.size(); ++i) {
        for (const SkipPrefix& p : m_plan.skip_prefixes) {
            if (!m_slots[i].name.starts_with(p.prefix)) continue;
            TensorEdit e;
            e.op = TensorOp::hide;
            e.kind = EditKind::hidden;
            e.slot = i;
            e.name = m_slots[i].name;
            e.rule = p.rule;
            e.note = "skip prefix " + p.prefix;
            m_plan.tensor_edits.push_back(std::move(e));
            break;
        }
    }
}

}  // namespace mlens::compat
