// The manifest schema as a handler of parse_strict_json's events. Schema errors are recorded and
// the parse goes on (so all of them are reported, and a layer list over the cap is still caught);
// only the layer cap and JSON errors stop it. A stack of contexts follows the nesting; anything
// the schema does not describe is skipped wholesale. parse_manifest takes the plain scanner's
// answer when it has one (manifest_scan.h), which is this parse's answer at a fraction of the cost.
#include "mlens/ollama/manifest.h"

#include "manifest_scan.h"
#include "mlens/formats/strict_json.h"
#include "mlens/io/checked_math.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

// Schema errors kept per manifest; the rest are counted in one last diagnostic.
constexpr size_t kMaxReportedErrors = 32;

struct MediaTypeRow {
    std::string_view media_type;
    LayerKind kind;
};

constexpr MediaTypeRow kMediaTypes[] = {
    {kConfigMediaType, LayerKind::config},
    {"application/vnd.ollama.image.model", LayerKind::model},
    {"application/vnd.ollama.image.adapter", LayerKind::adapter},
    {"application/vnd.ollama.image.projector", LayerKind::projector},
    {"application/vnd.ollama.image.draft", LayerKind::draft},
    {"application/vnd.ollama.image.tensor", LayerKind::tensor},
    {"application/vnd.ollama.image.json", LayerKind::json},
    {"application/vnd.ollama.image.template", LayerKind::template_text},
    {"application/vnd.ollama.image.prompt", LayerKind::template_text},
    {"application/vnd.ollama.image.system", LayerKind::system},
    {"application/vnd.ollama.image.params", LayerKind::params},
    {"application/vnd.ollama.image.messages", LayerKind::messages},
    {"application/vnd.ollama.image.license", LayerKind::license},
    {"application/vnd.ollama.image.embed", LayerKind::embed},
};

class ManifestHandler final : public JsonHandler {
public:
    explicit ManifestHandler(Manifest& m) : m_manifest(m) {}

    bool begin_object(const JsonToken& t) override {
        if (m_stack.empty()) {
            m_root_at = t.offset;
            m_stack.push_back(Ctx::root);
            return true;
        }
        switch (m_stack.back()) {
            case Ctx::root:
                if (m_key == "config") return begin_layer(t, "config", true);
                return m_known_key ? wrong_type(t, "an object") : skip();
            case Ctx::layers:
                if (!next_element(t)) return false;
                return begin_layer(t, element_field(), false);
            case Ctx::layer:
                return m_known_key ? wrong_type(t, "an object") : skip();
            default:
                return skip();
        }
    }

    bool begin_array(const JsonToken& t) override {
        switch (m_stack.back()) {
            case Ctx::root:
                if (m_key == "layers") {
                    m_has_layers = true;
                    m_stack.push_back(Ctx::layers);
                    return true;
                }
                return m_known_key ? wrong_type(t, "an array") : skip();
            case Ctx::layers:
                if (!next_element(t)) return false;
                schema_error(element_field(), t.offset, "a layer must be an object, found an array");
                ++m_skipped_elements;
                m_stack.push_back(Ctx::skip);
                return true;
            case Ctx::layer:
                return m_known_key ? wrong_type(t, "an array") : skip();
            default:
                return skip();
        }
    }

    bool end_object(const JsonToken& t) override {
        Ctx ctx = m_stack.back();
        m_stack.pop_back();
        if (ctx == Ctx::layer) finish_layer(t);
        if (ctx == Ctx::root) finish_root();
        return true;
    }

    bool end_array(const JsonToken&) override {
        m_stack.pop_back();
        return true;
    }

    bool key(std::string& name, const JsonToken& t) override {
        Ctx ctx = m_stack.back();
        if (ctx != Ctx::root && ctx != Ctx::layer) return true;
        m_key = name;
        bool known = ctx == Ctx::root ? (name == "schemaVersion" || name == "mediaType" || name == "config" || name == "layers")
                                      : (name == "mediaType" || name == "digest" || name == "size" || name == "from" || name == "name");
        if (!known)
            warn(ErrorCode::W_UNKNOWN_FIELD, prefix() + escape_for_display(name, 80), t.offset,
                 "unknown field \"" + escape_for_display(name, 80) + "\" skipped");
        m_known_key = known;
        return true;
    }

