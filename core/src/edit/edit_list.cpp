#include "mlens/edit/edit_list.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "mlens/compat/value_builders.h"
#include "mlens/formats/strict_json.h"
#include "mlens/text/escape.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

Error edit_error(ErrorCode code, std::string field, std::string message) { return Error{code, std::move(field), std::nullopt, std::move(message)}; }

struct IntegerRange {
    ValueType type;
    int64_t min;
    uint64_t max;
};

constexpr IntegerRange kIntegerRanges[] = {
    {ValueType::u8, 0, UINT8_MAX},           {ValueType::i8, INT8_MIN, INT8_MAX},       {ValueType::u16, 0, UINT16_MAX},
    {ValueType::i16, INT16_MIN, INT16_MAX},  {ValueType::u32, 0, UINT32_MAX},           {ValueType::i32, INT32_MIN, INT32_MAX},
    {ValueType::u64, 0, UINT64_MAX},         {ValueType::i64, INT64_MIN, INT64_MAX},
};

const IntegerRange* integer_range(ValueType t) {
    for (const IntegerRange& r : kIntegerRanges)
        if (r.type == t) return &r;
    return nullptr;
}

Error unreadable(std::string_view text, ValueType t) {
    return edit_error(ErrorCode::E_VALUE_TYPE, "value", "\"" + escape_for_display(std::string(text), 80) + "\" is not a " + value_type_name(t));
}

Error out_of_range(std::string_view text, const IntegerRange& r) {
    return edit_error(ErrorCode::E_RANGE, "value",
                      escape_for_display(std::string(text), 80) + " does not fit " + value_type_name(r.type) + " (" + std::to_string(r.min) +
                          ".." + std::to_string(r.max) + ")");
}

Result<Scalar> integer_from_text(std::string_view text, const IntegerRange& r) {
    const char* first = text.data();
    const char* last = text.data() + text.size();
    const bool negative = !text.empty() && text[0] == '-';
    if (text.empty() || (text.size() == 1 && negative)) return unreadable(text, r.type);
    if (negative) {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(first, last, v);
        if (end != last && ec != std::errc::result_out_of_range) return unreadable(text, r.type);
        if (ec == std::errc::result_out_of_range || r.min == 0 || v < r.min) return out_of_range(text, r);
        return Scalar{r.type, static_cast<uint64_t>(v) & (r.max * 2 + 1)};
    }
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(first, last, v);
    if (end != last && ec != std::errc::result_out_of_range) return unreadable(text, r.type);
    if (ec == std::errc::result_out_of_range || v > r.max) return out_of_range(text, r);
    return Scalar{r.type, v};
}

Result<Scalar> float_from_text(std::string_view text, ValueType t) {
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || end != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return unreadable(text, t);
    const double limit = t == ValueType::f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    if (ec == std::errc::result_out_of_range || !std::isfinite(v) || std::fabs(v) > limit)
        return edit_error(ErrorCode::E_RANGE, "value", escape_for_display(std::string(text), 80) + " is not a finite " + value_type_name(t));
    uint64_t bits = 0;
    if (t == ValueType::f32) {
        const float f = static_cast<float>(v);
        uint32_t b = 0;
        std::memcpy(&b, &f, 4);
        bits = b;
    } else {
        std::memcpy(&bits, &v, 8);
    }
    return Scalar{t, bits};
}

Result<Scalar> scalar_from_text(std::string_view text, ValueType t) {
    if (const IntegerRange* r = integer_range(t)) return integer_from_text(text, *r);
    if (t == ValueType::f32 || t == ValueType::f64) return float_from_text(text, t);
    if (t == ValueType::boolean) {
        if (text == "true" || text == "1") return Scalar{t, 1};
        if (text == "false" || text == "0") return Scalar{t, 0};
    }
    return unreadable(text, t);
}

// The elements of a JSON array text: each a decoded string or the source text of a number or bool.
class ArrayElements : public JsonHandler {
public:
    struct Element {
        bool is_string = false;
        std::string text;
    };
    explicit ArrayElements(std::string_view wrapped) : m_text(wrapped) {}
    std::vector<Element> elements;

