// One answer per question: for every demo file and every model of the demo store, the app's
// document (summary, Tensors panel totals), `mlens info --json` and `mlens tensors --json` agree
// on format, architecture, parameter count and tensor count; the Tensors panel and Inspector
// draw tensor-blob models as logical tensors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/analysis/tensor_listing.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_listing.h"
#include "panels/inspector_panel.h"
#include "panels/tensor_panel.h"
#include "workspace_harness.h"

using namespace mlens;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

// Every demo GGUF and every model of the demo store, by the path a user would give.
std::vector<std::string> demo_models() {
    std::vector<std::string> paths = gguf_files_in(MLENS_DEMO_DIR);
    auto store = Store::open(kDemoStore);
    REQUIRE(store.ok());
    for (const ModelListing& m : list_store(*store).value.models) paths.push_back(kDemoStore + "/" + m.ref.name.display());
    return paths;
}

void draw(test::WorkspaceHarness& h, Panel& panel, Document& doc) {
    for (int i = 0; i < 2; ++i) {
        PanelContext ctx = h.context_of(doc);
        h.imgui.window_frame("panel", 1400, 900, [&] { panel.draw(ctx); });
    }
}

}  // namespace

TEST_CASE("the app, info --json and tensors --json agree on every demo model", "[gui-logical]") {
    const std::vector<std::string> paths = demo_models();
    // Five GGUF files and six store models.
    REQUIRE(paths.size() == 11);
    for (const std::string& path : paths) {
        INFO(path);
        test::WorkspaceHarness h;
        Document& doc = h.open_ready(path);
        const ModelSummary& s = doc.index()->summary;
        CHECK(!s.architecture.empty());
        CHECK(s.tensor_count == doc.index()->tensors.size());

        // The Tensors panel lists every logical tensor; its totals are the summary's.
        const TensorListing all = list_tensors(*doc.model(), *doc.index(), TensorQuery{}).value();
        CHECK(all.rows.size() == s.tensor_count);
        CHECK(all.totals.count == s.tensor_count);
        CHECK(all.totals.elements == s.parameters);
        CHECK(all.totals.bytes == s.tensor_bytes);
        CHECK(all.totals.bits_per_weight() == s.bits_per_weight);
        uint64_t layered = 0;
        for (const LayerSummary& l : doc.index()->layers) layered += l.parameters;
        CHECK(layered == s.parameters);

        test::CliRun info = test::run_mlens({"info", path, "--json"});
        INFO(info.err);
        REQUIRE(info.exit_status == 0);
        const auto i = nlohmann::json::parse(info.out);
        CHECK(i["format"] == format_name(s.format));
        CHECK(i["architecture"] == s.architecture);
        CHECK(i["parameters"] == s.parameters);
        CHECK(i["tensor_count"] == s.tensor_count);
        CHECK(i["stored_tensor_count"] == doc.model()->tensors.size());

        test::CliRun tensors = test::run_mlens({"tensors", path, "--json"});
        REQUIRE(tensors.exit_status == 0);
        const auto t = nlohmann::json::parse(tensors.out);
        CHECK(t.size() == s.tensor_count);
        uint64_t parameters = 0, bytes = 0;
        for (const auto& e : t) {
            parameters += e["n_elements"].get<uint64_t>();
            bytes += e["n_bytes"].get<uint64_t>();
        }
        CHECK(parameters == s.parameters);
        CHECK(bytes == s.tensor_bytes);

        // Both panels draw every kind of row: a folded tensor selected when there is one.
        for (const LogicalTensor& lt : doc.index()->tensors)
            if (lt.folded()) {
                doc.select({SelectionKind::tensor, lt.index});
                break;
            }
        TensorPanel table;
        InspectorPanel inspector;
        draw(h, table, doc);
        draw(h, inspector, doc);
        doc.select({SelectionKind::header, 0});
        draw(h, inspector, doc);
    }
}

TEST_CASE("a tensor-blob model's Tensors panel rows are logical tensors", "[gui-logical]") {
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(kDemoStore + "/tiny-moe-shared:int4");
    const Model& m = *doc.model();
    const DocumentIndex& index = *doc.index();
    TensorQuery q;
    q.text = "down_proj";
    const TensorListing l = list_tensors(m, index, q).value();
    REQUIRE(l.rows.size() == 2);
    const LogicalTensor& stacked = index.tensors[l.rows[0].index];
    CHECK(m.tensors[stacked.index].name == "model.layers.0.mlp.experts.down_proj.weight");
    CHECK(stacked.type == "int8 g64");
    CHECK(stacked.ne == std::vector<uint64_t>{64, 64, 4});
    CHECK(expert_text(m, stacked) == "4 experts stacked");
    const LogicalTensor& shared = index.tensors[l.rows[1].index];
    CHECK(m.tensors[shared.index].name == "model.layers.0.mlp.shared_experts.down_proj.weight");
    CHECK(expert_text(m, shared) == "1 expert");
    // int8 g64 of 64 x 64 per expert: 4096 packed bytes, 64 BF16 scales and 64 biases: 8.5 bits.
    CHECK(l.totals.count == 2);
    CHECK(l.totals.elements == 5 * 4096);
    CHECK(l.totals.bytes == 5 * (4096 + 128 + 128));
    CHECK(l.totals.bits_per_weight() == 8.5);
    q.text = ".scale";
    CHECK(list_tensors(m, index, q).value().rows.empty());
    q = TensorQuery{};
    q.sort = TensorColumn::bits_per_weight;
    const TensorListing by_bits = list_tensors(m, index, q).value();
    CHECK(index.tensors[by_bits.rows.front().index].type == "int4 g64");
    CHECK(index.tensors[by_bits.rows.back().index].type == "BF16");
}
