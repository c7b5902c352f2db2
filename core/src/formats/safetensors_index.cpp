#include "safetensors_index.h"

#include "mlens/formats/strict_json.h"

namespace mlens {

namespace {

constexpr ErrorCode kSchemaError = ErrorCode::E_INDEX_SCHEMA;

class IndexHandler final : public JsonHandler {
public:
    SafetensorsIndex index;
    bool saw_weight_map = false;

    bool begin_object(const JsonToken& t) override {
        switch (m_where) {
            case Where::top:
                m_where = Where::root;
                return true;
            case Where::root_value:
                if (!m_in_weight_map) return skip();
                m_where = Where::map;
                saw_weight_map = true;
                return true;
            case Where::skip:
                ++m_skip_depth;
                return true;
            default:
                return wrong_type(t, "an object");
        }
    }
    bool begin_array(const JsonToken& t) override {
        if (m_where == Where::skip) {
            ++m_skip_depth;
            return true;
        }
        if (m_where == Where::root_value && !m_in_weight_map) return skip();
        return wrong_type(t, "an array");
    }
    bool end_object(const JsonToken&) override {
        if (m_where == Where::map)
            m_where = Where::root;
        else if (m_where == Where::skip)
            leave_skip();
        return true;
    }
    bool end_array(const JsonToken&) override {
        if (m_where == Where::skip) leave_skip();
        return true;
    }
    bool key(std::string& name, const JsonToken&) override {
        if (m_where == Where::root) {
            m_in_weight_map = name == "weight_map";
            m_where = Where::root_value;
        } else if (m_where == Where::map) {
            m_tensor = std::move(name);
            m_where = Where::map_value;
        }
        return true;
    }
    bool string_value(std::string& s, const JsonToken& t) override {
        if (m_where == Where::map_value) {
            index.weight_map.push_back({std::move(m_tensor), std::move(s), t.offset});
            m_where = Where::map;
            return true;
        }
        return scalar(t, "a string");
    }
    bool unsigned_value(uint64_t, const JsonToken& t) override { return scalar(t, "a number"); }
    bool other_value(JsonKind kind, const JsonToken& t) override {
        return scalar(t, kind == JsonKind::null ? "null" : kind == JsonKind::boolean ? "a boolean" : "a number");
    }
    std::string field() const override {
        bool in_map = m_where == Where::map || m_where == Where::map_value || (m_where == Where::root_value && m_in_weight_map);
        return in_map ? "weight_map" : "index";
    }

private:
    enum class Where { top, root, root_value, map, map_value, skip };

    bool skip() {
        m_where = Where::skip;
        m_skip_depth = 1;
        return true;
    }
    void leave_skip() {
        if (--m_skip_depth == 0) m_where = Where::root;
    }
    bool scalar(const JsonToken& t, const char* found) {
        if (m_where == Where::skip) return true;
        if (m_where == Where::root_value && !m_in_weight_map) {
            m_where = Where::root;
            return true;
        }
        return wrong_type(t, found);
    }
    bool wrong_type(const JsonToken& t, const char* found) {
        if (m_where == Where::map_value)
            return reject(kSchemaError, "weight_map", t.offset, std::string("weight_map values must be shard file names, found ") + found);
        return reject(kSchemaError, "weight_map", t.offset, std::string("weight_map must be an object, found ") + found);
    }

    Where m_where = Where::top;
    bool m_in_weight_map = false;
    std::string m_tensor;
    uint64_t m_skip_depth = 0;
};

}  // namespace

Result<SafetensorsIndex> parse_safetensors_index(std::string_view text, const SafetensorsLimits& limits, JobContext* job) {
    IndexHandler handler;
    auto parsed = parse_strict_json(text, 0, handler, JsonLimits{limits.max_json_depth}, job);
    if (!parsed) {
        Error e = parsed.error();
        if (is_json_syntax_code(e.code)) e.code = ErrorCode::E_INDEX_JSON;
        return e;
    }
    if (!handler.saw_weight_map) return Error{kSchemaError, "weight_map", std::nullopt, "the index has no weight_map object"};
    return std::move(handler.index);
}

}  // namespace mlens
