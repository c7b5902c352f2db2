// Requantization that answers the question: the reference chosen (a more precise counterpart,
// else the tensor itself with a note), the default types by row size, and quantizing with an
// importance matrix exactly as ggml does when llama-quantize hands it one.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "imatrix_fixture.h"
#include "mlens/analysis/requant.h"
#include "mlens/analysis/requant_reference.h"
#include "mlens/formats/gguf_reader.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr uint64_t kRow = 256, kRowsPerExpert = 2, kExperts = 3;

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// Per-expert sums of squares and token counts for the stacked tensor "exps" ([256, 2, 3]):
// strongly uneven columns, so an importance changes what ggml chooses.
test::ImatrixFixtureEntry exps_entry() {
    test::ImatrixFixtureEntry e{"exps", kRow, {20, 5, 9}, {}};
    for (uint64_t x = 0; x < kExperts; ++x)
        for (uint64_t c = 0; c < kRow; ++c) e.sums.push_back(static_cast<float>(((c * 37 + x * 11) % 97) * ((c % 8 == x) ? 40 : 1)));
    return e;
}

// The RMSE of `values` quantized row by row with each expert's importance (sums / count) handed
// straight to ggml_quantize_chunk, as llama-quantize does, and decoded again.
double rmse_with_importance(const std::vector<float>& values, const test::ImatrixFixtureEntry& e, ggml_type type) {
    const size_t row_bytes = ggml_row_size(type, kRow);
    std::vector<uint8_t> q(row_bytes);
    std::vector<float> back(kRow), weights(kRow);
    double sum = 0;
    for (uint64_t r = 0; r < values.size() / kRow; ++r) {
        const uint64_t x = r / kRowsPerExpert;
        for (uint64_t c = 0; c < kRow; ++c) weights[c] = e.sums[x * kRow + c] / e.counts[x];
        ggml_quantize_chunk(type, values.data() + r * kRow, q.data(), 0, 1, kRow, weights.data());
        ggml_get_type_traits(type)->to_float(q.data(), back.data(), kRow);
        for (uint64_t c = 0; c < kRow; ++c) sum += std::pow(double(values[r * kRow + c]) - back[c], 2);
    }
    return std::sqrt(sum / static_cast<double>(values.size()));
}

}  // namespace

