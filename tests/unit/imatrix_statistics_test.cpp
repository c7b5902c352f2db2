// mlens imatrix --statistics against `llama-imatrix --show-statistics` of the pinned llama.cpp on
// the importance matrices it wrote itself (tests/fixtures/imatrix): every row it prints, in its own
// format, and the weighted averages per layer.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "corpus_text.h"
#include "mlens/quant/imatrix_statistics.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kFixtures = MLENS_IMATRIX_FIXTURES;

struct StatisticsRows {
    std::vector<std::string> tensors;  // the per-tensor rows, as printed
    std::vector<std::string> layers;  // the per-layer rows
    int declared_layers = -1;  // "(N layers)" in the second table's title
};

// The rows of both tables in `output`, llama-imatrix's log prefixes ("0.00.002.213 I ") removed.
StatisticsRows statistics_rows(const std::string& output) {
    static const std::regex prefix(R"(^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+ [IWE] )");
    static const std::regex tensor_row(R"(^ *\S+\t\S+ *\t *-?[0-9]+\.[0-9]{2}\t.*%\t *-?[0-9]+\.[0-9]{4}$)");
    static const std::regex layer_row(R"(^ *[0-9]+\t *-?[0-9]+\.[0-9]{2}\t *-?[0-9]+\.[0-9]{4}%\t-?[0-9]+\.[0-9]{4}$)");
    static const std::regex declared(R"(\(([0-9]+) layers\))");
    StatisticsRows rows;
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line)) {
        line = std::regex_replace(line, prefix, "");
        std::smatch m;
        if (std::regex_match(line, tensor_row))
            rows.tensors.push_back(line);
        else if (std::regex_match(line, layer_row))
            rows.layers.push_back(line);
        else if (std::regex_search(line, m, declared))
            rows.declared_layers = std::stoi(m[1]);
    }
    return rows;
}

// llama-imatrix --show-statistics of `file`. Its logger prints from its own thread and is never
// flushed at exit (common/log.cpp), and the tool exits right after logging its tables, so most runs
// lose some or all of them, on an idle machine too: it runs until one printed both whole (its
// output is the same every time), at most 100 times.
StatisticsRows reference_rows(const std::string& file) {
    const std::string command =
        std::string(MLENS_LLAMA_IMATRIX) + " -m " + MLENS_DEMO_DIR + "/tiny-llama-f32.gguf --show-statistics --in-file " + file;
    StatisticsRows rows;
    for (int attempt = 0; attempt < 100; ++attempt) {
        test::ShellRun run = test::run_shell(command);
        REQUIRE(run.exit_status == 0);
        rows = statistics_rows(run.output);
        if (rows.declared_layers >= 0 && static_cast<int>(rows.layers.size()) == rows.declared_layers) break;
    }
    return rows;
}

}  // namespace

TEST_CASE("mlens imatrix --statistics prints llama-imatrix --show-statistics' rows", "[imatrix][cli]") {
    for (const char* name : {"tiny-llama-f32.imatrix.gguf", "tiny-llama-f32.imatrix.dat"}) {
        INFO(name);
        const std::string file = kFixtures + "/" + name;
        StatisticsRows theirs = reference_rows(file);
        REQUIRE(theirs.declared_layers == 2);
        REQUIRE(theirs.layers.size() == 2);
        REQUIRE(theirs.tensors.size() == 14);
        test::CliRun run = test::run_mlens({"imatrix", file, "--statistics"});
        REQUIRE(run.exit_status == 0);
        StatisticsRows ours = statistics_rows(run.out);
        CHECK(ours.layers == theirs.layers);
        // llama-imatrix leaves the order of tensors of one kind with equal sums open.
        std::sort(ours.tensors.begin(), ours.tensors.end());
        std::sort(theirs.tensors.begin(), theirs.tensors.end());
        CHECK(ours.tensors == theirs.tensors);
    }
}

TEST_CASE("imatrix statistics: the first block has no cosine, and JSON carries every figure", "[imatrix][cli]") {
    const nlohmann::json out = test::run_mlens_json({"imatrix", kFixtures + "/tiny-llama-f32.imatrix.gguf", "--statistics", "--json"});
    const nlohmann::json& tensors = out["statistics"]["tensors"];
    REQUIRE(tensors.size() == 14);
    // llama-imatrix's order: by kind, then by Σ(Act²) descending.
    CHECK(tensors[0]["tensor"] == "blk.1.attn_k.weight");
    CHECK(tensors[1]["tensor"] == "blk.0.attn_k.weight");
    CHECK(tensors[1]["cossim"] == 0.0);
    CHECK(tensors[0]["elements"] == 64);
    CHECK(tensors[0]["kind"] == "attn_k");
    CHECK(tensors[0]["layer"] == "1");
    CHECK(out["statistics"]["layers"].size() == 2);
    CHECK(out["statistics"]["without_activations"].empty());
}
