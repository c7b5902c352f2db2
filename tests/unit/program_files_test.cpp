// The programs find their companions relative to their own location: this test program sits in
// the build folder's tests/, so the build folder's demo models and worker are found from it.
#include <catch2/catch.hpp>

#include <filesystem>

#include "build_paths.h"
#include "mlens/infer/worker_session.h"
#include "mlens/util/program_files.h"

using namespace mlens;

TEST_CASE("program files are found in the ancestors of the running program", "[install]") {
    const std::filesystem::path self = running_executable();
    CHECK(self.filename() == "mlens_tests");
    const std::string demo = program_file("share/modellens/demo", "assets/demo");
    REQUIRE(!demo.empty());
    CHECK(std::filesystem::equivalent(demo, MLENS_DEMO_DIR));
    CHECK(program_file("share/modellens/no-such-file", "no-such-file").empty());
}

TEST_CASE("the llama.cpp worker of this build folder is found without a compiled-in path", "[install]") {
    const std::filesystem::path worker = llama_worker_executable();
    CHECK(worker.filename() == "mlens-llama-worker");
    CHECK(std::filesystem::equivalent(worker.parent_path().parent_path().parent_path(),
                                      std::filesystem::path(MLENS_DEMO_DIR).parent_path().parent_path()));
}
