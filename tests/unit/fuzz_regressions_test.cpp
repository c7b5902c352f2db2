// Every input a fuzz target ever failed on (tests/fuzz/regressions/) goes through that target's
// pipeline again; in the sanitizer build this is where a reintroduced bug shows up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "build_paths.h"
#include "fuzz_pipelines.h"
#include "mlens/quant/imatrix.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// The regression inputs whose names start with `prefix`, sorted; there is at least one.
std::vector<std::string> regression_inputs(const std::string& prefix) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(MLENS_FUZZ_REGRESSIONS))
        if (entry.path().filename().string().starts_with(prefix)) files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE_FALSE(files.empty());
    return files;
}

}  // namespace

TEST_CASE("inputs the compat fuzzer once failed on are handled", "[fuzz-regression]") {
    for (const std::string& path : regression_inputs("compat-")) {
        INFO(path);
        std::vector<uint8_t> bytes = test::read_whole_file(path);
        REQUIRE_FALSE(bytes.empty());
        fuzz::run_compat_pipeline(bytes.data(), bytes.size());
        // The pipeline's answers for the crashing input: it still parses and plans.
        Model model = read_gguf(memory_source(bytes));
        CHECK(compat::plan_compat(model).text.arch_before == model.get_string("general.architecture").value_or(""));
    }
}

TEST_CASE("inputs the imatrix fuzzer once failed on are summarized", "[fuzz-regression]") {
    for (const std::string& path : regression_inputs("imatrix-")) {
        INFO(path);
        Result<Imatrix> m = read_imatrix(memory_source(test::read_whole_file(path)));
        if (!m) continue;
        // A NaN column sum once reached the histogram's conversion to a bin index: undefined
        // behaviour, which the sanitizer build reports here. The summary still comes back.
        for (const ImatrixEntry& e : m->entries) CHECK(summarize_entry(*m, e, 16).ok());
    }
}