    bool string_value(std::string& s, const JsonToken& t) override {
        switch (m_stack.back()) {
            case Ctx::root:
                if (m_key == "mediaType") {
                    m_manifest.media_type = s;
                    return true;
                }
                return m_known_key ? wrong_type(t, "a string") : true;
            case Ctx::layers:
                return scalar_element(t, "a string");
            case Ctx::layer:
                if (m_key == "mediaType") {
                    m_layer.media_type = s;
                    m_has_media = true;
                    return true;
                }
                if (m_key == "digest") {
                    m_layer.digest = s;
                    m_layer.digest_at = t.offset;
                    m_has_digest = true;
                    return true;
                }
                if (m_key == "from") {
                    m_layer.from = s;
                    return true;
                }
                if (m_key == "name") {
                    m_layer.name = s;
                    return true;
                }
                return m_known_key ? wrong_type(t, "a string") : true;
            default:
                return true;
        }
    }

    bool unsigned_value(uint64_t v, const JsonToken& t) override {
        switch (m_stack.back()) {
            case Ctx::root:
                if (m_key == "schemaVersion") {
                    m_manifest.schema_version = v;
                    m_has_schema = true;
                    if (v != 2) schema_error("schemaVersion", t.offset, "schemaVersion is " + std::to_string(v) + ", expected 2");
                    return true;
                }
                return m_known_key ? wrong_type(t, "a number") : true;
            case Ctx::layers:
                return scalar_element(t, "a number");
            case Ctx::layer:
                if (m_key == "size") {
                    m_layer.size = v;
                    m_layer.has_size = true;
                    m_layer.size_at = t.offset;
                    return true;
                }
                return m_known_key ? wrong_type(t, "a number") : true;
            default:
                return true;
        }
    }

    bool other_value(JsonKind kind, const JsonToken& t) override {
        const char* found = kind == JsonKind::null ? "null" : kind == JsonKind::boolean ? "a boolean" : "a number";
        switch (m_stack.back()) {
            case Ctx::root:
                if (!m_known_key) return true;
                if (kind == JsonKind::number && m_key == "schemaVersion") {
                    m_has_schema = true;
                    return schema_error("schemaVersion", t.offset, "schemaVersion must be the integer 2");
                }
                return wrong_type(t, found);
            case Ctx::layers:
                return scalar_element(t, found);
            case Ctx::layer:
                if (!m_known_key) return true;
                if (kind == JsonKind::null && (m_key == "from" || m_key == "name")) return true;
                if (kind == JsonKind::number && m_key == "size") {
                    m_size_seen = true;
                    return schema_error(prefix() + "size", t.offset, "size must be a non-negative integer that fits 64 bits");
                }
                return wrong_type(t, found);
            default:
                return true;
        }
    }

    std::string field() const override {
        if (m_stack.empty()) return "";
        if (m_in_layer) return m_layer.field;
        if (m_stack.back() == Ctx::layers) return "layers";
        return m_key;
    }

    size_t suppressed = 0;

private:
    enum class Ctx { root, layers, layer, skip };

    std::string prefix() const { return m_stack.back() == Ctx::layer ? m_layer.field + "." : ""; }
    std::string element_field() const { return "layers[" + std::to_string(m_manifest.layers.size() + m_skipped_elements) + "]"; }

    // Every element of "layers" passes here first: the cap stops the parse.
    bool next_element(const JsonToken& t) {
        uint64_t index = m_manifest.layers.size() + m_skipped_elements;
        if (index < kMaxLayers) return true;
        return reject(ErrorCode::E_TOO_MANY_LAYERS, "layers", t.offset,
                      "more than " + std::to_string(kMaxLayers) + " layers (exceeds limit max_layers=" + std::to_string(kMaxLayers) + ")");
    }

    bool skip() {
        m_stack.push_back(Ctx::skip);
        return true;
    }

    bool scalar_element(const JsonToken& t, const char* found) {
        if (!next_element(t)) return false;
        schema_error(element_field(), t.offset, std::string("a layer must be an object, found ") + found);
        ++m_skipped_elements;
        return true;
    }

    bool begin_layer(const JsonToken& t, std::string field, bool is_config) {
        m_layer = ManifestLayer{};
        m_layer.field = std::move(field);
        m_layer.range.offset = t.offset;
        m_layer_is_config = is_config;
        m_has_media = m_has_digest = m_size_seen = false;
        m_in_layer = true;
        m_stack.push_back(Ctx::layer);
        return true;
    }

