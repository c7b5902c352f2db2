// mlens hist --png / --csv: the files are written, the PNG is a valid picture of the expected
// size, and the CSV bins hold every element.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("mlens hist exports PNG and CSV", "[hist_export]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("m.gguf"), {{"w", GGML_TYPE_Q8_0, {256, 8}, test::test_signal(2048, 6)}});
    auto run =
        test::run_mlens({"hist", dir.file("m.gguf"), "w", "--bins", "40", "--png", dir.file("h.png"), "--log", "--csv", dir.file("h.csv")});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    auto png = test::read_whole_file(dir.file("h.png"));
    REQUIRE(png.size() > 33);
    const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    CHECK(std::equal(signature, signature + 8, png.begin()));
    auto be32 = [&](size_t at) {
        return (uint32_t(png[at]) << 24) | (uint32_t(png[at + 1]) << 16) | (uint32_t(png[at + 2]) << 8) | png[at + 3];
    };
    CHECK(be32(16) == 900);  // IHDR width
    CHECK(be32(20) == 420);  // IHDR height

    std::ifstream csv(dir.file("h.csv"));
    std::string line;
    REQUIRE(std::getline(csv, line));
    CHECK(line == "bin_lo,bin_hi,count");
    uint64_t rows = 0, total = 0;
    while (std::getline(csv, line)) {
        ++rows;
        total += std::stoull(line.substr(line.rfind(',') + 1));
    }
    CHECK(rows == 40);
    CHECK(total == 2048);
    // The output says what was written, then is what it is without the files.
    CHECK(run.out.rfind("wrote " + dir.file("h.png") + "\nwrote " + dir.file("h.csv") + "\nrange ", 0) == 0);
    const auto plain = test::run_mlens({"hist", dir.file("m.gguf"), "w", "--bins", "40", "--json"});
    auto with_files = test::run_mlens({"hist", dir.file("m.gguf"), "w", "--bins", "40", "--json", "--png", dir.file("h.png")});
    REQUIRE(with_files.exit_status == 0);
    nlohmann::json j = nlohmann::json::parse(with_files.out);
    CHECK(j["files"] == nlohmann::json::array({dir.file("h.png")}));
    CHECK(nlohmann::json::parse(plain.out)["files"].empty());
    j.erase("files");
    nlohmann::json p = nlohmann::json::parse(plain.out);
    p.erase("files");
    CHECK(j == p);

    auto bad = test::run_mlens({"hist", dir.file("m.gguf"), "w", "--png", dir.file("missing/dir/h.png")});
    CHECK(bad.exit_status == 1);
    CHECK(bad.err.find("cannot write") != std::string::npos);
}
