// parse_manifest on manifest texts: O1's manifest field by field, the JSON and schema cases
// (O12, O13, O14) with their fields and offsets, and the layer media types.
#include <catch2/catch.hpp>

#include "mlens/ollama/manifest.h"
#include "ollama_store_builder.h"

using namespace mlens;
using test::LayerSpec;

namespace {

const std::string kHexC(64, 'c');
const std::string kHexM(64, 'd');

LayerSpec config_layer() { return {std::string(test::kImageConfigMediaType), "sha256:" + kHexC, 188}; }
LayerSpec model_layer() { return {std::string(test::kModelMediaType), "sha256:" + kHexM, 256}; }

std::string o1_manifest() { return test::manifest_json(config_layer(), {model_layer()}); }

uint64_t at(const std::string& text, const std::string& needle, size_t nth = 0) {
    size_t p = text.find(needle);
    for (size_t i = 0; i < nth && p != std::string::npos; ++i) p = text.find(needle, p + 1);
    REQUIRE(p != std::string::npos);
    return p;
}

std::string describe(const Manifest& m) {
    std::string out;
    for (const Diagnostic& d : m.diagnostics) out += d.to_line() + "\n";
    return out.empty() ? "(no diagnostics)" : out;
}

const Diagnostic& first_error(const Manifest& m) {
    INFO(describe(m));
    for (const Diagnostic& d : m.diagnostics)
        if (d.severity == Severity::error) return d;
    FAIL("no error");
    return m.diagnostics.front();
}

void require_error(const Manifest& m, const std::string& code, const std::string& field, std::optional<uint64_t> offset) {
    INFO(describe(m));
    CHECK(!m.valid);
    const Diagnostic& e = first_error(m);
    CHECK(e.format == "store");
    CHECK(std::string(code_name(e.code)) == code);
    CHECK(e.field == field);
    CHECK(e.offset == offset);
}

}  // namespace

TEST_CASE("O1's manifest parses field by field", "[ollama]") {
    std::string text = o1_manifest();
    Manifest m = parse_manifest(text);
    INFO(describe(m));
    REQUIRE(m.valid);
    CHECK(m.diagnostics.empty());
    CHECK(m.schema_version == 2);
    CHECK(m.media_type == kManifestMediaType);
    REQUIRE(m.has_config);
    CHECK(m.config.kind == LayerKind::config);
    CHECK(m.config.field == "config");
    CHECK(m.config.size == 188);
    REQUIRE(m.config.blob);
    CHECK(m.config.blob->hex == kHexC);
    REQUIRE(m.layers.size() == 1);
    const ManifestLayer& l = m.layers[0];
    CHECK(l.field == "layers[0]");
    CHECK(l.kind == LayerKind::model);
    CHECK(l.size == 256);
    CHECK(l.digest == "sha256:" + kHexM);
    CHECK(l.digest_at == at(text, "\"sha256:" + kHexM));
    CHECK(l.size_at == at(text, "\"size\":256") + 7);
    CHECK(l.range.offset == at(text, "{\"mediaType\":\"application/vnd.ollama.image.model"));
    CHECK(text[l.range.end() - 1] == '}');
    CHECK(!l.from);
    CHECK(!l.name);
    CHECK(m.total_size() == 188u + 256u);
}

TEST_CASE("layers keep from and name - every media type has its kind", "[ollama]") {
    std::vector<LayerSpec> layers;
    // Each media type is "application/vnd.ollama.image." followed by the name here.
    const std::pair<const char*, LayerKind> kinds[] = {
        {"model", LayerKind::model},       {"adapter", LayerKind::adapter},       {"projector", LayerKind::projector},
        {"draft", LayerKind::draft},       {"tensor", LayerKind::tensor},         {"json", LayerKind::json},
        {"template", LayerKind::template_text}, {"prompt", LayerKind::template_text}, {"system", LayerKind::system},
        {"params", LayerKind::params},     {"messages", LayerKind::messages},     {"license", LayerKind::license}};
    for (const auto& [type, kind] : kinds)
        layers.push_back({std::string("application/vnd.ollama.image.") + type, "sha256:" + kHexM, 1, "llama3.2:latest", "config.json"});
    Manifest m = parse_manifest(test::manifest_json(config_layer(), layers));
    INFO(describe(m));
    REQUIRE(m.valid);
    REQUIRE(m.layers.size() == std::size(kinds));
    for (size_t i = 0; i < m.layers.size(); ++i) {
        CHECK(m.layers[i].kind == kinds[i].second);
        CHECK(m.layers[i].from == std::string("llama3.2:latest"));
        CHECK(m.layers[i].name == std::string("config.json"));
    }
    CHECK(std::string(layer_kind_name(LayerKind::template_text)) == "template");
    CHECK(layer_is_gguf(LayerKind::projector));
    CHECK(!layer_is_gguf(LayerKind::tensor));
    CHECK(layer_is_text(LayerKind::license));
}

