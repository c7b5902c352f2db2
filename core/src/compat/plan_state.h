// PlanState: the simulated gguf_context (KVs) and ggml_context (tensor slots) one side of the shim
// works on, with the util helpers of spec §1.3 as methods. Every mutating helper appends the
// matching edit to the SidePlan, attributed to the current rule (begin_rule). The rules of every
// architecture (compat/arch/<name>.cpp) only talk to this class.
//
// Semantics follow §1.3 exactly:
//  - set* = remove + append; inject/copy append only when the destination is absent.
//  - Reads come in two kinds. get_* is the shim checking a key's type itself: nullopt when the
//    key is absent or of another type, silently. read_* is gguf_get_val_*: nullopt when absent,
//    and a key of another type is a PlanIssue (upstream asserts). copy_u32/copy_f32 read their
//    source the same way: a mismatch is that same PlanIssue and nothing is copied.
//  - rename_kv_prefix copies (old keys stay).
//  - rename_tensor is exact; rename_tensors_containing replaces the first occurrence in every
//    tensor containing the needle (candidates collected first). Names are cut to 63 bytes.
//  - set_type/set_shape change only the ggml view (the resulting tensor); unlisted dims are 1 and
//    trailing 1s are dropped from the recorded shape.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/compat/value_builders.h"

namespace mlens::compat {

constexpr uint32_t kTypeF32 = 0;
constexpr uint32_t kTypeF16 = 1;

// One KV copy of a rule: <prefix>`from` to `to` (prefix given to PlanState::copy_keys), read as
// the shim reads it: copy_u32, copy_f32, or copy_kv for any type.
enum class CopyAs { u32, f32, any };
struct KeyCopy {
    const char* from;
    const char* to;
    CopyAs type;
};

struct Detection {
    bool fired = false;
    std::string detail;
};

class PlanState {
public:
    struct Slot {
        std::string name;
        uint32_t type = 0;
        std::vector<uint64_t> ne;
    };

    PlanState(const Model& model, SidePlan& plan);

    const Model& model() const { return m_model; }
    SidePlan& plan() { return m_plan; }

    // Attributes the following edits to `rule` and lists it among the handlers that fired.
    void begin_rule(std::string rule);
    const std::string& rule() const { return m_rule; }
    void record_check(std::string rule, std::string arch, const Detection& d);
    void issue(std::string message);
    void set_arch(const std::string& arch) { m_plan.arch_after = arch; }

    // --- KVs ---
    const Value* kv(std::string_view key) const;
    bool has_kv(std::string_view key) const { return kv(key) != nullptr; }
    std::optional<uint32_t> get_u32(std::string_view key) const;  // exact UINT32
    std::optional<float> get_f32(std::string_view key) const;  // exact FLOAT32
    std::optional<std::string> get_str(std::string_view key) const;
    std::optional<uint32_t> read_u32(std::string_view key);  // UINT32, else an issue
    std::optional<float> read_f32(std::string_view key);  // FLOAT32, else an issue
    std::vector<std::string> keys() const;  // current order

    void set(const std::string& key, Value v, std::string note = {});
    void set_u32(const std::string& key, uint32_t v, std::string note = {}) { set(key, Value::of_u32(v), std::move(note)); }
    void set_str(const std::string& key, const std::string& v, std::string note = {}) { set(key, value_string(v), std::move(note)); }
    void remove(const std::string& key, std::string note = {});
    bool inject(const std::string& key, Value v, std::string note = {});
    bool inject_u32(const std::string& key, uint32_t v, std::string note = {}) { return inject(key, Value::of_u32(v), std::move(note)); }
    bool inject_f32(const std::string& key, float v, std::string note = {}) { return inject(key, value_f32(v), std::move(note)); }
    bool inject_bool(const std::string& key, bool v, std::string note = {}) { return inject(key, value_bool(v), std::move(note)); }
    bool inject_str(const std::string& key, const std::string& v, std::string note = {}) {
        return inject(key, value_string(v), std::move(note));
    }
    bool copy_kv(const std::string& src, const std::string& dst, std::string note = {});
    bool copy_u32(const std::string& src, const std::string& dst);
    bool copy_f32(const std::string& src, const std::string& dst);
    // Every copy of `copies` in order, each source key being `from_prefix` + from.
    void copy_keys(const std::string& from_prefix, std::span<const KeyCopy> copies);
    void rename_kv_prefix(const std::string& old_prefix, const std::string& new_prefix);
    // truncate_str_arr / truncate_data_arr: only when the array is longer than n.
    void truncate_str_arr(const std::string& key, uint64_t n);
    void truncate_data_arr(const std::string& key, ValueType element, uint64_t n);
    void collapse_u32_array_to_max(const std::string& key, uint32_t fallback);

    // --- tensors ---
    size_t slot_count() const { return m_slots.size(); }
    const Slot& slot(size_t i) const { return m_slots[i]; }
    std::optional<size_t> tensor(std::string_view name) const;
    bool any_tensor_prefix(std::string_view prefix) const;
    // How many blocks a per-block loop over `prefix`<N>. tensors has to visit: min(declared,
    // 1 + the highest N among the current tensor names). Loops that only touch such tensors do
    // the same with this bound as with a block count from the file, which may be 2^32 - 1.
    uint32_t block_span(std::string_view prefix, uint32_t declared) const;

    void rename_slot(size_t slot, const std::string& new_name, std::string note = {});
    bool rename_tensor(const std::string& old_name, const std::string& new_name, std::string note = {});
    void rename_tensors_containing(const std::string& needle, const std::string& repl);
    void set_type(size_t slot, uint32_t type, std::string note = {});
    void set_shape(size_t slot, std::vector<uint64_t> ne, std::string note = {});
    bool reclaim_slot_as(const std::string& orphan, const std::string& new_name, std::vector<uint64_t> ne, uint32_t type,
                         std::string note = {});
    bool promote_tensor_to_f32(const std::string& name);
    void add_data_op(DataOp op);

    void skip_prefix(const std::string& prefix);
    void disable_mmap();

    // After all handlers: data ops take their destination's final type and shape, and on the text
    // side every tensor whose final name matches a skip prefix gets its hide edit.
    void finish();

private:
    // The value of `key` when it has type `expected`; nullopt when absent, and an issue naming
    // `upstream_getter` when the type differs.
    const Value* typed_value(std::string_view key, ValueType expected, const char* upstream_getter);
    bool copy_typed(const std::string& src, const std::string& dst, ValueType expected, const char* upstream_getter);
    void add_kv_edit(KvOp op, const std::string& key, const std::string& source_key, Value v, std::string note);
    void add_tensor_edit(TensorEdit e);

    const Model& m_model;
    SidePlan& m_plan;
    std::string m_rule;
    std::vector<std::pair<std::string, Value>> m_kvs;
    std::vector<Slot> m_slots;
};

// Shape with unlisted dims dropped (trailing 1s removed, at least one dim kept).
std::vector<uint64_t> trim_shape(std::vector<uint64_t> ne);

}  // namespace mlens::compat
