// The command line guides a wrong guess: a mistyped command named with the nearest one, --range
// checked and the values outside it counted, help without placeholders, the tags a store holds
// for a missing one, the store below a folder above it, enum names in kv and diff, and compare's
// pooled figures, worst rows and blocks, and warnings when the models are unlike.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include <ggml.h>

#include "cli_runner.h"
#include "mlens/text/number_format.h"
#include "gguf_builder.h"
#include "mlens/text/nearest_name.h"
#include "model_fixture.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A figure as text tables print it (cli_common.h number_text): four significant digits.
std::string number(double v) { return significant(v, 4); }

// T1 (one llama tensor) with general.file_type set.
std::string write_with_file_type(const TempDir& dir, const std::string& name, uint32_t file_type) {
    write_whole_file(dir.file(name), t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_u32("general.file_type", file_type); }));
    return dir.file(name);
}

std::vector<float> ramp(size_t n) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), 0.0f);
    return v;
}

}  // namespace

TEST_CASE("nearest_name finds the command a typo meant", "[cli_guidance]") {
    CHECK(edit_distance("infoo", "info") == 1);
    CHECK(edit_distance("comapre", "compare") == 2);
    CHECK(edit_distance("", "kv") == 2);
    const std::vector<std::string> commands = {"info", "kv", "tensors", "compare", "compat", "store", "show"};
    CHECK(nearest_name("infoo", commands) == "info");
    CHECK(nearest_name("comapre", commands) == "compare");
    CHECK(nearest_name("tensor", commands) == "tensors");
    CHECK(nearest_name("sho", commands) == "show");
    CHECK_FALSE(nearest_name("xyzzy", commands));
}

TEST_CASE("an unknown command is named with the nearest one", "[cli_guidance][cli]") {
    CliRun run = run_mlens({"infoo", "x"});
    CHECK(run.exit_status == 2);
    CHECK(run.out.empty());
    REQUIRE(run.err_lines().size() == 3);
    CHECK(run.err_lines()[0] == "error: unknown command 'infoo'; did you mean 'info'?");
    CHECK(run.err_lines()[1].starts_with("commands: info kv tensors dump check store show verify stats hist compare"));

    CliRun far = run_mlens({"xyzzy"});
    CHECK(far.exit_status == 2);
    CHECK(far.err_lines()[0] == "error: unknown command 'xyzzy'");
}

TEST_CASE("help text names its arguments without placeholders", "[cli_guidance][cli]") {
    for (const char* command : {"store", "show", "hist", "compare", "kv", "diff"}) {
        CliRun run = run_mlens({command, "--help"});
        INFO(command << "\n" << run.out);
        CHECK(run.exit_status == 0);
        CHECK_FALSE(contains(run.out, "0x"));
        CHECK_FALSE(contains(run.out, "ARGS"));
    }
}

