// The links panels post for each other (panel_links.h) read back what they write, reach the panel
// that takes them through route_link, and a Health finding's link opens the Weights panel at the
// finding's expert, row and block (weights_location_view.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <ggml.h>

#include "headless.h"
#include "model_fixture.h"
#include "panels/health_panel.h"
#include "panels/panel_links.h"
#include "panels/weights_panel.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::FixtureTensor;
using mlens::test::TempDir;
using mlens::test::test_signal;

namespace {

constexpr const char* kExperts = "blk.0.ffn_up_exps.weight";
// The NaN sits in expert 2, row 1, column 40 of the [64, 4, 3] stack.
constexpr uint64_t kNanExpert = 2, kNanRow = 1, kNanColumn = 40;

std::vector<float> expert_values() {
    std::vector<float> v = test_signal(64 * 4 * 3, 5);
    v[kNanExpert * 256 + kNanRow * 64 + kNanColumn] = std::numeric_limits<float>::quiet_NaN();
    return v;
}

std::vector<FixtureTensor> tensors() {
    return {{"blk.0.attn_q.weight", GGML_TYPE_Q8_0, {64, 4}, test_signal(64 * 4, 1)},
            {kExperts, GGML_TYPE_F32, {64, 4, 3}, expert_values()},
            {"output.weight", GGML_TYPE_F32, {64, 2}, test_signal(128, 2)}};
}

// The fixture model, written and open in a headless workspace.
struct FixtureDocument : test::WorkspaceHarness {
    TempDir dir;
    Document& doc;
    FixtureDocument() : doc(open_written(dir.file("m.gguf"))) {}
    Document& open_written(const std::string& path) {
        test::write_fixture_model(path, tensors());
        return open_ready(path);
    }
};

size_t tensor_index(const Model& m, const std::string& name) {
    for (size_t i = 0; i < m.tensors.size(); ++i)
        if (m.tensors[i].name == name) return i;
    FAIL("no tensor " << name);
    return 0;
}

std::vector<std::unique_ptr<Panel>> registry_panels() {
    std::vector<std::unique_ptr<Panel>> panels;
    for (const PanelInfo& info : panel_registry()) panels.push_back(info.make());
    return panels;
}

template <typename T>
T& panel_of(std::vector<std::unique_ptr<Panel>>& panels, std::string_view id) {
    const auto& registry = panel_registry();
    for (size_t i = 0; i < registry.size(); ++i)
        if (id == registry[i].id) return dynamic_cast<T&>(*panels[i]);
    FAIL("no panel " << id);
    throw;
}

}  // namespace

TEST_CASE("panel links read back what they write", "[app][links]") {
    FixtureDocument h;
    Document& doc = h.doc;
    const DocumentIndex& index = *doc.index();
    const Model& m = *doc.model();

    REQUIRE_FALSE(index.metadata_groups.empty());
    for (size_t g = 0; g < index.metadata_groups.size(); ++g) {
        std::optional<LinkedIndex> back = parse_metadata_group_link(metadata_group_link(index, g), index);
        REQUIRE(back);
        CHECK(back->index == g);
    }
    CHECK(metadata_group_link(index, 0) == "metadata:general.*");
    CHECK(parse_metadata_group_link("metadata:general.", index)->index == std::optional<size_t>(0));
    CHECK_FALSE(parse_metadata_group_link("metadata:", index)->index);
    CHECK_FALSE(parse_metadata_group_link("metadata:nothing.*", index));
    CHECK_FALSE(parse_metadata_group_link("tensor-layer:0", index));

    REQUIRE(index.layers.size() == 2);
    CHECK(tensor_layer_link(index, 0) == "tensor-layer:0");
    CHECK(tensor_layer_link(index, 1) == "tensor-layer:non-block");
    CHECK(parse_tensor_layer_link("tensor-layer:non-block", index)->index == std::optional<size_t>(1));
    CHECK(parse_tensor_layer_link("tensor-layer:0", index)->index == std::optional<size_t>(0));
    CHECK_FALSE(parse_tensor_layer_link("tensor-layer:", index)->index);
    CHECK_FALSE(parse_tensor_layer_link("tensor-layer:7", index));
    CHECK_FALSE(parse_tensor_layer_link("tensor-layer:0x", index));

    const size_t experts = tensor_index(m, kExperts);
    CHECK(weights_link(kExperts) == "weights:blk.0.ffn_up_exps.weight");
    CHECK(weights_link(kExperts, 2) == "weights:blk.0.ffn_up_exps.weight@expert=2");
    CHECK(weights_link(kExperts, 2, 1, 40) == "weights:blk.0.ffn_up_exps.weight@expert=2#row=1,block=40");
    CHECK(weights_link(kExperts, std::nullopt, 3) == "weights:blk.0.ffn_up_exps.weight#row=3");
    CHECK(parse_weights_link(weights_link(kExperts, 2, 1, 40), m) == WeightsLink{experts, 2, 1, 40});
    CHECK(parse_weights_link(weights_link(kExperts, std::nullopt, 3), m) == WeightsLink{experts, std::nullopt, 3, std::nullopt});
    CHECK(parse_weights_link("weights:output.weight", m) ==
          WeightsLink{tensor_index(m, "output.weight"), std::nullopt, std::nullopt, std::nullopt});
    CHECK_FALSE(parse_weights_link("weights:no.such.weight", m));
    CHECK_FALSE(parse_weights_link("weights:output.weight#row=x", m));
    CHECK_FALSE(parse_weights_link("weights:output.weight@expert=", m));
    CHECK_FALSE(parse_weights_link("requant:output.weight", m));

    CHECK(metadata_array_link(5) == "metadata-array:5");
    CHECK_FALSE(parse_metadata_array_link("metadata-array:0", m));  // general.architecture: a string
    CHECK_FALSE(parse_metadata_array_link("metadata-array:100000", m));
}