TEST_CASE("the default requantization types are those that fit the row size", "[requant]") {
    auto names = [](uint64_t row, bool importance) {
        std::vector<std::string> out;
        for (uint32_t t : default_requant_types(row, importance)) out.push_back(ggml_type_name(static_cast<ggml_type>(t)));
        return out;
    };
    CHECK(names(64, false) == std::vector<std::string>{"q4_0", "q8_0", "q4_1", "q5_0", "q5_1", "iq4_nl"});
    CHECK(names(4096, false) == std::vector<std::string>{"q4_0", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"});
    CHECK(names(4096, true) ==
          std::vector<std::string>{"q4_0", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq2_xxs", "iq4_nl", "iq4_xs"});
    CHECK(names(48, false).empty());
}

TEST_CASE("requantizing with an importance matrix gives what ggml gives with those weights", "[requant][imatrix]") {
    const std::vector<float> values = test::test_signal(kRow * kRowsPerExpert * kExperts, 9);
    const test::ImatrixFixtureEntry entry = exps_entry();
    Result<Imatrix> m = read_imatrix(memory_source(test::gguf_imatrix_bytes({entry}, {"d"}, 1, 64)));
    REQUIRE(m.ok());
    Result<ColumnImportance> importance = importance_for(*m, "exps", kRow, kRowsPerExpert * kExperts, std::nullopt);
    REQUIRE(importance.ok());
    VectorSource reference(values);
    auto rows = requantize(reference, kRow, {GGML_TYPE_IQ2_XXS, GGML_TYPE_Q4_K, GGML_TYPE_Q4_0}, nullptr, 0, &*importance);
    REQUIRE(rows.ok());
    for (size_t i = 0; i < 3; ++i) {
        const RequantRow& r = (*rows)[i];
        INFO(r.type_name);
        REQUIRE(r.skipped.empty());
        CHECK_FALSE(r.needs_imatrix);
        CHECK(r.with_importance);
        CHECK(r.error.rmse == Approx(rmse_with_importance(values, entry, static_cast<ggml_type>(r.ggml_type))).epsilon(1e-9));
    }
    // The importance matters: without it Q4_K differs, and IQ2_XXS is not run.
    auto plain = requantize(reference, kRow, {GGML_TYPE_IQ2_XXS, GGML_TYPE_Q4_K});
    REQUIRE(plain.ok());
    CHECK((*plain)[0].needs_imatrix);
    CHECK((*plain)[1].error.rmse != (*rows)[1].error.rmse);
    // One expert alone takes that expert's run.
    const std::vector<float> expert2(values.begin() + 2 * kRow * kRowsPerExpert, values.end());
    Result<ColumnImportance> one = importance_for(*m, "exps", kRow, kRowsPerExpert, 2);
    REQUIRE(one.ok());
    VectorSource expert_source(expert2);
    auto expert_rows = requantize(expert_source, kRow, {GGML_TYPE_IQ2_XXS}, nullptr, 0, &*one);
    REQUIRE(expert_rows.ok());
    test::ImatrixFixtureEntry only2 = entry;
    only2.counts = {entry.counts[2]};
    only2.sums.erase(only2.sums.begin(), only2.sums.begin() + 2 * kRow);
    CHECK((*expert_rows)[0].error.rmse == Approx(rmse_with_importance(expert2, only2, GGML_TYPE_IQ2_XXS)).epsilon(1e-9));
}

TEST_CASE("the requantization reference is the more precise counterpart, else the tensor with a note", "[requant]") {
    test::TempDir dir;
    const std::vector<float> values = test::test_signal(kRow * 4, 2);
    test::write_fixture_model(dir.file("f32.gguf"), {{"w", GGML_TYPE_F32, {kRow, 4}, values}});
    test::write_fixture_model(dir.file("q4.gguf"), {{"w", GGML_TYPE_Q4_0, {kRow, 4}, values}});
    test::write_fixture_model(dir.file("q8.gguf"), {{"w", GGML_TYPE_Q8_0, {kRow, 4}, values}});
    test::write_fixture_model(dir.file("other.gguf"), {{"v", GGML_TYPE_F32, {kRow, 4}, values}});
    auto f32 = open_gguf(dir.file("f32.gguf")), q4 = open_gguf(dir.file("q4.gguf")), q8 = open_gguf(dir.file("q8.gguf")),
         other = open_gguf(dir.file("other.gguf"));
    REQUIRE((f32.ok() && q4.ok() && q8.ok() && other.ok()));

    Result<RequantReference> best = open_requant_reference(*q4, 0, std::nullopt, &*f32);
    REQUIRE(best.ok());
    CHECK(best->counterpart);
    CHECK(best->type_name == "F32");
    CHECK(best->note.empty());
    std::vector<float> read(values.size());
    REQUIRE(best->values->source().read(0, values.size(), read.data()).ok());
    CHECK(read == values);

    Result<RequantReference> alone = open_requant_reference(*q4, 0, std::nullopt, nullptr);
    CHECK_FALSE(alone->counterpart);
    CHECK(alone->type_name == "Q4_0");
    CHECK(alone->note ==
          "the reference is this Q4_0 tensor itself (no F32/F16/BF16 file is chosen to compare with): the error is measured from "
          "already-quantized values");
    CHECK(open_requant_reference(*q4, 0, std::nullopt, &*q8)->note ==
          "the reference is this Q4_0 tensor itself (the compared file's tensor is Q8_0, not a more precise float type): the error is "
          "measured from already-quantized values");
    CHECK(open_requant_reference(*q4, 0, std::nullopt, &*other)->note.find("(the compared file has no tensor paired with this one)") !=
          std::string::npos);
    // A float tensor is its own reference, without a note, before a quantized counterpart.
    Result<RequantReference> itself = open_requant_reference(*f32, 0, std::nullopt, &*q4);
    CHECK_FALSE(itself->counterpart);
    CHECK(itself->note.empty());

    // The float twin the app picks among open files: same name and shape, a more precise float type.
    test::write_fixture_model(dir.file("f32-wide.gguf"), {{"w", GGML_TYPE_F32, {kRow * 2, 2}, values}});
    auto wide = open_gguf(dir.file("f32-wide.gguf"));
    REQUIRE(wide.ok());
    CHECK(is_float_twin(*q4, 0, *f32));
    CHECK(is_float_twin(*q8, 0, *f32));
    CHECK_FALSE(is_float_twin(*q4, 0, *q8));  // Q8_0 is no float type
    CHECK_FALSE(is_float_twin(*f32, 0, *q4));
    CHECK_FALSE(is_float_twin(*f32, 0, *f32));  // not more precise
    CHECK_FALSE(is_float_twin(*q4, 0, *other));  // another name
    CHECK_FALSE(is_float_twin(*q4, 0, *wide));  // another shape
    CHECK_FALSE(is_float_twin(*q4, 1, *f32));  // no such tensor
}

TEST_CASE("mlens requant: reference choice, default types by row size, --imatrix", "[requant][cli]") {
    const std::string f32 = demo("tiny-llama-f32.gguf"), q4 = demo("tiny-llama-q4_0.gguf");
    auto self = test::run_mlens({"requant", q4, "blk.0.attn_q.weight", "--json"});
    INFO(self.err);
    REQUIRE(self.exit_status == 0);
    auto j = nlohmann::json::parse(self.out);
    CHECK(j["reference"]["source"] == "self");
    CHECK(j["reference"]["type"] == "Q4_0");
    CHECK(j["note"].get<std::string>().starts_with("the reference is this Q4_0 tensor itself"));
    // Rows of 64: the types whose blocks split them, in the default order.
    std::vector<std::string> types;
    for (const auto& t : j["types"]) types.push_back(t["type"]);
    CHECK(types == std::vector<std::string>{"Q4_0", "Q8_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL"});
    // Q4_0 of Q4_0 values is lossless: the question was not answered, and the row says so.
    CHECK(j["types"][0]["rmse"] == 0.0);
    CHECK(j["types"][0]["equals_reference"] == true);
    CHECK(j["types"][1]["equals_reference"] == false);
    auto self_text = test::run_mlens({"requant", q4, "blk.0.attn_q.weight", "--types", "Q4_0,Q8_0"});
    REQUIRE(self_text.exit_status == 0);
    std::vector<std::string> lines;
    std::istringstream out(self_text.out);
    for (std::string line; std::getline(out, line);) lines.push_back(line);
    REQUIRE(lines.size() == 5);  // reference, note, header, Q4_0, Q8_0
    CHECK(lines[3].starts_with("Q4_0 "));
    CHECK(lines[3].ends_with("same values as the reference"));
    CHECK(lines[3].find("inf") == std::string::npos);
    CHECK(lines[4].starts_with("Q8_0 "));
    CHECK(lines[4].find("same values") == std::string::npos);

    auto counterpart = test::run_mlens({"requant", q4, "blk.0.attn_q.weight", "--reference", f32, "--types", "Q4_0", "--json"});
    REQUIRE(counterpart.exit_status == 0);
    auto c = nlohmann::json::parse(counterpart.out);
    CHECK(c["reference"]["source"] == "counterpart");
    CHECK(c["reference"]["file"] == f32);
    CHECK(c["reference_type"] == "F32");
    CHECK_FALSE(c.contains("note"));
    CHECK(c["types"][0]["rmse"].get<double>() > 0);
    CHECK(c["types"][0]["equals_reference"] == false);
    auto text = test::run_mlens({"requant", q4, "blk.0.attn_q.weight", "--reference", f32, "--types", "Q8_0"});
    CHECK(text.out.starts_with("reference blk.0.attn_q.weight (F32) in " + f32 + "\nTYPE "));

    // --imatrix: IQ2_XXS runs with the importance, with the figures ggml gives; GGUF and legacy.
    test::TempDir dir;
    const std::vector<float> values = test::test_signal(kRow * kRowsPerExpert * kExperts, 9);
    test::write_fixture_model(dir.file("moe.gguf"), {{"exps", GGML_TYPE_F32, {kRow, kRowsPerExpert, kExperts}, values}});
    const test::ImatrixFixtureEntry entry = exps_entry();
    test::write_whole_file(dir.file("im.gguf"), test::gguf_imatrix_bytes({entry}, {"d"}, 1, 64));
    auto with = test::run_mlens({"requant", dir.file("moe.gguf"), "exps", "--imatrix", dir.file("im.gguf"), "--json"});
    INFO(with.err);
    REQUIRE(with.exit_status == 0);
    auto w = nlohmann::json::parse(with.out);
    CHECK(w["imatrix"]["entry"] == "exps");
    CHECK(w["imatrix"]["format"] == "GGUF");
    REQUIRE(w["types"].size() == 10);
    CHECK(w["types"][7]["type"] == "IQ2_XXS");
    CHECK(w["types"][7]["with_imatrix"] == true);
    CHECK(w["types"][7]["rmse"].get<double>() == Approx(rmse_with_importance(values, entry, GGML_TYPE_IQ2_XXS)).epsilon(1e-9));
    auto without = test::run_mlens({"requant", dir.file("moe.gguf"), "exps", "--types", "IQ2_XXS", "--json"});
    CHECK(nlohmann::json::parse(without.out)["types"][0]["needs_imatrix"] == true);

    // The legacy file keeps (sum / count) * ncall per expert and one ncall: the same importance.
    test::ImatrixFixtureEntry legacy = entry;
    legacy.counts = {10};
    for (uint64_t i = 0; i < legacy.sums.size(); ++i) legacy.sums[i] = entry.sums[i] / entry.counts[i / kRow] * 10;
    test::write_whole_file(dir.file("im.dat"), test::legacy_imatrix_bytes({legacy}, 1, "d"));
    auto dat = test::run_mlens(
        {"requant", dir.file("moe.gguf"), "exps", "--imatrix", dir.file("im.dat"), "--expert", "1", "--types", "IQ2_XXS", "--json"});
    INFO(dat.err);
    REQUIRE(dat.exit_status == 0);
    auto d = nlohmann::json::parse(dat.out);
    CHECK(d["imatrix"]["format"] == "legacy .dat");
    CHECK(d["types"][0]["with_imatrix"] == true);

    // A tensor the matrix has no entry for is quantized without importance, as llama-quantize does.
    auto missing = test::run_mlens({"requant", f32, "blk.0.attn_q.weight", "--imatrix", dir.file("im.gguf")});
    CHECK(missing.exit_status == 0);
    CHECK(missing.err ==
          "note: " + dir.file("im.gguf") + " has no entry for blk.0.attn_q.weight: requantized without importance, as llama-quantize does\n");
}
