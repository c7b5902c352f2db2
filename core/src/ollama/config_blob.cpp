// ConfigV2 as a handler of parse_strict_json's events: a stack of frames follows the few nested
// places the schema knows (two string lists, draft, rootfs); anything else nested is skipped.
#include "mlens/ollama/config_blob.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "mlens/formats/strict_json.h"

namespace mlens {

namespace {

class ConfigHandler final : public JsonHandler {
public:
    explicit ConfigHandler(ModelConfig& c) : m_config(c) {}

    bool begin_object(const JsonToken& t) override {
        if (m_stack.empty()) return push(Frame::root);
        if (m_stack.back() == Frame::root && m_key == "draft") {
            m_config.draft.emplace();
            return push(Frame::draft);
        }
        if (m_stack.back() == Frame::root && m_key == "rootfs") {
            m_config.has_rootfs = true;
            return push(Frame::rootfs);
        }
        return nested(t, "an object");
    }
    bool begin_array(const JsonToken& t) override {
        if (top() == Frame::root)
            for (const auto& f : kConfigListFields)
                if (m_key == f.key) {
                    m_list = &(m_config.*f.member);
                    return push(Frame::list);
                }
        if (top() == Frame::rootfs && m_key == "diff_ids") {
            m_list = &m_config.rootfs_diff_ids;
            return push(Frame::list);
        }
        return nested(t, "an array");
    }
    bool end_object(const JsonToken&) override { return pop(); }
    bool end_array(const JsonToken&) override { return pop(); }

    bool key(std::string& name, const JsonToken&) override {
        if (top() != Frame::skip && top() != Frame::list) m_key = name;
        return true;
    }

    bool string_value(std::string& s, const JsonToken& t) override {
        if (top() == Frame::skip) return true;
        if (top() == Frame::list) {
            if (m_list->count++ < kMaxConfigListItems) m_list->items.push_back(s);
            return true;
        }
        if (std::string* field = string_field()) {
            *field = s;
            return true;
        }
        return known_key() ? wrong(t, "a string") : true;
    }

    bool unsigned_value(uint64_t v, const JsonToken& t) override {
        if (top() == Frame::skip) return true;
        if (top() == Frame::root)
            for (const auto& f : kConfigNumberFields)
                if (m_key == f.key) return m_config.*f.member = v, true;
        return top() == Frame::list || known_key() ? wrong(t, "a number") : true;
    }

    bool other_value(JsonKind kind, const JsonToken& t) override {
        if (top() == Frame::skip || kind == JsonKind::null) return true;
        return top() == Frame::list || known_key() ? wrong(t, kind == JsonKind::boolean ? "a boolean" : "a number") : true;
    }

    std::string field() const override {
        std::string f = "config";
        if (m_stack.size() > 1 && (m_stack[1] == Frame::draft || m_stack[1] == Frame::rootfs))
            f += m_stack[1] == Frame::draft ? ".draft" : ".rootfs";
        if (!m_key.empty() && !m_stack.empty()) f += "." + m_key;
        return f;
    }

private:
    enum class Frame { root, list, draft, rootfs, skip };

    Frame top() const { return m_stack.back(); }
    bool push(Frame f) {
        m_stack.push_back(f);
        return true;
    }
    bool pop() {
        Frame f = m_stack.back();
        m_stack.pop_back();
        if (f == Frame::draft || f == Frame::rootfs) m_key = f == Frame::draft ? "draft" : "rootfs";
        return true;
    }

    bool nested(const JsonToken& t, const char* found) {
        if (top() == Frame::list || (top() != Frame::skip && known_key())) return wrong(t, found);
        return push(Frame::skip);
    }

    std::string* string_field() {
        ModelConfig& c = m_config;
        if (top() == Frame::root) {
            for (const auto& f : kConfigTextFields)
                if (m_key == f.key) return &(c.*f.member);
        } else if (top() == Frame::draft) {
            for (const auto& f : kConfigDraftFields)
                if (m_key == f.key) return &(*c.draft.*f.member);
        } else if (top() == Frame::rootfs && m_key == "type") {
            return &c.rootfs_type;
        }
        return nullptr;
    }

    // Known fields whose type is not what string_field/unsigned_value accept.
    bool known_key() const {
        auto listed = [&](const auto& table) {
            return std::any_of(std::begin(table), std::end(table), [&](const auto& f) { return m_key == f.key; });
        };
        if (top() == Frame::root)
            return listed(kConfigTextFields) || listed(kConfigListFields) || listed(kConfigNumberFields) || m_key == "draft" ||
                m_key == "rootfs";
        if (top() == Frame::draft) return listed(kConfigDraftFields);
        if (top() == Frame::rootfs) return m_key == "type" || m_key == "diff_ids";
        return false;
    }

    bool wrong(const JsonToken& t, const char* found) {
        std::string f = field();
        return reject(ErrorCode::E_CONFIG_JSON, f, t.offset, f + " has the wrong type: found " + found);
    }

    ModelConfig& m_config;
    std::vector<Frame> m_stack;
    std::string m_key;
    ConfigList* m_list = nullptr;
};

}  // namespace

Result<ModelConfig> parse_model_config(std::string_view text, uint64_t base) {
    ModelConfig config;
    ConfigHandler handler(config);
    auto parsed = parse_strict_json(text, base, handler);
    if (!parsed) {
        Error e = parsed.error();
        // Syntax errors belong to the text as a whole; type errors (already E_CONFIG_JSON) to a field.
        if (e.code != ErrorCode::E_CONFIG_JSON && e.code != ErrorCode::E_CANCELLED) {
            e.message = (e.code == ErrorCode::E_DUPLICATE_KEY ? "duplicate key " + e.field + ": " : "") + e.message;
            e.code = ErrorCode::E_CONFIG_JSON;
            e.field = "config";
        }
        return e;
    }
    return config;
}

}  // namespace mlens
