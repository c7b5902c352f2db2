// The plain-manifest scanner (core/src/ollama/manifest_scan.h) against the strict parse: on every
// manifest of the demo store, on spaced and reordered texts, and on every one-byte change of a
// manifest (replaced, inserted, deleted), the two give the same Manifest, field by field; the
// scanner takes the texts Ollama writes and leaves the rest to the strict parse.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../core/src/ollama/manifest_scan.h"
#include "build_paths.h"
#include "ollama_store_builder.h"

using namespace mlens;
using test::LayerSpec;

namespace fs = std::filesystem;

namespace {

const std::string kHexC(64, 'c');
const std::string kHexM(64, 'd');

std::string layer_text(const ManifestLayer& l) {
    return l.field + " " + l.media_type + " " + layer_kind_name(l.kind) + " " + l.digest + " " + (l.blob ? l.blob->hex : "-") + " " +
        std::to_string(l.size) + " " + std::to_string(l.has_size) + " " + l.from.value_or("(none)") + " " + l.name.value_or("(none)") +
        " " + std::to_string(l.range.offset) + "+" + std::to_string(l.range.length) + " " + std::to_string(l.digest_at) + " " +
        std::to_string(l.size_at) + "\n";
}

// Everything a Manifest holds, as text.
std::string manifest_text(const Manifest& m) {
    std::string out = "schema " + std::to_string(m.schema_version) + " " + m.media_type + " valid " + std::to_string(m.valid) + "\n";
    if (m.has_config) out += layer_text(m.config);
    for (const ManifestLayer& l : m.layers) out += layer_text(l);
    for (const Diagnostic& d : m.diagnostics) out += d.to_line() + "\n";
    return out;
}

// The scanner either declines or agrees with the strict parse; true when it took the text.
bool agrees(const std::string& text, uint64_t base = 0) {
    const std::optional<Manifest> plain = scan_plain_manifest(text, base);
    if (!plain) return false;
    INFO(text);
    CHECK(manifest_text(*plain) == manifest_text(parse_manifest_strict(text, base)));
    return true;
}

std::string sample_manifest() {
    const LayerSpec config{std::string(test::kImageConfigMediaType), "sha256:" + kHexC, 188};
    return test::manifest_json(config,
                               {{std::string(test::kModelMediaType), "sha256:" + kHexM, 256, "llama3.2:latest", "model.gguf"},
                                {"application/vnd.ollama.image.license", "sha256:" + kHexM, 0}});
}

}  // namespace

TEST_CASE("the plain scanner reads every manifest of the demo store as the strict parse does", "[ollama]") {
    size_t read = 0;
    for (const auto& e : fs::recursive_directory_iterator(std::string(MLENS_DEMO_DIR) + "/ollama-store/manifests")) {
        if (!e.is_regular_file()) continue;
        std::ifstream f(e.path(), std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        INFO(e.path().string());
        CHECK(agrees(text));
        CHECK(agrees(text, 4096));
        ++read;
    }
    CHECK(read >= 5);
}

TEST_CASE("the plain scanner takes spacing, any key order, empty layers and diagnostics of digests and media types", "[ollama]") {
    const std::string digest = "sha256:" + kHexC;
    const std::vector<std::string> plain = {
        sample_manifest(),
        " \n\t{ \"layers\" : [ ] ,\r\n \"config\":{\"size\":0,\"digest\":\"" + digest +
            "\",\"mediaType\":\"x\"}, \"schemaVersion\" : 2 }\n\n",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\",\"digest\":\"sha256:" + std::string(64, 'C') +
            "\",\"size\":18446744073709551615},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.embed\",\"digest\":\"md5:1\","
            "\"size\":1},{\"mediaType\":\"text/unknown\",\"digest\":\"" +
            digest + "\",\"size\":2,\"name\":\"\"}]}",
        "{\"schemaVersion\":2,\"mediaType\":\"application/json\",\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest +
            "\",\"size\":1},\"layers\":[]}",
    };
    for (const std::string& text : plain) CHECK(agrees(text));
    const Manifest odd = parse_manifest(plain[2]);
    CHECK(!odd.valid);
    CHECK(odd.diagnostics.size() == 4);  // two bad digests, the deprecated and the unknown media type
}

TEST_CASE("the plain scanner leaves everything outside the plain form to the strict parse", "[ollama]") {
    const std::string base = sample_manifest();
    const std::string digest = "sha256:" + kHexC;
    const std::string config = "\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest + "\",\"size\":1}";
    const std::vector<std::string> declined = {
        "",
        "\xEF\xBB\xBF" + base,
        base + "x",
        base + std::string(1, '\0'),
        "{\"schemaVersion\":3," + config + ",\"layers\":[]}",
        "{\"schemaVersion\":2.0," + config + ",\"layers\":[]}",
        "{\"schemaVersion\":02," + config + ",\"layers\":[]}",
        "{\"schemaVersion\":2,\"schemaVersion\":2," + config + ",\"layers\":[]}",
        "{\"schemaVersion\":2," + config + "}",
        "{\"schemaVersion\":2,\"layers\":[]}",
        "{\"schemaVersion\":2," + config + ",\"layers\":[],\"extra\":1}",
        "{\"schemaVersion\":2," + config + ",\"layers\":null}",
        "{\"schemaVersion\":2," + config + ",\"layers\":[1]}",
        "{\"schemaVersion\":2," + config + ",\"layers\":[],}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest + "\",\"size\":1,\"from\":null},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\\u0062\",\"digest\":\"" + digest + "\",\"size\":1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"caf\xC3\xA9\",\"digest\":\"" + digest + "\",\"size\":1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest + "\",\"size\":18446744073709551616},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest + "\"},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"a\",\"digest\":\"" + digest + "\",\"size\":-1},\"layers\":[]}",
    };
    for (const std::string& text : declined) {
        INFO(text);
        CHECK(!scan_plain_manifest(text));
    }
    std::string too_many = "{\"schemaVersion\":2," + config + ",\"layers\":[";
    const std::string layer = "{\"mediaType\":\"a\",\"digest\":\"d\",\"size\":1}";  // short: the text stays under 4 MiB
    for (uint64_t i = 0; i <= kMaxLayers; ++i) too_many += (i ? "," : "") + layer;
    too_many += "]}";
    CHECK(!scan_plain_manifest(too_many));
    CHECK(std::string(code_name(parse_manifest(too_many).diagnostics.front().code)) == "E_TOO_MANY_LAYERS");
}

TEST_CASE("every one-byte change of a manifest reads the same by both routes", "[ollama]") {
    const std::string text = sample_manifest();
    const std::string bytes = std::string("\"\\ {}[],:0129-.eaz\t\n") + '\0' + "\x7F\x80\xC3\xFF";
    size_t taken = 0, changes = 0;
    for (size_t at = 0; at <= text.size(); ++at)
        for (char c : bytes) {
            std::string inserted = text;
            inserted.insert(at, 1, c);
            taken += agrees(inserted);
            ++changes;
            if (at == text.size()) continue;
            std::string replaced = text;
            replaced[at] = c;
            taken += agrees(replaced);
            std::string deleted = text;
            deleted.erase(at, 1);
            taken += agrees(deleted);
            changes += 2;
        }
    // Changes inside strings and spaces between tokens stay plain; the scanner takes a good share.
    CHECK(taken > changes / 10);
    CHECK(taken < changes);
}