TEST_CASE("hist --range wants LO < HI and counts the values outside it", "[cli_guidance][cli]") {
    TempDir dir;
    write_fixture_model(dir.file("ramp.gguf"), {{"ramp", GGML_TYPE_F32, {256}, ramp(256)}});
    for (std::vector<std::string> range : {std::vector<std::string>{"1", "-1"}, {"2", "2"}, {"0", "nan"}}) {
        CliRun bad = run_mlens({"hist", dir.file("ramp.gguf"), "ramp", "--range", range[0], range[1]});
        INFO(bad.err);
        CHECK(bad.exit_status == 2);
        CHECK(bad.out.empty());
        CHECK(contains(bad.err, "error: --range LO HI needs finite numbers with LO < HI, got "));
    }
    // 0..255: 10 values below 10, 11 in [10, 20], 235 above 20.
    CliRun text = run_mlens({"hist", dir.file("ramp.gguf"), "ramp", "--range", "10", "20", "--bins", "11"});
    INFO(text.out << text.err);
    REQUIRE(text.exit_status == 0);
    CHECK(text.out.starts_with("range 10 .. 20 (mode custom)"));
    CHECK(text.out.find("; below: 10, above: 235\n") != std::string::npos);
    CliRun json = run_mlens({"hist", dir.file("ramp.gguf"), "ramp", "--range", "10", "20", "--bins", "11", "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["below"] == 10);
    CHECK(j["above"] == 235);
    uint64_t inside = 0;
    for (uint64_t c : j["counts"]) inside += c;
    CHECK(inside == 11);
}

TEST_CASE("numeric options outside their range are usage errors", "[cli_guidance][cli]") {
    TempDir dir;
    write_fixture_model(dir.file("ramp.gguf"), {{"ramp", GGML_TYPE_F32, {256}, ramp(256)}});
    const std::string m = dir.file("ramp.gguf");
    for (const std::vector<std::string>& args : {std::vector<std::string>{"stats", m, "ramp", "--expert", "-3"},
                                                 {"requant", m, "ramp", "--types", "Q4_0", "--expert", "-1"},
                                                 {"hist", m, "ramp", "--bins", "0"},
                                                 {"run", m, "-p", "hi", "--top-p", "2"},
                                                 {"run", m, "-p", "hi", "--temp", "-1"},
                                                 {"run", m, "-p", "hi", "--threads", "0"},
                                                 {"tokenize", m, "hi", "--ctx", "0"}}) {
        CliRun run = run_mlens(args);
        INFO(args[0] << " " << args[args.size() - 2] << " " << args.back() << ": " << run.err);
        CHECK(run.exit_status == 2);
        CHECK(run.out.empty());
    }
}

TEST_CASE("a missing tag lists the tags the store holds - a near name is suggested", "[cli_guidance][cli]") {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    b.add_tiny();
    b.write_manifest("registry.ollama.ai/library/tiny/q4", manifest_json(b.tiny_config_layer(), {b.tiny_model_layer()}));
    const std::string root = std::filesystem::canonical(dir.path()).string();

    CliRun show = run_mlens({"show", "tiny:q8", "--store", dir.path()});
    INFO(show.err);
    CHECK(show.exit_status == 1);
    CHECK(contains(show.err, "tiny:q8"));
    CHECK(contains(show.err, "tags of tiny in " + root + ": latest q4\n"));

    CliRun typo = run_mlens({"store", dir.path(), "tiyn"});
    INFO(typo.err);
    CHECK(typo.exit_status == 1);
    CHECK(contains(typo.err, "did you mean tiny:latest? (mlens store " + root + " lists the models)\n"));
}

TEST_CASE("a folder above a store names the store below it", "[cli_guidance][cli]") {
    TempDir dir;
    OllamaStoreBuilder b{dir.file("models")};
    b.add_tiny();
    CliRun run = run_mlens({"store", dir.path()});
    INFO(run.out << run.err);
    CHECK(run.exit_status == 1);
    CHECK(run.err ==
          "error: " + dir.path() + " is not an Ollama store (it has no manifests/ folder); the store below it is " + dir.path() +
              "/models\n");
    CHECK(run_mlens({"store", dir.file("models")}).exit_status == 0);
}

TEST_CASE("kv and diff name enum values as the app does", "[cli_guidance][cli]") {
    TempDir dir;
    const std::string f16 = write_with_file_type(dir, "f16.gguf", 1), q4km = write_with_file_type(dir, "q4km.gguf", 15);

    CliRun kv = run_mlens({"kv", f16});
    INFO(kv.out << kv.err);
    REQUIRE(kv.exit_status == 0);
    CHECK(contains(kv.out, "general.file_type     UINT32  1 (F16)\n"));
    CliRun kv_json = run_mlens({"kv", f16, "--json"});
    REQUIRE(kv_json.exit_status == 0);
    const auto entries = nlohmann::json::parse(kv_json.out);
    REQUIRE(entries.size() == 2);
    CHECK(entries[1]["key"] == "general.file_type");
    CHECK(entries[1]["value"] == 1);
    CHECK(entries[1]["name"] == "F16");
    CHECK_FALSE(entries[0].contains("name"));

    CliRun diff = run_mlens({"diff", f16, q4km});
    INFO(diff.out << diff.err);
    REQUIRE(diff.exit_status == 0);
    CHECK(contains(diff.out, "~  general.file_type  UINT32 1 (F16)  UINT32 15 (Q4_K_M)\n"));
    CliRun diff_json = run_mlens({"diff", f16, q4km, "--json"});
    REQUIRE(diff_json.exit_status == 0);
    const auto meta = nlohmann::json::parse(diff_json.out)["metadata"];
    REQUIRE(meta.size() == 1);
    CHECK(meta[0]["value_a"] == "1");
    CHECK(meta[0]["name_a"] == "F16");
    CHECK(meta[0]["name_b"] == "Q4_K_M");
}

TEST_CASE("compare prints the pooled figures, the worst rows and blocks, and warns when models are unlike", "[cli_guidance][cli]") {
    TempDir dir;
    const std::vector<FixtureTensor> f32 = {{"blk.0.attn_q.weight", GGML_TYPE_F32, {64, 4}, test_signal(256, 1)},
                                            {"blk.1.attn_q.weight", GGML_TYPE_F32, {64, 2}, test_signal(128, 2)}};
    std::vector<FixtureTensor> q8 = f32;
    for (FixtureTensor& t : q8) t.ggml_type = GGML_TYPE_Q8_0;
    write_fixture_model(dir.file("a.gguf"), f32);
    write_fixture_model(dir.file("b.gguf"), q8);

    CliRun json = run_mlens({"compare", dir.file("a.gguf"), dir.file("b.gguf"), "--json"});
    REQUIRE(json.exit_status == 0);
    CHECK(json.err.empty());
    const auto compared = nlohmann::json::parse(json.out);
    const auto& rows = compared["tensors"];
    REQUIRE(rows.size() == 2);
    double err2 = 0;
    uint64_t count = 0;
    for (const auto& r : rows) {
        const double rmse = r["rmse"];
        err2 += rmse * rmse * r["count"].get<double>();
        count += r["count"].get<uint64_t>();
    }
    CHECK(count == 384);
    // The pooled figures, as text mode prints them.
    CHECK(compared["overall"]["tensors"] == 2);
    CHECK(compared["overall"]["count"] == 384);
    CHECK(compared["overall"]["rmse"].get<double>() == Approx(std::sqrt(err2 / 384)).epsilon(1e-12));
    CliRun text = run_mlens({"compare", dir.file("a.gguf"), dir.file("b.gguf")});
    INFO(text.out << text.err);
    REQUIRE(text.exit_status == 0);
    CHECK(contains(text.out, "overall (2 tensors, 384 values pooled): RMSE " + number(std::sqrt(err2 / 384)) + "  NMSE "));
    CHECK_FALSE(contains(text.out, "worst rows"));

    CliRun one = run_mlens({"compare", dir.file("a.gguf"), dir.file("b.gguf"), "--tensor", "blk.0.attn_q.weight"});
    INFO(one.out);
    REQUIRE(one.exit_status == 0);
    CHECK(contains(one.out, "overall (1 tensor, 256 values pooled): RMSE " + number(rows[0]["rmse"].get<double>())));
    CHECK(contains(one.out, "worst rows\nROW  RMSE"));
    CHECK(contains(one.out, "worst blocks of 32 values\nBLOCK  ROW  COLUMN  RMSE"));
    CHECK(contains(one.out,
                   "\n  " + std::to_string(rows[0]["worst_rows"][0]["row"].get<uint64_t>()) + "  " +
                       number(rows[0]["worst_rows"][0]["rmse"].get<double>())));

    // Another architecture, and a tensor only B has.
    std::vector<FixtureTensor> other = f32;
    other.push_back({"blk.2.attn_q.weight", GGML_TYPE_F32, {64, 1}, test_signal(64, 3)});
    write_fixture_model(dir.file("c.gguf"), other, "qwen2");
    CliRun unlike = run_mlens({"compare", dir.file("a.gguf"), dir.file("c.gguf")});
    INFO(unlike.err);
    CHECK(unlike.exit_status == 0);
    REQUIRE(unlike.err_lines().size() == 2);
    CHECK(unlike.err_lines()[0] == "warning: the architectures differ: A is llama, B is qwen2; the figures compare unrelated weights");
    CHECK(unlike.err_lines()[1] == "warning: the tensor sets differ: 0 tensors only in A, 1 only in B (mlens diff lists them)");
}
