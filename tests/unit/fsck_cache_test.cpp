// fsck through the cache database (analysis/fsck_json.h): a second scan of an unchanged file is
// the stored report, read without touching a tensor; CachedScan::refresh reads every tensor again
// and gives the same report.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "mlens/analysis/fsck_json.h"
#include "mlens/io/cache_database.h"
#include "mlens/job.h"
#include "mlens/open/target.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("a health scan is taken from the cache unless asked to scan again", "[cache][fsck]") {
    test::TempDir dir;
    const std::shared_ptr<CacheDatabase> db = CacheDatabase::open(dir.file("cache"));
    REQUIRE(db->enabled());
    auto model = open_model(std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf");
    REQUIRE(model);

    // The scan reports progress as it reads tensors; an answer from the cache reads none.
    auto scan = [&](CachedScan mode, double& progress) {
        JobContext job;
        Result<FsckReport> report = fsck_model_cached(*model, db.get(), &job, 2, mode);
        REQUIRE(report);
        progress = job.progress();
        return fsck_report_json(*report);
    };
    double first_progress = 0, cached_progress = 0, again_progress = 0;
    const nlohmann::json first = scan(CachedScan::reuse, first_progress);
    CHECK(first_progress > 0.0);
    CHECK(first["tensors_scanned"] == 21);

    const nlohmann::json cached = scan(CachedScan::reuse, cached_progress);
    CHECK(cached_progress == 0.0);
    CHECK(cached == first);

    const nlohmann::json again = scan(CachedScan::refresh, again_progress);
    CHECK(again_progress > 0.0);
    CHECK(again == first);
}
