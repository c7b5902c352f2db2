// The JSON handler of one safetensors header: turns parse_strict_json's events into metadata
// entries, tensor infos and the per-entry facts the size and offset checks need, rejecting
// anything that does not fit the header schema (malformed-inputs.md A3, safetensors rows).
//
// Schema: the top object maps tensor names to entries {"dtype": string, "shape": [u64...],
// "data_offsets": [u64, u64]}, plus the reserved "__metadata__": null or {string: string}. As in
// the reference implementation (serde's derived struct), an entry may also be the sequence of the
// three values in that order: [dtype, shape, data_offsets].
// Unknown fields in an entry are skipped (whatever their JSON) with W_UNKNOWN_FIELD. Rejections
// use the reference implementation's code InvalidHeaderDeserialization, or E_LIMIT for a shape of
// more than max_rank dimensions, or E_DUPLICATE_KEY; fields are "<tensor>.dtype",
// "<tensor>.shape", "<tensor>.data_offsets", "<tensor>.<field>", "__metadata__" or "header".
//
// Tensors arrive with name, type, ne (the shape reversed into GGUF order), relative_offset,
// info_range (key through closing brace) and file set; sizes and data offsets are the layout
// check's job. Completed entries stay available after a rejection (partial results).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_limits.h"
#include "mlens/formats/strict_json.h"
#include "mlens/model/model.h"

namespace mlens {

// What the layout check needs beside each TensorInfo.
struct SafetensorsEntry {
    SafetensorsDtype dtype = SafetensorsDtype::u8;
    uint64_t begin = 0, end = 0;  // data_offsets as written
    uint64_t shape_at = 0;  // absolute offset of the shape value
    uint64_t offsets_at = 0;  // absolute offset of the data_offsets value
};

class SafetensorsHeaderHandler final : public JsonHandler {
public:
    SafetensorsHeaderHandler(std::string_view text, uint64_t base, ByteSourcePtr source, uint32_t file, const SafetensorsLimits& limits);

    bool begin_object(const JsonToken& t) override;
    bool end_object(const JsonToken& t) override;
    bool begin_array(const JsonToken& t) override;
    bool end_array(const JsonToken& t) override;
    bool key(std::string& name, const JsonToken& t) override;
    bool string_value(std::string& s, const JsonToken& t) override;
    bool unsigned_value(uint64_t v, const JsonToken& t) override;
    bool other_value(JsonKind kind, const JsonToken& t) override;
    bool duplicate_key(const std::string& name, const JsonToken& t) override;
    std::string field() const override;

    std::vector<MetadataEntry> metadata;
    std::vector<TensorInfo> tensors;
    std::vector<SafetensorsEntry> entries;  // parallel to tensors
    std::vector<Diagnostic> warnings;

private:
    enum class Where { top, root, root_value, metadata, metadata_value, entry, entry_sequence, entry_value, shape, offsets, skip, done };
    enum class Field { dtype, shape, data_offsets, unknown };

    bool begin_entry(const JsonToken& t);
    bool finish_entry(const JsonToken& t);
    // In an entry in sequence form: the next element is the value of the next field.
    bool next_sequence_field(const JsonToken& t);
    // Where the entry's next field or element is read, once a field's value is complete.
    void field_done();
    void add_metadata(std::string& s, const JsonToken& t);
    // Rejects a JSON value of the wrong type at the current position.
    bool wrong_type(const JsonToken& t, const char* found);
    // Skips the value that starts here (an unknown field's), whatever its JSON.
    bool skip_value();
    // A container inside a skipped value nests one deeper; anywhere else it is the wrong type.
    bool nest_or_refuse(const JsonToken& t, const char* found);
    std::string tensor_path(const std::string& suffix) const;

    std::string_view m_text;
    uint64_t m_base;
    ByteSourcePtr m_source;
    uint32_t m_file;
    const SafetensorsLimits& m_limits;

    Where m_where = Where::top;
    std::string m_key;  // the top-level key being read
    JsonToken m_key_token;
    bool m_key_is_metadata = false;
    std::string m_meta_key;
    JsonToken m_meta_key_token;

    TensorInfo m_tensor;  // the entry being read
    SafetensorsEntry m_entry;
    uint64_t m_entry_at = 0;
    bool m_has_dtype = false, m_has_shape = false, m_has_offsets = false;
    bool m_sequence = false;  // the entry is [dtype, shape, data_offsets]
    uint64_t m_sequence_fields = 0;  // elements of it read so far
    Field m_field = Field::unknown;
    std::string m_field_name;
    uint64_t m_offset_count = 0;
    uint64_t m_skip_depth = 0;
    uint64_t m_unknown_fields = 0;
};

}  // namespace mlens