    void finish_layer(const JsonToken& t) {
        m_in_layer = false;
        m_layer.range.length = t.end() - m_layer.range.offset;
        const std::string p = m_layer.field + ".";
        if (!m_has_media) schema_error(p + "mediaType", m_layer.range.offset, "required field mediaType is missing");
        if (!m_has_digest) schema_error(p + "digest", m_layer.range.offset, "required field digest is missing");
        if (!m_layer.has_size && !m_size_seen) schema_error(p + "size", m_layer.range.offset, "required field size is missing");
        m_layer.kind = m_layer_is_config ? LayerKind::config : layer_kind(m_layer.media_type);
        if (m_layer_is_config) {
            m_manifest.config = std::move(m_layer);
            m_manifest.has_config = true;
        } else {
            m_manifest.layers.push_back(std::move(m_layer));
        }
    }

    void finish_root() {
        if (!m_has_schema) schema_error("schemaVersion", m_root_at, "required field schemaVersion is missing");
        if (!m_manifest.has_config && !m_config_seen) schema_error("config", m_root_at, "required field config is missing");
        if (!m_has_layers) schema_error("layers", m_root_at, "required field layers is missing");
    }

    bool wrong_type(const JsonToken& t, const char* found) {
        std::string f = prefix() + m_key;
        if (m_stack.back() == Ctx::root && m_key == "config") m_config_seen = true;
        if (m_stack.back() == Ctx::root && m_key == "layers") m_has_layers = true;
        if (m_stack.back() == Ctx::root && m_key == "schemaVersion") m_has_schema = true;
        if (m_stack.back() == Ctx::layer && m_key == "size") m_size_seen = true;
        if (m_stack.back() == Ctx::layer && m_key == "digest") m_has_digest = true;
        if (m_stack.back() == Ctx::layer && m_key == "mediaType") m_has_media = true;
        schema_error(f, t.offset, f + " has the wrong type: found " + found + ", expected " + expected(m_key));
        std::string_view kind = found;
        if (kind == "an object" || kind == "an array") m_stack.push_back(Ctx::skip);
        return true;
    }

    static const char* expected(const std::string& key) {
        if (key == "schemaVersion") return "the integer 2";
        if (key == "size") return "a non-negative integer";
        if (key == "config") return "a layer object";
        if (key == "layers") return "an array of layer objects";
        return "a string";
    }

    bool schema_error(const std::string& field, uint64_t offset, std::string message) {
        if (m_manifest.diagnostics.size() >= kMaxReportedErrors) {
            ++suppressed;
            return true;
        }
        m_manifest.diagnostics.push_back({Severity::error, "store", ErrorCode::E_MANIFEST_SCHEMA, field, offset, std::move(message)});
        return true;
    }

    void warn(ErrorCode code, std::string field, uint64_t offset, std::string message) {
        if (m_manifest.diagnostics.size() >= kMaxReportedErrors) {
            ++suppressed;
            return;
        }
        m_manifest.diagnostics.push_back({Severity::warning, "store", code, std::move(field), offset, std::move(message)});
    }

    Manifest& m_manifest;
    std::vector<Ctx> m_stack;
    std::string m_key;
    bool m_known_key = false;
    uint64_t m_root_at = 0;
    ManifestLayer m_layer;
    bool m_layer_is_config = false, m_in_layer = false;
    bool m_has_media = false, m_has_digest = false, m_size_seen = false;
    bool m_has_schema = false, m_has_layers = false, m_config_seen = false;
    uint64_t m_skipped_elements = 0;
};

std::string json_error_message(std::string_view text, const Error& e) {
    if (e.code == ErrorCode::E_JSON_START && text.starts_with("\xEF\xBB\xBF"))
        return "the manifest starts with a UTF-8 byte order mark; JSON text must not";
    if (e.code == ErrorCode::E_DUPLICATE_KEY) return "duplicate key: " + e.message;
    if (e.code == ErrorCode::E_JSON_UTF8) return "invalid UTF-8: " + e.message;
    return e.message;
}

