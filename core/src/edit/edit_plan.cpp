#include "mlens/edit/edit_plan.h"
#include "edit_steps.h"

#include <algorithm>
#include <map>
#include <set>

#include "mlens/formats/gguf_writer.h"
#include "mlens/io/checked_math.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxKeyBytes = 65535;
constexpr uint64_t kPrefixBytes = 24;  // magic, version, tensor count, KV count
constexpr uint64_t kKvCountAt = 16;

Error plan_error(ErrorCode code, std::string field, std::string message) { return Error{code, std::move(field), std::nullopt, std::move(message)}; }

Status check_editable(const Model& model) {
    auto refuse = [](std::string why) { return plan_error(ErrorCode::E_EDIT_UNSUPPORTED, "file", std::move(why)); };
    if (model.files.size() != 1)
        return refuse(
            "a split GGUF is edited one part at a time, each part's own header opened on its own (the first part holds the "
            "metadata)");
    const SourceFile& f = model.files[0];
    // Errors first: a file that was not read (a store's missing blob) has no version to speak of.
    if (model.partial || model.error_count() > 0) return refuse("the file has errors; run `mlens check` for details");
    if (f.big_endian) return refuse("a big-endian GGUF cannot be edited");
    if (f.version != 2 && f.version != 3) return refuse("GGUF v" + std::to_string(f.version) + " cannot be edited (v2 and v3 can)");
    if (!f.data_start_known() || f.data_start < f.header_bytes || f.source->size() < f.data_start)
        return refuse("the file's data section was not located");
    return ok_status();
}

Status check_key(const std::string& key, const char* what) {
    if (key.empty()) return plan_error(ErrorCode::E_EMPTY_KEY, what, "a key cannot be empty");
    if (!utf8_valid(key)) return plan_error(ErrorCode::E_INVALID_UTF8, what, "the key " + escape_for_display(key, 80) + " is not valid UTF-8");
    if (key.size() > kMaxKeyBytes)
        return plan_error(ErrorCode::E_KEY_TOO_LONG, what, "a key of " + std::to_string(key.size()) + " bytes (at most 65535)");
    return ok_status();
}

// A key an edit adds (a set of a key the file lacks, a rename's new key) has no control character:
// llama.cpp reads a key only up to its first NUL, so such a key would be another key to it. A key
// the file already has may still be set, renamed or deleted, to repair the file.
Status check_new_key(const std::string& key, const char* what) {
    if (std::any_of(key.begin(), key.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }))
        return plan_error(ErrorCode::E_BAD_NAME, what,
                          "the key " + escape_for_display(key, 80) + " holds a control character (NUL, newline, ...): llama.cpp reads a "
                          "key only up to its first NUL, and no key of its own has one");
    return ok_status();
}

}  // namespace

Status check_edits(const Model& model, const EditList& edits) {
    std::set<std::string> named;
    auto name_once = [&](const std::string& key) -> Status {
        if (!named.insert(key).second)
            return plan_error(ErrorCode::E_EDIT_CONFLICT, key, escape_for_display(key, 80) + " is named by more than one edit");
        if (key == "general.alignment")
            return plan_error(ErrorCode::E_EDIT_UNSUPPORTED, key, "general.alignment places every tensor and cannot be edited");
        if (key == "split.count" || key == "split.no" || key == "split.tensors.count")
            return plan_error(ErrorCode::E_EDIT_UNSUPPORTED, key,
                              key +
                                  " says how the parts of a split model fit together, which an edit of one part cannot check; "
                                  "llama-gguf-split writes the split keys (--split to split a model, --merge to join one)");
        return ok_status();
    };
    for (const Edit& e : edits.edits) {
        if (Status s = check_key(e.key, "key"); !s) return s;
        if (Status s = name_once(e.key); !s) return s;
        if (e.kind != MetadataEditKind::set && !model.find(e.key))
            return plan_error(ErrorCode::E_NOT_FOUND, e.key, "the file has no key " + escape_for_display(e.key, 80));
        if (e.kind == MetadataEditKind::set && !model.find(e.key))
            if (Status s = check_new_key(e.key, "key"); !s) return s;
        if (e.kind != MetadataEditKind::rename) continue;
        if (Status s = check_key(e.new_key, "new key"); !s) return s;
        if (Status s = check_new_key(e.new_key, "new key"); !s) return s;
        if (Status s = name_once(e.new_key); !s) return s;
        if (model.find(e.new_key))
            return plan_error(ErrorCode::E_DUPLICATE_KEY, e.new_key,
                              "cannot rename " + escape_for_display(e.key, 80) + " to " + escape_for_display(e.new_key, 80) + ": the file has that key");
    }
    return ok_status();
}