    bool begin_object(const JsonToken& t) override {
        if (m_depth++ == 0) return true;
        return reject(ErrorCode::E_VALUE_TYPE, field(), t.offset, "an array element is an object");
    }
    bool end_object(const JsonToken&) override { return --m_depth >= 0; }
    bool begin_array(const JsonToken& t) override {
        if (m_depth++ == 1) return true;
        return reject(ErrorCode::E_NESTED_ARRAY, field(), t.offset, "arrays of arrays are not GGUF values");
    }
    bool end_array(const JsonToken&) override { return --m_depth >= 0; }
    bool key(std::string&, const JsonToken&) override { return true; }
    bool string_value(std::string& s, const JsonToken& t) override {
        if (m_depth != 2) return reject(ErrorCode::E_VALUE_TYPE, field(), t.offset, "the value is not a JSON array");
        elements.push_back({true, s});
        return true;
    }
    bool unsigned_value(uint64_t, const JsonToken& t) override { return source_element(t); }
    bool other_value(JsonKind kind, const JsonToken& t) override {
        if (kind == JsonKind::null) return reject(ErrorCode::E_VALUE_TYPE, field(), t.offset, "null is not a GGUF value");
        return source_element(t);
    }
    std::string field() const override { return "value[" + std::to_string(elements.size()) + "]"; }

private:
    bool source_element(const JsonToken& t) {
        if (m_depth != 2) return reject(ErrorCode::E_VALUE_TYPE, field(), t.offset, "the value is not a JSON array");
        elements.push_back({false, std::string(m_text.substr(t.offset, t.length))});
        return true;
    }
    std::string_view m_text;
    int m_depth = 0;
};

constexpr std::string_view kWrapOpen = "{\"v\":";

Result<Value> array_from_text(std::string_view text, ValueType element) {
    const std::string wrapped = std::string(kWrapOpen) + std::string(text) + "}";
    ArrayElements handler(wrapped);
    auto parsed = parse_strict_json(wrapped, 0, handler);
    if (!parsed) {
        Error e = parsed.error();
        e.offset = e.offset && *e.offset >= kWrapOpen.size() ? std::optional<uint64_t>(*e.offset - kWrapOpen.size()) : std::nullopt;
        return e;
    }
    if (text.find('[') == std::string_view::npos) return unreadable(text, ValueType::array);
    if (element == ValueType::string) {
        std::vector<std::string> strings;
        for (auto& e : handler.elements) {
            if (!e.is_string) return unreadable(e.text, element);
            strings.push_back(std::move(e.text));
        }
        return compat::array_strings(strings);
    }
    std::vector<Scalar> scalars;
    for (const auto& e : handler.elements) {
        if (e.is_string) return unreadable(e.text, element);
        auto s = scalar_from_text(e.text, element);
        if (!s) return s.error();
        scalars.push_back(*s);
    }
    return compat::array_of_scalars(element, scalars);
}

}  // namespace

const char* metadata_edit_kind_name(MetadataEditKind kind) {
    static const char* const kNames[] = {"set", "delete", "rename"};
    return kNames[static_cast<int>(kind)];
}

Edit Edit::set(std::string key, std::string text, std::optional<KeyType> type) {
    Edit e;
    e.kind = MetadataEditKind::set;
    e.key = std::move(key);
    e.text = std::move(text);
    e.type = type;
    return e;
}

Edit Edit::remove(std::string key) {
    Edit e;
    e.kind = MetadataEditKind::remove;
    e.key = std::move(key);
    return e;
}

Edit Edit::rename(std::string key, std::string new_key) {
    Edit e;
    e.kind = MetadataEditKind::rename;
    e.key = std::move(key);
    e.new_key = std::move(new_key);
    return e;
}

Result<Value> value_from_text(std::string_view text, const KeyType& type) {
    if (type.type == ValueType::string) {
        if (!utf8_valid(text)) return edit_error(ErrorCode::E_INVALID_UTF8, "value", "the text is not valid UTF-8");
        return Value::of_string(std::string(text));
    }
    if (type.type == ValueType::array) {
        if (!type.element || *type.element == ValueType::array)
            return edit_error(ErrorCode::E_VALUE_TYPE, "value", "an array needs its element type, e.g. ARRAY[INT32]");
        return array_from_text(text, *type.element);
    }
    auto s = scalar_from_text(text, type.type);
    if (!s) return s.error();
    return Value::of_scalar(*s);
}