// A string digest was read when digest_at is set: the value cannot sit at the text's first byte.
void check_layer(const ManifestLayer& layer, std::vector<Diagnostic>& out) {
    if (layer.digest_at != 0 && !layer.blob)
        out.push_back({Severity::error, "store", ErrorCode::E_BAD_DIGEST, layer.field + ".digest", layer.digest_at,
                       "\"" + escape_for_display(layer.digest, 100) + "\" is not a digest of the form sha256:<64 lowercase hex digits>"});
    if (layer.kind == LayerKind::unknown && !layer.media_type.empty())
        out.push_back({Severity::warning, "store", ErrorCode::W_UNKNOWN_MEDIA_TYPE, layer.field + ".mediaType", layer.range.offset,
                       "unknown media type \"" + escape_for_display(layer.media_type, 100) + "\"; layer skipped"});
    if (layer.kind == LayerKind::embed)
        out.push_back({Severity::warning, "store", ErrorCode::W_DEPRECATED_MEDIA_TYPE, layer.field + ".mediaType", layer.range.offset,
                       "the embed layer type is deprecated and ignored"});
}

}  // namespace

LayerKind layer_kind(std::string_view media_type) {
    for (const auto& row : kMediaTypes)
        if (row.media_type == media_type) return row.kind;
    return LayerKind::unknown;
}

const char* layer_kind_name(LayerKind kind) {
    static constexpr NameRow<LayerKind> kNames[] = {
        {LayerKind::config, "config"}, {LayerKind::model, "model"}, {LayerKind::adapter, "adapter"}, {LayerKind::projector, "projector"},
        {LayerKind::draft, "draft"}, {LayerKind::tensor, "tensor"}, {LayerKind::json, "json"}, {LayerKind::template_text, "template"},
        {LayerKind::system, "system"}, {LayerKind::params, "params"}, {LayerKind::messages, "messages"}, {LayerKind::license, "license"},
        {LayerKind::embed, "embed"}};
    return name_of(kNames, kind, "unknown");
}

bool layer_is_gguf(LayerKind kind) {
    return kind == LayerKind::model || kind == LayerKind::adapter || kind == LayerKind::projector || kind == LayerKind::draft;
}

bool layer_is_text(LayerKind kind) {
    return kind == LayerKind::template_text || kind == LayerKind::system || kind == LayerKind::params || kind == LayerKind::messages ||
        kind == LayerKind::license;
}

std::optional<uint64_t> Manifest::total_size() const {
    std::optional<uint64_t> total = config.size;
    for (const ManifestLayer& l : layers)
        if (total) total = checked_add(*total, l.size);
    return total;
}

Manifest parse_manifest(std::string_view text, uint64_t base) {
    if (std::optional<Manifest> plain = scan_plain_manifest(text, base)) return std::move(*plain);
    return parse_manifest_strict(text, base);
}

Manifest parse_manifest_strict(std::string_view text, uint64_t base) {
    Manifest m;
    if (text.size() > kMaxManifestBytes) {
        m.diagnostics.push_back(
            {Severity::error, "store", ErrorCode::E_MANIFEST_TOO_LARGE, "", base,
             std::to_string(text.size()) + " bytes exceeds limit max_manifest_bytes=" + std::to_string(kMaxManifestBytes)});
        return m;
    }
    ManifestHandler handler(m);
    auto parsed = parse_strict_json(text, base, handler);
    if (!parsed) {
        const Error& e = parsed.error();
        bool kept = e.code == ErrorCode::E_TOO_MANY_LAYERS || e.code == ErrorCode::E_CANCELLED;
        m.diagnostics.insert(m.diagnostics.begin(),
                             Diagnostic{Severity::error, "store", kept ? e.code : ErrorCode::E_MANIFEST_JSON, e.field, e.offset,
                                        json_error_message(text, e)});
    }
    if (handler.suppressed)
        m.diagnostics.push_back({Severity::error, "store", ErrorCode::E_MANIFEST_SCHEMA, "", std::nullopt,
                                 std::to_string(handler.suppressed) + " more problems not listed"});
    finish_manifest(m);
    return m;
}

void finish_manifest(Manifest& m) {
    if (m.has_config) m.config.blob = parse_blob_digest(m.config.digest);
    for (ManifestLayer& l : m.layers) l.blob = parse_blob_digest(l.digest);
    if (m.has_config) check_layer(m.config, m.diagnostics);
    for (const ManifestLayer& l : m.layers) check_layer(l, m.diagnostics);
    if (!m.media_type.empty() && m.media_type != kManifestMediaType)
        m.diagnostics.push_back(
            {Severity::warning, "store", ErrorCode::W_MANIFEST_MEDIA_TYPE, "mediaType", std::nullopt,
             "manifest media type \"" + escape_for_display(m.media_type, 100) + "\" is not " + std::string(kManifestMediaType)});
    m.valid = true;
    for (const Diagnostic& d : m.diagnostics) m.valid &= d.severity != Severity::error;
}

}  // namespace mlens