TEST_CASE("O01/O02 a bad digest is E_BAD_DIGEST at the digest's offset", "[ollama]") {
    for (const std::string& digest :
         std::vector<std::string>{std::string("sha256:../../../../etc/ld.so.preload"), "sha256:" + kHexM + "\\n",
                                  "sha256:" + kHexM.substr(1), std::string("sha256:"), "sha256:" + kHexM + "\\u0000"}) {
        LayerSpec bad = model_layer();
        bad.digest = digest;
        std::string text = test::manifest_json(config_layer(), {bad});
        Manifest m = parse_manifest(text);
        require_error(m, "E_BAD_DIGEST", "layers[0].digest", text.find("\"" + digest, text.find("\"layers\"")));
        CHECK(!m.layers[0].blob);
    }
    LayerSpec bad_config = config_layer();
    bad_config.digest = "sha256-../x";
    std::string text = test::manifest_json(bad_config, {model_layer()});
    require_error(parse_manifest(text), "E_BAD_DIGEST", "config.digest", at(text, "\"sha256-../x"));
}

TEST_CASE("O12 broken JSON is E_MANIFEST_JSON at its byte", "[ollama]") {
    std::string good = o1_manifest();
    SECTION("missing colon") {
        std::string text = good;
        text.erase(at(text, ":2"), 1);
        require_error(parse_manifest(text), "E_MANIFEST_JSON", "schemaVersion", at(good, ":2"));
    }
    SECTION("truncated in the middle") {
        std::string text = good.substr(0, good.size() / 2);
        Manifest m = parse_manifest(text);
        require_error(m, "E_MANIFEST_JSON", first_error(m).field, text.size());
        CHECK(first_error(m).message.find("EOF") != std::string::npos);
    }
    SECTION("invalid UTF-8 inside a string") {
        std::string text = good;
        size_t p = at(text, "application/vnd.ollama.image.model") + 5;
        text[p] = '\xC3';
        text[p + 1] = '(';
        require_error(parse_manifest(text), "E_MANIFEST_JSON", "", p);
    }
    SECTION("a UTF-8 byte order mark") {
        Manifest m = parse_manifest("\xEF\xBB\xBF" + good);
        require_error(m, "E_MANIFEST_JSON", "", 0);
        CHECK(first_error(m).message.find("byte order mark") != std::string::npos);
    }
    SECTION("duplicate keys") {
        std::string text = "{\"schemaVersion\":2,\"schemaVersion\":2," + good.substr(1);
        Manifest m = parse_manifest(text);
        require_error(m, "E_MANIFEST_JSON", "schemaVersion", at(text, "\"schemaVersion\"", 1));
        CHECK(first_error(m).message.find("duplicate") != std::string::npos);
    }
    SECTION("nesting deeper than 128") {
        std::string text = "{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
        Manifest m = parse_manifest(text);
        CHECK(first_error(m).code == ErrorCode::E_MANIFEST_JSON);
        CHECK(first_error(m).message.find("max_json_depth") != std::string::npos);
        CHECK(first_error(m).offset == 5u + 127u);
    }
    SECTION("not an object") { require_error(parse_manifest("[]"), "E_MANIFEST_JSON", "", 0); }
}

TEST_CASE("O13 one layer past 65,536 stops the parse with E_TOO_MANY_LAYERS", "[ollama]") {
    std::string text = "{\"schemaVersion\":2,\"config\":" + config_layer().json() + ",\"layers\":[";
    const uint64_t first = text.size();
    for (int i = 0; i < 1000000; ++i) text += i ? ",{}" : "{}";
    text += "]}";
    REQUIRE(text.size() < kMaxManifestBytes);
    Manifest m = parse_manifest(text);
    require_error(m, "E_TOO_MANY_LAYERS", "layers", first + 3 * kMaxLayers);
    CHECK(first_error(m).message.find("max_layers=65536") != std::string::npos);
    CHECK(m.diagnostics.size() < 64);  // the schema errors of the {} layers are capped
}

TEST_CASE("exactly 65,536 layers are within the cap", "[ollama]") {
    // Full layers of that count do not fit in 4 MiB; empty ones do, and fail only the schema.
    std::string text = "{\"schemaVersion\":2,\"config\":" + config_layer().json() + ",\"layers\":[";
    for (uint64_t i = 0; i < kMaxLayers; ++i) text += i ? ",{}" : "{}";
    Manifest m = parse_manifest(text + "]}");
    CHECK(first_error(m).code == ErrorCode::E_MANIFEST_SCHEMA);
    CHECK(m.layers.size() == kMaxLayers);
}

