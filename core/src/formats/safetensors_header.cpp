#include "safetensors_header.h"

#include <algorithm>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr ErrorCode kSchemaError = ErrorCode::InvalidHeaderDeserialization;
constexpr size_t kNameInPath = 64;  // characters of a tensor name shown in a field path
constexpr size_t kUnknownFieldWarnings = 100;  // per file; the rest are counted in one warning

}  // namespace

SafetensorsHeaderHandler::SafetensorsHeaderHandler(std::string_view text, uint64_t base, ByteSourcePtr source, uint32_t file,
                                                   const SafetensorsLimits& limits)
    : m_text(text), m_base(base), m_source(std::move(source)), m_file(file), m_limits(limits) {}

std::string SafetensorsHeaderHandler::tensor_path(const std::string& suffix) const {
    return escape_for_display(m_tensor.name, kNameInPath) + "." + escape_for_display(suffix, kNameInPath);
}

std::string SafetensorsHeaderHandler::field() const {
    switch (m_where) {
        case Where::root_value:
            return m_key_is_metadata ? "__metadata__" : "header";
        case Where::entry_sequence:
            return escape_for_display(m_tensor.name, kNameInPath);
        case Where::metadata:
        case Where::metadata_value:
            return "__metadata__";
        case Where::entry_value:
        case Where::shape:
        case Where::offsets:
        case Where::skip:
            return tensor_path(m_field_name);
        default:
            return "header";
    }
}

bool SafetensorsHeaderHandler::skip_value() {
    m_where = Where::skip;
    m_skip_depth = 1;
    return true;
}

bool SafetensorsHeaderHandler::nest_or_refuse(const JsonToken& t, const char* found) {
    if (m_where != Where::skip) return wrong_type(t, found);
    ++m_skip_depth;
    return true;
}

bool SafetensorsHeaderHandler::wrong_type(const JsonToken& t, const char* found) {
    std::string what = found;
    if (what == "a number") what = "the number " + escape_for_display(m_text.substr(t.offset - m_base, std::min<uint64_t>(t.length, 40)));
    switch (m_where) {
        case Where::root_value:
            if (m_key_is_metadata)
                return reject(kSchemaError, "__metadata__", t.offset, "__metadata__ must be null or an object of strings, found " + what);
            return reject(kSchemaError, escape_for_display(m_key, kNameInPath), t.offset,
                          "a tensor entry must be an object (or the array [dtype, shape, data_offsets]), found " + what);
        case Where::metadata_value:
            return reject(kSchemaError, "__metadata__", t.offset,
                          "the value of \"" + escape_for_display(m_meta_key) + "\" must be a string, found " + what);
        case Where::entry_value:
            if (m_field == Field::dtype) return reject(kSchemaError, field(), t.offset, "dtype must be a string, found " + what);
            if (m_field == Field::shape)
                return reject(kSchemaError, field(), t.offset, "shape must be an array of non-negative integers, found " + what);
            return reject(kSchemaError, field(), t.offset, "data_offsets must be an array of two non-negative integers, found " + what);
        case Where::shape:
        case Where::offsets:
            return reject(kSchemaError, field(), t.offset,
                          "elements must be non-negative decimal integers below 2^64 without sign, fraction or exponent, found " + what);
        default:
            return reject(kSchemaError, "header", t.offset, "unexpected " + what);
    }
}

bool SafetensorsHeaderHandler::begin_entry(const JsonToken& t) {
    m_tensor = TensorInfo{};
    m_tensor.name = std::move(m_key);
    m_entry = SafetensorsEntry{};
    m_entry_at = t.offset;
    m_has_dtype = m_has_shape = m_has_offsets = false;
    m_sequence = false;
    m_where = Where::entry;
    return true;
}

bool SafetensorsHeaderHandler::next_sequence_field(const JsonToken& t) {
    static constexpr Field kOrder[] = {Field::dtype, Field::shape, Field::data_offsets};
    static constexpr const char* kNames[] = {"dtype", "shape", "data_offsets"};
    if (m_sequence_fields == 3)
        return reject(kSchemaError, escape_for_display(m_tensor.name, kNameInPath), t.offset,
                      "invalid length: a tensor entry given as an array holds exactly dtype, shape and data_offsets");
    m_field = kOrder[m_sequence_fields];
    m_field_name = kNames[m_sequence_fields];
    ++m_sequence_fields;
    m_where = Where::entry_value;
    return true;
}

void SafetensorsHeaderHandler::field_done() { m_where = m_sequence ? Where::entry_sequence : Where::entry; }

