// The view of a registry's model (registry_view.h) on manifests that name one text blob many
// times, or more text than a view holds: each blob is fetched once and held once, and a text
// layer past the budget is an error at that layer, never fetched.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/registry_view.h"
#include "registry_fixture.h"

using namespace mlens;

namespace {

// The demo store served as a registry, with the manifest of tiny-llama:q4_0 to add layers to.
struct ServedStore : test::RegistryFixture {
    nlohmann::json manifest = nlohmann::json::parse(manifest_text("library/tiny-llama/q4_0"));

    // Serves `text` as a blob of the model and gives a system layer naming it, of `size` bytes.
    nlohmann::json text_layer(const std::string& text, size_t size) {
        const std::string digest = "sha256:" + sha256_hex_digest(text);
        registry.serve("/v2/library/tiny-llama/blobs/" + digest, text);
        return {{"mediaType", "application/vnd.ollama.image.system"}, {"digest", digest}, {"size", size}};
    }

    size_t requests_for(const nlohmann::json& layer) const {
        size_t n = 0;
        for (const test::LoggedRequest& r : registry.log()) n += r.target.ends_with("/blobs/" + layer["digest"].get<std::string>());
        return n;
    }

    // The view of `manifest` served under the tag "hostile", its text held within `budget`.
    ManifestView view(uint64_t budget) {
        registry.serve("/v2/library/tiny-llama/manifests/hostile", manifest.dump());
        registry.clear_log();
        const RegistryReference reference{registry.base_url(), *parse_model_reference("tiny-llama:hostile")};
        auto fetched = fetch_registry_manifest(reference);
        REQUIRE(fetched);
        return view_registry_model(reference, *fetched, nullptr, kMaxTextBlobBytes, budget);
    }
};

}  // namespace

TEST_CASE("a text blob a registry's manifest names many times is fetched once and held once", "[remote][ollama]") {
    ServedStore served;
    const nlohmann::json repeated = served.text_layer(std::string(300000, 's'), 300000);
    const size_t first = served.manifest["layers"].size();
    for (int i = 0; i < 100; ++i) served.manifest["layers"].push_back(repeated);
    const ManifestView view = served.view(kMaxViewTextBytes);
    CHECK(served.requests_for(repeated) == 1);
    REQUIRE(view.layers.size() == first + 100);
    REQUIRE(view.layers[first].text);
    CHECK(view.layers[first].text->text.size() == 300000);
    for (size_t i = first; i < view.layers.size(); ++i) {
        CHECK(view.layers[i].text == view.layers[first].text);
        CHECK_FALSE(view.layers[i].text_error);
    }
}

TEST_CASE("text layers past what a registry's view holds are E_TOO_LARGE at their layer and never fetched", "[remote][ollama]") {
    ServedStore served;
    const nlohmann::json a = served.text_layer(std::string(1000, 'a'), 1000), b = served.text_layer(std::string(1000, 'b'), 1000),
                         c = served.text_layer(std::string(1000, 'c'), 1000);
    // A layer that says 10 bytes of a blob of 5000 is read only to what the budget has left.
    const nlohmann::json understated = served.text_layer(std::string(5000, 'u'), 10);
    const size_t first = served.manifest["layers"].size();
    for (const nlohmann::json& layer : {a, b, c, a, c, understated}) served.manifest["layers"].push_back(layer);
    // The demo model's template, system, params and license come first.
    uint64_t demo_texts = 0;
    for (size_t i = 1; i < first; ++i) demo_texts += served.manifest["layers"][i]["size"].get<uint64_t>();
    const ManifestView view = served.view(demo_texts + 2500);
    REQUIRE(view.layers.size() == first + 6);
    for (size_t i : {first, first + 1, first + 3}) {
        INFO(i);
        REQUIRE(view.layers[i].text);
        CHECK_FALSE(view.layers[i].text_error);
    }
    CHECK(view.layers[first + 3].text == view.layers[first].text);
    for (size_t i : {first + 2, first + 4}) {
        INFO(i);
        CHECK_FALSE(view.layers[i].text);
        REQUIRE(view.layers[i].text_error);
        CHECK(view.layers[i].text_error->code == ErrorCode::E_TOO_LARGE);
        CHECK(view.layers[i].text_error->message ==
              "not read: the text layers before it hold " + std::to_string(demo_texts + 2000) + " bytes of the " +
                  std::to_string(demo_texts + 2500) + " all text layers may hold (max_view_text_bytes)");
    }
    CHECK(served.requests_for(a) == 1);
    CHECK(served.requests_for(c) == 0);
    const LayerView& cut = view.layers[first + 5];
    REQUIRE(cut.text);
    CHECK(cut.text->text == std::string(500, 'u'));
    CHECK(cut.text->size == 5000);
    REQUIRE(cut.text_error);
    CHECK(cut.text_error->code == ErrorCode::E_SIZE_MISMATCH);
    // The errors are the layers' findings, each at its layer.
    std::vector<std::string> fields;
    for (const Diagnostic& d : view_findings(view)) fields.push_back(d.field);
    CHECK(fields ==
          std::vector<std::string>{"layers[" + std::to_string(first + 2) + "]", "layers[" + std::to_string(first + 4) + "]",
                                   "layers[" + std::to_string(first + 5) + "]"});
}