TEST_CASE("a Health finding opens the Weights panel at its expert, row and block", "[app][health][gui-weights]") {
    FixtureDocument h;
    Document& doc = h.doc;
    const Model& m = *doc.model();
    auto panels = registry_panels();
    HealthPanel& health = panel_of<HealthPanel>(panels, "health");
    WeightsPanel& weights = panel_of<WeightsPanel>(panels, "weights");
    PanelContext ctx = h.context_of(doc);
    auto draw = [&](Panel& panel, int frames) {
        for (int i = 0; i < frames; ++i) h.imgui.window_frame("panel", 1400, 900, [&] { panel.draw(ctx); });
    };

    draw(health, 1);
    h.jobs.wait_all();
    draw(health, 2);
    REQUIRE(health.report() != nullptr);
    const Finding* nan = nullptr;
    for (const Finding& f : health.report()->findings)
        if (f.code == ErrorCode::F_NAN) nan = &f;
    REQUIRE(nan != nullptr);
    REQUIRE(nan->tensor_index == tensor_index(m, kExperts));
    const std::string link = finding_weights_link(*nan, kExperts);
    CHECK(link == "weights:blk.0.ffn_up_exps.weight@expert=2#row=1,block=40");

    const PanelInfo* taker = route_link(link, doc, panels);
    REQUIRE(taker != nullptr);
    CHECK(std::string(taker->id) == "weights");
    CHECK(doc.selection == Selection{SelectionKind::tensor, tensor_index(m, kExperts)});
    // The analysis, then the row it opens with: each a job.
    for (int round = 0; round < 3; ++round) {
        draw(weights, 2);
        h.jobs.wait_all();
    }
    draw(weights, 1);
    CHECK(weights.tensor_shown() == tensor_index(m, kExperts));
    CHECK(weights.expert_shown() == std::optional<uint64_t>(kNanExpert));

    const RowBlocks* row = weights.location_view().row();
    REQUIRE(row != nullptr);
    CHECK(row->row == kNanRow);
    CHECK(row->rows == 4);
    CHECK(row->type_block_length == 1);
    CHECK(row->block_length == kElementBlock);
    REQUIRE(row->blocks.size() == 2);
    // F32 blocks of one value are listed 32 at a time: column 40 is in the second.
    CHECK(weights.location_view().highlighted() == std::optional<uint64_t>(1));
    const std::vector<float> want = expert_values();
    REQUIRE(row->values.size() == 64);
    double squares = 0;
    float absmax = 0;
    for (uint64_t c = 0; c < 64; ++c) {
        const float v = want[kNanExpert * 256 + kNanRow * 64 + c];
        if (c == kNanColumn) {
            CHECK(std::isnan(row->values[c]));
            continue;
        }
        CHECK(row->values[c] == v);
        squares += static_cast<double>(v) * v;
        absmax = std::max(absmax, std::fabs(v));
    }
    CHECK(row->nonfinite == 1);
    CHECK(row->rms == Approx(std::sqrt(squares / 63)).epsilon(1e-12));
    CHECK(row->absmax == absmax);
    CHECK(row->blocks[0].nonfinite == 0);
    CHECK(row->blocks[1].nonfinite == 1);

    // Another tensor from the table forgets the place; a plain link shows no row.
    REQUIRE(route_link(weights_link("output.weight"), doc, panels) != nullptr);
    draw(weights, 2);
    CHECK(weights.tensor_shown() == tensor_index(m, "output.weight"));
    CHECK_FALSE(weights.expert_shown());
}

TEST_CASE("read_row_blocks lists a quantized row by the type's blocks and refuses a row beyond the tensor", "[gui-weights]") {
    FixtureDocument h;
    Document& doc = h.doc;
    const size_t q = tensor_index(*doc.model(), "blk.0.attn_q.weight");
    Result<RowBlocks> row = read_row_blocks(*doc.model(), q, std::nullopt, 3);
    REQUIRE(row);
    CHECK(row->type_block_length == 32);
    CHECK(row->block_length == 32);
    CHECK(row->blocks.size() == 2);
    CHECK(row->values.size() == 64);
    CHECK(row->nonfinite == 0);
    Result<RowBlocks> beyond = read_row_blocks(*doc.model(), q, std::nullopt, 4);
    REQUIRE_FALSE(beyond);
    CHECK(beyond.error().code == ErrorCode::E_RANGE);
    CHECK(beyond.error().message == "row 4 is beyond the 4 rows of the tensor");
}