bool SafetensorsHeaderHandler::finish_entry(const JsonToken& t) {
    const char* missing = !m_has_dtype ? "dtype" : !m_has_shape ? "shape" : !m_has_offsets ? "data_offsets" : nullptr;
    if (missing) return reject(kSchemaError, tensor_path(missing), m_entry_at, std::string("missing field `") + missing + "`");
    m_tensor.type = safetensors_storage_type(m_entry.dtype);
    std::reverse(m_tensor.ne.begin(), m_tensor.ne.end());
    m_tensor.relative_offset = m_entry.begin;
    m_tensor.file = m_file;
    m_tensor.info_range = {m_key_token.offset, t.end() - m_key_token.offset};
    tensors.push_back(std::move(m_tensor));
    entries.push_back(m_entry);
    m_where = Where::root;
    return true;
}

void SafetensorsHeaderHandler::add_metadata(std::string& s, const JsonToken& t) {
    MetadataEntry e;
    e.key = std::move(m_meta_key);
    e.file = m_file;
    e.key_range = {m_meta_key_token.offset, m_meta_key_token.length};
    e.type_range = {t.offset, 0};  // JSON has no type field: an empty range where the value starts
    e.value_range = {t.offset, t.length};
    // A long value without escapes is the same bytes in the file: it stays there.
    std::string_view raw = m_text.substr(t.offset + 1 - m_base, t.length - 2);
    if (s.size() > Value::kInlineStringBytes && raw.find('\\') == std::string_view::npos) {
        e.value.type = ValueType::string;
        e.value.lazy_text = LazyBytes{m_source, t.offset + 1, t.length - 2};
    } else {
        e.value = Value::of_string(std::move(s));
    }
    metadata.push_back(std::move(e));
}

bool SafetensorsHeaderHandler::begin_object(const JsonToken& t) {
    if (m_where == Where::entry_sequence && !next_sequence_field(t)) return false;
    switch (m_where) {
        case Where::top:
            m_where = Where::root;
            return true;
        case Where::root_value:
            if (!m_key_is_metadata) return begin_entry(t);
            m_where = Where::metadata;
            return true;
        case Where::entry_value:
            if (m_field != Field::unknown) return wrong_type(t, "an object");
            return skip_value();
        default:
            return nest_or_refuse(t, "an object");
    }
}

bool SafetensorsHeaderHandler::begin_array(const JsonToken& t) {
    if (m_where == Where::entry_sequence && !next_sequence_field(t)) return false;
    switch (m_where) {
        case Where::root_value:
            if (m_key_is_metadata) return wrong_type(t, "an array");
            begin_entry(t);
            m_sequence = true;
            m_sequence_fields = 0;
            m_where = Where::entry_sequence;
            return true;
        case Where::entry_value:
            if (m_field == Field::shape) {
                m_where = Where::shape;
                m_entry.shape_at = t.offset;
                m_tensor.ne.clear();
                return true;
            }
            if (m_field == Field::data_offsets) {
                m_where = Where::offsets;
                m_entry.offsets_at = t.offset;
                m_offset_count = 0;
                return true;
            }
            if (m_field == Field::dtype) return wrong_type(t, "an array");
            return skip_value();
        default:
            return nest_or_refuse(t, "an array");
    }
}

bool SafetensorsHeaderHandler::end_array(const JsonToken& t) {
    switch (m_where) {
        case Where::entry_sequence:
            if (m_sequence_fields != 3)
                return reject(kSchemaError, escape_for_display(m_tensor.name, kNameInPath), m_entry_at,
                              "invalid length " + std::to_string(m_sequence_fields) +
                                  ": a tensor entry given as an array holds dtype, shape and data_offsets");
            return finish_entry(t);
        case Where::shape:
            m_has_shape = true;
            field_done();
            return true;
        case Where::offsets:
            if (m_offset_count != 2)
                return reject(kSchemaError, field(), m_entry.offsets_at,
                              "data_offsets must hold exactly two integers, found " + std::to_string(m_offset_count));
            m_has_offsets = true;
            field_done();
            return true;
        case Where::skip:
            if (--m_skip_depth == 0) m_where = Where::entry;
            return true;
        default:
            return true;
    }
}

bool SafetensorsHeaderHandler::end_object(const JsonToken& t) {
    switch (m_where) {
        case Where::root:
            m_where = Where::done;
            if (m_unknown_fields > kUnknownFieldWarnings)
                warnings.push_back({Severity::warning, "safetensors", ErrorCode::W_UNKNOWN_FIELD, "header", std::nullopt,
                                    std::to_string(m_unknown_fields - kUnknownFieldWarnings) + " more unknown fields", m_file});
            return true;
        case Where::metadata:
            m_where = Where::root;
            return true;
        case Where::entry:
            return finish_entry(t);
        case Where::skip:
            if (--m_skip_depth == 0) m_where = Where::entry;
            return true;
        default:
            return true;
    }
}