TEST_CASE("a manifest text above 4 MiB is refused unparsed", "[ollama]") {
    Manifest m = parse_manifest(std::string(kMaxManifestBytes + 1, ' '));
    require_error(m, "E_MANIFEST_TOO_LARGE", "", 0);
    CHECK(first_error(m).message.find("max_manifest_bytes=4194304") != std::string::npos);
}

TEST_CASE("O14 wrong JSON types are E_MANIFEST_SCHEMA naming the field", "[ollama]") {
    std::string good = o1_manifest();
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        text.replace(at(text, from), from.size(), to);
        return text;
    };
    SECTION("layers an object") {
        std::string text = replaced("\"layers\":[", "\"layers\":{\"a\":[");
        text.replace(text.size() - 2, 1, "]}");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "layers", at(text, "{\"a\""));
    }
    SECTION("size a string") {
        std::string text = replaced("\"size\":256", "\"size\":\"256\"");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "layers[0].size", at(text, "\"256\""));
    }
    SECTION("size negative") {
        std::string text = replaced("\"size\":256", "\"size\":-1");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "layers[0].size", at(text, "-1"));
    }
    SECTION("digest a number") {
        std::string text = replaced("\"sha256:" + kHexM + "\"", "12");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "layers[0].digest", at(text, "12,"));
    }
    SECTION("schemaVersion 99") {
        std::string text = replaced("\"schemaVersion\":2", "\"schemaVersion\":99");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "schemaVersion", at(text, "99"));
    }
    SECTION("config missing, a layer without digest") {
        std::string text = "{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"x\",\"size\":1}]}";
        Manifest m = parse_manifest(text);
        INFO(describe(m));
        CHECK(!m.valid);
        bool digest = false, config = false;
        for (const Diagnostic& d : m.diagnostics) {
            digest |= d.code == ErrorCode::E_MANIFEST_SCHEMA && d.field == "layers[0].digest" && d.offset == at(text, "{\"mediaType\"");
            config |= d.code == ErrorCode::E_MANIFEST_SCHEMA && d.field == "config" && d.offset == 0u;
        }
        CHECK(digest);
        CHECK(config);
    }
    SECTION("a layer that is not an object") {
        std::string text = replaced("\"layers\":[", "\"layers\":[7,");
        require_error(parse_manifest(text), "E_MANIFEST_SCHEMA", "layers[0]", at(text, "7,"));
    }
}

TEST_CASE("O14 unknown media types and fields are skipped with warnings", "[ollama]") {
    LayerSpec odd = model_layer();
    odd.media_type = "application/vnd.example.whatever";
    std::string text = test::manifest_json(config_layer(), {model_layer(), odd});
    text.insert(1, "\"annotations\":{\"a\":[1,{\"b\":null}]},");
    Manifest m = parse_manifest(text);
    INFO(describe(m));
    CHECK(m.valid);
    REQUIRE(m.layers.size() == 2);
    CHECK(m.layers[1].kind == LayerKind::unknown);
    bool media = false, field = false;
    for (const Diagnostic& d : m.diagnostics) {
        media |= d.code == ErrorCode::W_UNKNOWN_MEDIA_TYPE && d.field == "layers[1].mediaType";
        field |= d.code == ErrorCode::W_UNKNOWN_FIELD && d.field == "annotations";
    }
    CHECK(media);
    CHECK(field);
}

TEST_CASE("null optional fields and the deprecated embed type", "[ollama]") {
    std::string text = "{\"schemaVersion\":2,\"config\":" + config_layer().json() +
        ",\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.embed\",\"digest\":\"sha256:" + kHexM +
        "\",\"size\":0,\"from\":null,\"name\":null}]}";
    Manifest m = parse_manifest(text);
    INFO(describe(m));
    CHECK(m.valid);
    REQUIRE(m.layers.size() == 1);
    CHECK(m.layers[0].kind == LayerKind::embed);
    CHECK(!m.layers[0].from);
    REQUIRE(m.diagnostics.size() == 1);
    CHECK(m.diagnostics[0].code == ErrorCode::W_DEPRECATED_MEDIA_TYPE);
}

TEST_CASE("sizes that overflow a sum are reported as no total", "[ollama]") {
    LayerSpec huge = model_layer();
    huge.size = UINT64_MAX;
    Manifest m = parse_manifest(test::manifest_json(config_layer(), {huge}));
    CHECK(m.valid);
    CHECK(!m.total_size());
}