namespace {

Result<Value> typed_value(const Model& model, const Edit& e) {
    std::optional<KeyType> type = e.type;
    if (!type)
        if (const MetadataEntry* existing = model.find(e.key))
            type = KeyType{existing->value.type,
                           existing->value.is_array() && existing->value.array ? std::optional(existing->value.array->element_type) : std::nullopt};
    if (!type) type = known_key_type(e.key);
    if (!type)
        return plan_error(ErrorCode::E_VALUE_TYPE, e.key,
                          escape_for_display(e.key, 80) + " is a new key of no known type: give it as KEY:TYPE=VALUE (e.g. :UINT32, :STRING, :ARRAY[INT32])");
    auto v = value_from_text(e.text, *type);
    if (!v) {
        Error err = v.error();
        err.field = e.key;
        return err;
    }
    return v;
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_key(std::vector<uint8_t>& out, const std::string& key) {
    put_u64(out, key.size());
    out.insert(out.end(), key.begin(), key.end());
}

}  // namespace

const char* key_change_kind_name(KeyChangeKind kind) {
    static const char* const kNames[] = {"added", "removed", "changed", "renamed"};
    return kNames[static_cast<int>(kind)];
}

const char* planned_data_path_name(PlannedDataPath p) { return p == PlannedDataPath::clone ? "clone" : "stream"; }

Result<EditPlan> plan_edit(const Model& model, const EditList& edits) {
    if (Status s = check_edits(model, edits); !s) return s.error();
    if (model.format == Format::safetensors) return plan_safetensors_edit(model, edits);
    if (Status s = check_editable(model); !s) return s.error();
    const SourceFile& file = model.files[0];
    EditPlan plan = start_plan(model, Format::gguf, file.alignment);

    std::vector<uint8_t> old(plan.old_data_start);
    if (!file.source->read(0, old.size(), old.data()))
        return Error{ErrorCode::E_IO, "header", 0, "cannot read the header of " + escape_for_display(file.path)};
    auto old_slice = [&](uint64_t from, uint64_t to) { return std::vector<uint8_t>(old.begin() + static_cast<std::ptrdiff_t>(from), old.begin() + static_cast<std::ptrdiff_t>(to)); };

    std::map<std::string, const Edit*> by_key;
    for (const Edit& e : edits.edits) by_key[e.key] = &e;

    std::vector<uint8_t> header = old_slice(0, kPrefixBytes);
    uint64_t kv_count = 0;
    for (const MetadataEntry& entry : model.metadata) {
        auto it = by_key.find(entry.key);
        if (it == by_key.end()) {
            const auto raw = old_slice(entry.key_range.offset, entry.range().end());
            header.insert(header.end(), raw.begin(), raw.end());
            ++kv_count;
            continue;
        }
        const Edit& e = *it->second;
        KeyChange change = change_of(entry, e.kind == MetadataEditKind::remove ? KeyChangeKind::removed
                                             : e.kind == MetadataEditKind::rename ? KeyChangeKind::renamed
                                                                          : KeyChangeKind::changed);
        if (e.kind == MetadataEditKind::remove) {
            plan.changes.push_back(std::move(change));
            continue;
        }
        const size_t at = header.size();
        if (e.kind == MetadataEditKind::rename) {
            change.new_key = e.new_key;
            with_after(change, entry.value);
            put_key(header, e.new_key);
            const auto raw = old_slice(entry.type_range.offset, entry.range().end());
            header.insert(header.end(), raw.begin(), raw.end());
        } else {
            auto value = typed_value(model, e);
            if (!value) return value.error();
            auto bytes = gguf_value_bytes(*value);
            if (!bytes) return bytes.error();
            with_after(change, *value);
            put_key(header, e.key);
            header.insert(header.end(), bytes->begin(), bytes->end());
        }
        change.bytes_after = header.size() - at;
        plan.changes.push_back(std::move(change));
        ++kv_count;
    }
    for (const Edit& e : edits.edits) {
        if (e.kind != MetadataEditKind::set || model.find(e.key)) continue;
        auto value = typed_value(model, e);
        if (!value) return value.error();
        auto bytes = gguf_value_bytes(*value);
        if (!bytes) return bytes.error();
        KeyChange change;
        change.kind = KeyChangeKind::added;
        change.key = e.key;
        with_after(change, *value);
        const size_t at = header.size();
        put_key(header, e.key);
        header.insert(header.end(), bytes->begin(), bytes->end());
        change.bytes_after = header.size() - at;
        plan.changes.push_back(std::move(change));
        ++kv_count;
    }
    for (int i = 0; i < 8; ++i) header[kKvCountAt + i] = static_cast<uint8_t>(kv_count >> (8 * i));
    const uint64_t kv_end = model.metadata.empty() ? kPrefixBytes : model.metadata.back().range().end();
    const auto infos = old_slice(kv_end, file.header_bytes);
    header.insert(header.end(), infos.begin(), infos.end());
    plan.new_header_bytes = header.size();
    plan.key_count_after = kv_count;

    // A tensor-less file without padding (as gguf-py writes vocab-only files) stays unpadded.
    const bool padded = !model.tensors.empty() || plan.old_data_start > plan.old_header_bytes || plan.data_bytes > 0;
    auto aligned = checked_align_up(header.size(), plan.alignment);
    if (!aligned) return plan_error(ErrorCode::E_SIZE_OVERFLOW, "header", "the header size overflows");
    plan.new_data_start = padded ? *aligned : header.size();
    header.resize(plan.new_data_start, 0);
    plan.header = std::move(header);

    finish_plan(plan, model, old);
    return plan;
}

EditPlan start_plan(const Model& model, Format format, uint64_t alignment) {
    const SourceFile& file = model.files[0];
    EditPlan plan;
    plan.format = format;
    plan.path = file.path;
    plan.old_header_bytes = file.header_bytes;
    plan.old_data_start = file.data_start;
    plan.old_file_bytes = file.source->size();
    plan.data_bytes = plan.old_file_bytes - plan.old_data_start;
    plan.alignment = alignment;
    plan.key_count_before = model.metadata.size();
    return plan;
}

KeyChange change_of(const MetadataEntry& entry, KeyChangeKind kind) {
    KeyChange change;
    change.kind = kind;
    change.key = entry.key;
    change.type_before = format_type(entry.value);
    change.value_before = format_value(entry.value);
    change.bytes_before = entry.range().length;
    return change;
}

void with_after(KeyChange& change, const Value& value) {
    change.type_after = format_type(value);
    change.value_after = format_value(value);
}

void finish_plan(EditPlan& plan, const Model& model, const std::vector<uint8_t>& old_region) {
    for (const TensorInfo& t : model.tensors)
        plan.tensors.push_back({t.name, t.data_offset, t.data_offset - plan.old_data_start + plan.new_data_start});
    plan.fits_in_place = plan.new_data_start == plan.old_data_start;
    plan.data_path = plan.fits_in_place ? PlannedDataPath::clone : PlannedDataPath::stream;
    if (!plan.fits_in_place) return;
    uint64_t first = 0, last = plan.header.size();
    while (first < last && plan.header[first] == old_region[first]) ++first;
    while (last > first && plan.header[last - 1] == old_region[last - 1]) --last;
    plan.first_changed = first;
    plan.end_changed = last;
    plan.old_span.assign(old_region.begin() + static_cast<std::ptrdiff_t>(first), old_region.begin() + static_cast<std::ptrdiff_t>(last));
}

}  // namespace mlens
