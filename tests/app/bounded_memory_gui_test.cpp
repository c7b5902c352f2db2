// The Weights and Model error analyses in bounded memory (analysis_memory.h): first values of rows
// far longer than what is shown, and a 1 TiB sparse tensor worked through until cancelled.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <memory>
#include <string>
#include <vector>

#include "memory_watch.h"
#include "mlens/analysis/weights_inspection.h"
#include "mlens/open/target.h"
#include "mlens/util/analysis_memory.h"
#include "sparse_models.h"
#include "state/model_error_run.h"
#include "test_paths.h"

using namespace mlens;
using mlens::test::TempDir;

namespace {

std::shared_ptr<const Model> open_shared(const std::string& path) {
    auto model = open_model(path);
    REQUIRE(model.ok());
    return std::make_shared<const Model>(std::move(model).value());
}

}  // namespace

TEST_CASE("the Weights analysis of rows of 2^26 values reads only the first values it shows", "[gui-weights][bounded]") {
    TempDir dir;
    // Q4_0 [2^26, 3], zero but for block 0 of row 1, whose d = 1.0 makes its 32 values -8.
    const uint64_t row = uint64_t{1} << 26;
    auto offsets = test::write_sparse_gguf(dir.file("rows.gguf"), {{"w", GGML_TYPE_Q4_0, {row, 3}}});
    REQUIRE(offsets.size() == 1);
    REQUIRE(test::patch_file(dir.file("rows.gguf"), offsets[0] + row / 32 * 18, {0x00, 0x3C}));
    WeightsRequest rq;
    rq.model = open_shared(dir.file("rows.gguf"));
    rq.want_scales = false;
    WeightsResult r;
    const uint64_t grew = test::peak_growth_bytes([&] { analyze_weights(rq, r, nullptr); });
    REQUIRE(r.error.empty());
    CHECK(r.stage == kWeightsStages);
    REQUIRE(r.first_values.size() == 3);
    CHECK(r.first_values[0] == std::vector<float>(12, 0.0f));
    CHECK(r.first_values[1] == std::vector<float>(12, -8.0f));
    CHECK(r.first_values[2] == std::vector<float>(12, 0.0f));
    CHECK(r.stats->min == -8.0);
    CHECK(r.stats->zeros == 3 * row - 32);
#ifndef __SANITIZE_ADDRESS__
    CHECK(grew < kAnalysisMemoryBound);
#endif
}

TEST_CASE("the Weights and Model error analyses of a 1 TiB sparse tensor stop on cancel in bounded memory",
          "[gui-weights][gui-model-error][bounded]") {
    TempDir dir;
    REQUIRE(test::write_sparse_gguf(dir.file("huge.gguf"), {{"w", GGML_TYPE_F16, {uint64_t{1} << 37, 4}}}).size() == 1);
    const std::shared_ptr<const Model> model = open_shared(dir.file("huge.gguf"));

    WeightsRequest weights;
    weights.model = model;
    WeightsResult analysed;
    uint64_t grew = test::run_cancelled_after_progress([&](JobContext* job) { analyze_weights(weights, analysed, job); });
    CHECK(analysed.cancelled);
#ifndef __SANITIZE_ADDRESS__
    CHECK(grew < kAnalysisMemoryBound);
#endif

    ModelErrorRun run;
    run.reference = model;
    run.model = model;
    std::optional<ErrorCode> stopped;
    grew = test::run_cancelled_after_progress([&](JobContext* job) {
        Result<ModelErrorRun> measured = run_model_error(run, job);
        if (!measured) stopped = measured.error().code;
    });
    CHECK(stopped == ErrorCode::E_CANCELLED);
#ifndef __SANITIZE_ADDRESS__
    CHECK(grew < kAnalysisMemoryBound);
#endif
}