// "KEY:TYPE" is a key with a type only when TYPE names one.
static Edit typed_set(std::string_view key_part, std::string text) {
    const size_t colon = key_part.rfind(':');
    if (colon != std::string_view::npos)
        if (auto type = key_type_from_name(key_part.substr(colon + 1))) return Edit::set(std::string(key_part.substr(0, colon)), std::move(text), type);
    return Edit::set(std::string(key_part), std::move(text));
}

Result<Edit> parse_set_argument(std::string_view argument) {
    const size_t eq = argument.find('=');
    if (eq == std::string_view::npos)
        return edit_error(ErrorCode::E_USAGE, "--set", "expected KEY=VALUE or KEY:TYPE=VALUE, got \"" + escape_for_display(std::string(argument), 80) + "\"");
    return typed_set(argument.substr(0, eq), std::string(argument.substr(eq + 1)));
}

namespace {

// The members of an edits file (see the header): "set", "delete" and "rename".
class EditsFile : public JsonHandler {
public:
    explicit EditsFile(std::string_view text) : m_text(text) {}
    std::vector<Edit> sets, removes, renames;

    bool begin_object(const JsonToken& t) override {
        if (m_depth == 0 || (m_depth == 1 && (m_member == "set" || m_member == "rename"))) return open(t);
        return reject(ErrorCode::E_INVALID, field(), t.offset, "unexpected object");
    }
    bool end_object(const JsonToken& t) override { return close(t); }
    bool begin_array(const JsonToken& t) override {
        if (m_depth == 1 && m_member == "delete") return open(t);
        if (m_depth == 2 && m_member == "set") {
            m_value_start = t.offset;
            return open(t);
        }
        if (m_depth >= 3 && m_member == "set") return open(t);
        return reject(ErrorCode::E_INVALID, field(), t.offset, "unexpected array");
    }
    bool end_array(const JsonToken& t) override {
        if (m_depth == 3 && m_member == "set") sets.push_back(typed_set(m_key, std::string(m_text.substr(m_value_start, t.end() - m_value_start))));
        return close(t);
    }
    bool key(std::string& name, const JsonToken& t) override {
        if (m_depth == 1) {
            if (name != "set" && name != "delete" && name != "rename")
                return reject(ErrorCode::E_INVALID, name, t.offset, "unknown member (set, delete and rename are read)");
            m_member = name;
        } else {
            m_key = name;
        }
        return true;
    }
    bool string_value(std::string& s, const JsonToken& t) override {
        if (m_depth == 2 && m_member == "set") sets.push_back(typed_set(m_key, s));
        else if (m_depth == 2 && m_member == "delete") removes.push_back(Edit::remove(s));
        else if (m_depth == 2 && m_member == "rename") renames.push_back(Edit::rename(m_key, s));
        else if (m_depth < 3) return reject(ErrorCode::E_INVALID, field(), t.offset, "unexpected string");
        return true;
    }
    bool unsigned_value(uint64_t, const JsonToken& t) override { return source_value(t); }
    bool other_value(JsonKind kind, const JsonToken& t) override {
        if (kind == JsonKind::null) return reject(ErrorCode::E_VALUE_TYPE, field(), t.offset, "null is not a GGUF value");
        return source_value(t);
    }
    std::string field() const override { return m_member.empty() ? "edits" : m_member + (m_key.empty() ? "" : "." + m_key); }

private:
    bool open(const JsonToken&) {
        ++m_depth;
        return true;
    }
    bool close(const JsonToken&) {
        if (--m_depth == 1) m_key.clear();
        return true;
    }
    bool source_value(const JsonToken& t) {
        if (m_depth == 2 && m_member == "set") {
            sets.push_back(typed_set(m_key, std::string(m_text.substr(t.offset, t.length))));
            return true;
        }
        if (m_depth >= 3 && m_member == "set") return true;
        return reject(ErrorCode::E_INVALID, field(), t.offset, "expected a string");
    }

    std::string_view m_text;
    std::string m_member;
    std::string m_key;
    uint64_t m_value_start = 0;
    int m_depth = 0;
};

}  // namespace

Result<std::vector<Edit>> parse_edits_json(std::string_view text) {
    EditsFile handler(text);
    auto parsed = parse_strict_json(text, 0, handler);
    if (!parsed) return parsed.error();
    std::vector<Edit> out = std::move(handler.sets);
    out.insert(out.end(), handler.removes.begin(), handler.removes.end());
    out.insert(out.end(), handler.renames.begin(), handler.renames.end());
    return out;
}

}  // namespace mlens