bool SafetensorsHeaderHandler::key(std::string& name, const JsonToken& t) {
    switch (m_where) {
        case Where::root:
            m_key = std::move(name);
            m_key_token = t;
            m_key_is_metadata = m_key == "__metadata__";
            m_where = Where::root_value;
            return true;
        case Where::metadata:
            m_meta_key = std::move(name);
            m_meta_key_token = t;
            m_where = Where::metadata_value;
            return true;
        case Where::entry:
            m_field = name == "dtype"    ? Field::dtype
                : name == "shape"        ? Field::shape
                : name == "data_offsets" ? Field::data_offsets
                                         : Field::unknown;
            m_field_name = std::move(name);
            m_where = Where::entry_value;
            if (m_field == Field::unknown && ++m_unknown_fields <= kUnknownFieldWarnings)
                warnings.push_back({Severity::warning, "safetensors", ErrorCode::W_UNKNOWN_FIELD, field(), t.offset,
                                    "unknown field \"" + escape_for_display(m_field_name) + "\" in the entry of \"" +
                                        escape_for_display(m_tensor.name) + "\" is ignored",
                                    m_file});
            return true;
        default:
            return true;  // keys inside a skipped value
    }
}

bool SafetensorsHeaderHandler::string_value(std::string& s, const JsonToken& t) {
    if (m_where == Where::entry_sequence && !next_sequence_field(t)) return false;
    switch (m_where) {
        case Where::metadata_value:
            add_metadata(s, t);
            m_where = Where::metadata;
            return true;
        case Where::entry_value:
            if (m_field == Field::unknown) {
                m_where = Where::entry;
                return true;
            }
            if (m_field != Field::dtype) return wrong_type(t, "a string");
            if (auto d = safetensors_dtype_from_name(s)) {
                m_entry.dtype = *d;
                m_has_dtype = true;
                field_done();
                return true;
            }
            return reject(kSchemaError, field(), t.offset,
                          "unknown dtype \"" + escape_for_display(s, 40) +
                              "\" (names are case-sensitive: BOOL, F4, F6_E2M3, "
                              "F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, "
                              "U32, F32, C64, F64, I64, U64)");
        case Where::skip:
            return true;
        default:
            return wrong_type(t, "a string");
    }
}

bool SafetensorsHeaderHandler::unsigned_value(uint64_t v, const JsonToken& t) {
    if (m_where == Where::entry_sequence && !next_sequence_field(t)) return false;
    switch (m_where) {
        case Where::shape:
            if (m_tensor.ne.size() >= m_limits.max_rank)
                return reject(ErrorCode::E_LIMIT, field(), m_entry.shape_at,
                              "shape has more dimensions than limit max_rank=" + std::to_string(m_limits.max_rank));
            m_tensor.ne.push_back(v);
            return true;
        case Where::offsets:
            (m_offset_count == 0 ? m_entry.begin : m_entry.end) = v;
            ++m_offset_count;
            return true;
        case Where::entry_value:
            if (m_field != Field::unknown) return wrong_type(t, "a number");
            m_where = Where::entry;
            return true;
        case Where::skip:
            return true;
        default:
            return wrong_type(t, "a number");
    }
}

bool SafetensorsHeaderHandler::other_value(JsonKind kind, const JsonToken& t) {
    const char* found = kind == JsonKind::null ? "null" : kind == JsonKind::boolean ? "a boolean" : "a number";
    if (m_where == Where::entry_sequence && !next_sequence_field(t)) return false;
    switch (m_where) {
        case Where::root_value:
            if (!m_key_is_metadata || kind != JsonKind::null) return wrong_type(t, found);
            m_where = Where::root;
            return true;
        case Where::entry_value:
            if (m_field != Field::unknown) return wrong_type(t, found);
            m_where = Where::entry;
            return true;
        case Where::skip:
            return true;
        default:
            return wrong_type(t, found);
    }
}

bool SafetensorsHeaderHandler::duplicate_key(const std::string& name, const JsonToken& t) {
    std::string message = "\"" + escape_for_display(name) + "\" appears more than once";
    switch (m_where) {
        case Where::root:
            return reject(ErrorCode::E_DUPLICATE_KEY, name == "__metadata__" ? "__metadata__" : escape_for_display(name, kNameInPath),
                          t.offset, message);
        case Where::metadata:
            return reject(ErrorCode::E_DUPLICATE_KEY, "__metadata__", t.offset, message + " in __metadata__");
        case Where::entry:
            return reject(ErrorCode::E_DUPLICATE_KEY, tensor_path(name), t.offset, message + " in one tensor entry");
        default:
            return reject(ErrorCode::E_DUPLICATE_KEY, field(), t.offset, message);
    }
}

}  // namespace mlens
