#include <map>

#include <nlohmann/json.hpp>

#include "edit_steps.h"
#include "mlens/edit/edit_plan.h"
#include "mlens/formats/strict_json.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kLengthBytes = 8;
constexpr uint64_t kPadding = 8;
constexpr const char* kMetadataKey = "__metadata__";

Error refuse(std::string why) { return Error{ErrorCode::E_EDIT_UNSUPPORTED, "file", std::nullopt, std::move(why)}; }

// Where the header's top-level object opens and where its __metadata__ value lies, if it has one.
class MetadataLocator : public JsonHandler {
public:
    uint64_t top_open = 0;
    std::optional<JsonToken> metadata;  // the object (or null) after "__metadata__"

    bool begin_object(const JsonToken& t) override {
        if (m_depth == 0) top_open = t.offset;
        if (m_depth == 1 && m_metadata_key) m_metadata_open = t.offset;
        ++m_depth;
        return true;
    }
    bool end_object(const JsonToken& t) override {
        if (--m_depth == 1 && m_metadata_open) metadata = JsonToken{*m_metadata_open, t.end() - *m_metadata_open};
        if (m_depth == 1) m_metadata_open.reset();
        return true;
    }
    bool begin_array(const JsonToken&) override {
        ++m_depth;
        return true;
    }
    bool end_array(const JsonToken&) override {
        --m_depth;
        return true;
    }
    bool key(std::string& name, const JsonToken&) override {
        if (m_depth == 1) m_metadata_key = name == kMetadataKey;
        return true;
    }
    bool string_value(std::string&, const JsonToken&) override { return true; }
    bool unsigned_value(uint64_t, const JsonToken&) override { return true; }
    bool other_value(JsonKind kind, const JsonToken& t) override {
        if (m_depth == 1 && m_metadata_key && kind == JsonKind::null) metadata = t;
        return true;
    }
    std::string field() const override { return "header"; }

private:
    int m_depth = 0;
    bool m_metadata_key = false;
    std::optional<uint64_t> m_metadata_open;
};

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string member(const std::string& key, const std::string& value) { return json_string(key) + ":" + json_string(value); }

}  // namespace

Result<EditPlan> plan_safetensors_edit(const Model& model, const EditList& edits) {
    if (model.files.size() != 1) return refuse("a safetensors folder is edited one file at a time (open the file itself)");
    if (model.partial || model.error_count() > 0) return refuse("the file has errors; run `mlens check` for details");
    const SourceFile& file = model.files[0];
    if (file.data_start < kLengthBytes || file.source->size() < file.data_start) return refuse("the file's data section was not located");
    for (const Edit& e : edits.edits)
        if (e.kind == MetadataEditKind::set && e.type && e.type->type != ValueType::string)
            return Error{ErrorCode::E_VALUE_TYPE, e.key, std::nullopt, "a safetensors __metadata__ value is a STRING"};

    std::vector<uint8_t> old(file.data_start);
    if (!file.source->read(0, old.size(), old.data()))
        return Error{ErrorCode::E_IO, "header", 0, "cannot read the header of " + escape_for_display(file.path)};
    const std::string text(old.begin() + kLengthBytes, old.end());
    MetadataLocator where;
    if (auto parsed = parse_strict_json(text, 0, where); !parsed) return parsed.error();

    EditPlan plan = start_plan(model, Format::safetensors, kPadding);

    std::map<std::string, const Edit*> by_key;
    for (const Edit& e : edits.edits) by_key[e.key] = &e;
    std::vector<std::string> members;
    for (const MetadataEntry& entry : model.metadata) {
        const std::string value = entry.value.string_value();
        auto it = by_key.find(entry.key);
        if (it == by_key.end()) {
            members.push_back(member(entry.key, value));
            continue;
        }
        const Edit& e = *it->second;
        KeyChange change = change_of(entry, e.kind == MetadataEditKind::remove ? KeyChangeKind::removed
                                             : e.kind == MetadataEditKind::rename ? KeyChangeKind::renamed
                                                                          : KeyChangeKind::changed);
        if (e.kind == MetadataEditKind::rename) {
            change.new_key = e.new_key;
            with_after(change, entry.value);
            members.push_back(member(e.new_key, value));
        } else if (e.kind == MetadataEditKind::set) {
            auto v = value_from_text(e.text, KeyType{ValueType::string, std::nullopt});
            if (!v) return Error{v.error().code, e.key, std::nullopt, v.error().message};
            with_after(change, *v);
            members.push_back(member(e.key, e.text));
        }
        if (change.kind != KeyChangeKind::removed) change.bytes_after = members.back().size();
        plan.changes.push_back(std::move(change));
    }
    for (const Edit& e : edits.edits) {
        if (e.kind != MetadataEditKind::set || model.find(e.key)) continue;
        auto v = value_from_text(e.text, KeyType{ValueType::string, std::nullopt});
        if (!v) return Error{v.error().code, e.key, std::nullopt, v.error().message};
        KeyChange change;
        change.kind = KeyChangeKind::added;
        change.key = e.key;
        with_after(change, *v);
        members.push_back(member(e.key, e.text));
        change.bytes_after = members.back().size();
        plan.changes.push_back(std::move(change));
    }
    plan.key_count_after = members.size();

    std::string object = "{";
    for (size_t i = 0; i < members.size(); ++i) object += (i ? "," : "") + members[i];
    object += "}";
    std::string header;
    if (where.metadata) {
        header = text.substr(0, where.metadata->offset) + object + text.substr(where.metadata->end());
    } else {
        const size_t after_open = where.top_open + 1;
        const size_t next = text.find_first_not_of(" \t\r\n", after_open);
        const bool empty = next != std::string::npos && text[next] == '}';
        header = text.substr(0, after_open) + json_string(kMetadataKey) + ":" + object + (empty ? "" : ",") + text.substr(after_open);
    }
    header.erase(header.find_last_not_of(" \t\r\n") + 1);
    const uint64_t old_text = text.size();
    plan.new_header_bytes = kLengthBytes + header.size();
    const uint64_t padded = header.size() <= old_text ? old_text : (header.size() + kPadding - 1) / kPadding * kPadding;
    header.resize(padded, ' ');
    plan.new_data_start = kLengthBytes + padded;
    plan.header.reserve(plan.new_data_start);
    for (uint64_t i = 0; i < kLengthBytes; ++i) plan.header.push_back(static_cast<uint8_t>(padded >> (8 * i)));
    plan.header.insert(plan.header.end(), header.begin(), header.end());

    finish_plan(plan, model, old);
    return plan;
}

}  // namespace mlens
