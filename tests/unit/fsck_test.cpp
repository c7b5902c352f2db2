// fsck on planted defects: GGUF files written from exact bytes (raw_gguf) and an MLX tensor blob,
// each defect found at its exact location; the same files clean give no finding; llama.cpp's
// ggml_validate_row_data agrees with every NaN/Inf finding.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "mlens/analysis/fsck.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/truncation.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/mlx_quant.h"
#include "model_fixture.h"
#include "raw_gguf.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using test::RawTensor;

namespace {

std::vector<uint8_t> quantized(ggml_type type, const std::vector<float>& values, int64_t row) {
    std::vector<uint8_t> out(ggml_row_size(type, row) * (values.size() / row));
    ggml_quantize_chunk(type, values.data(), out.data(), 0, static_cast<int64_t>(values.size()) / row, row, nullptr);
    return out;
}

std::vector<uint8_t> f16_bytes(const std::vector<float>& values) {
    std::vector<uint8_t> out(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
        ggml_fp16_t h = ggml_fp32_to_fp16(values[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& values) {
    std::vector<uint8_t> out(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

// Values whose every row and column hold non-zero values.
std::vector<float> signal(uint64_t n, uint32_t seed) {
    std::vector<float> v = test::test_signal(n, seed);
    for (float& x : v) x += (x >= 0 ? 0.25f : -0.25f);
    return v;
}

// The demo-shaped model: 4 stacked Q4_K experts of 2 rows, an F16 projection, an F32 norm and
// two F32 embeddings; `defects` plants the defects in it.
std::vector<RawTensor> model_tensors(bool defects) {
    std::vector<RawTensor> ts;
    std::vector<uint8_t> experts = quantized(GGML_TYPE_Q4_K, signal(256 * 2 * 4, 3), 256);
    const size_t row = 144, expert = 2 * row;
    if (defects) {
        const uint16_t nan = 0x7E00;
        std::memcpy(experts.data() + 3 * expert + row, &nan, 2);  // expert 3, row 1, block 0: d = NaN
        std::fill(experts.begin() + expert, experts.begin() + 2 * expert, 0);  // expert 1 all zero
        std::copy(experts.begin(), experts.begin() + expert, experts.begin() + 2 * expert);  // expert 2 = expert 0
    }
    ts.push_back({"blk.0.ffn_gate_exps.weight", GGML_TYPE_Q4_K, {256, 2, 4}, experts});
    std::vector<float> q = signal(64 * 4, 5);
    if (defects) std::fill(q.begin() + 2 * 64, q.begin() + 3 * 64, 0.0f);  // row 2 all zero
    ts.push_back({"blk.0.attn_q.weight", GGML_TYPE_F16, {64, 4}, f16_bytes(q)});
    std::vector<float> norm = signal(64, 7);
    if (defects) norm[5] = 1e6f;
    ts.push_back({"blk.0.attn_norm.weight", GGML_TYPE_F32, {64}, f32_bytes(norm)});
    const std::vector<float> embd = signal(32 * 8, 9);
    ts.push_back({"token_embd.weight", GGML_TYPE_F32, {32, 8}, f32_bytes(embd)});
    ts.push_back({"output.weight", GGML_TYPE_F32, {32, 8}, f32_bytes(defects ? embd : signal(32 * 8, 11))});
    return ts;
}

Model write_and_open(const test::TempDir& dir, const std::vector<RawTensor>& tensors) {
    const std::string path = dir.file("model.gguf");
    REQUIRE(test::write_raw_gguf(path, tensors).ok());
    auto opened = open_gguf(path);
    REQUIRE(opened.ok());
    REQUIRE(opened->error_count() == 0);
    return std::move(*opened);
}

FsckReport scan(const Model& m, unsigned threads = 2) {
    auto r = fsck_model(m, nullptr, threads);
    INFO((r ? std::string() : r.error().to_string()));
    REQUIRE(r.ok());
    return std::move(*r);
}

std::string all_lines(const FsckReport& r) {
    std::string s;
    for (const Finding& f : r.findings) s += finding_line(f) + "\n";
    return s;
}

}  // namespace

TEST_CASE("fsck finds every planted defect at its exact location", "[fsck]") {
    test::TempDir dir;
    const Model m = write_and_open(dir, model_tensors(true));
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    const uint64_t experts_at = m.find_tensor("blk.0.ffn_gate_exps.weight")->data_offset;
    const uint64_t q_at = m.find_tensor("blk.0.attn_q.weight")->data_offset;
    const uint64_t norm_at = m.find_tensor("blk.0.attn_norm.weight")->data_offset;
    const uint64_t out_at = m.find_tensor("output.weight")->data_offset;
    const std::vector<std::string> want = {
        "error F_NAN blk.0.ffn_gate_exps.weight expert 3 row 1 block 0 offset=" + std::to_string(experts_at + 7 * 144) + ": 256 NaN values",
        "error F_SCALE_NAN d blk.0.ffn_gate_exps.weight expert 3 row 1 block 0 offset=" + std::to_string(experts_at + 7 * 144) +
            ": 1 block whose d is NaN",
        "warning F_DEAD_EXPERT blk.0.ffn_gate_exps.weight expert 1 row 0 block 0 offset=" + std::to_string(experts_at + 2 * 144) +
            ": expert 1 is all zero",
        "warning F_DUPLICATE_EXPERT blk.0.ffn_gate_exps.weight expert 2 row 0 block 0 offset=" + std::to_string(experts_at + 4 * 144) +
            ": expert 2 has the same bytes as expert 0",
        "warning F_ZERO_ROWS blk.0.attn_q.weight row 2 block 0 offset=" + std::to_string(q_at + 2 * 64 * 2) + ": 1 row is all zero",
        "warning F_BEYOND_F16 blk.0.attn_norm.weight row 0 block 5 offset=" + std::to_string(norm_at + 5 * 4) +
            ": 1 value beyond the F16 range (|x| > 65504), first 1e+06",
        "warning F_DUPLICATE_TENSOR output.weight row 0 block 0 offset=" + std::to_string(out_at) +
            ": same type, shape and bytes as token_embd.weight",
    };
    std::vector<std::string> got;
    for (const Finding& f : r.findings) got.push_back(finding_line(f));
    CHECK(got == want);
    REQUIRE(r.findings.size() == want.size());
    const Finding& nan = r.findings[0];
    REQUIRE(nan.locations.size() == kFsckMaxLocations);
    for (size_t i = 0; i < kFsckMaxLocations; ++i) CHECK(nan.locations[i].element == 7 * 256 + i);
    CHECK(r.findings[3].other_expert == std::optional<uint64_t>(0));
    CHECK(r.findings[6].other_tensor == std::optional<std::string>("token_embd.weight"));
    CHECK(r.count(FindingSeverity::error) == 2);
    CHECK(r.tensors_scanned == 5);
    CHECK(r.values_scanned == 256 * 8 + 256 + 64 + 2 * 256);

    SECTION("one thread gives the same findings") {
        const FsckReport one = scan(m, 1);
        CHECK(all_lines(one) == all_lines(r));
    }
}

TEST_CASE("fsck of the same model without defects finds nothing", "[fsck]") {
    test::TempDir dir;
    const Model m = write_and_open(dir, model_tensors(false));
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    CHECK(r.findings.empty());
    CHECK(r.bytes_scanned == 144 * 8 + 64 * 4 * 2 + 64 * 4 + 2 * 32 * 8 * 4);
}

TEST_CASE("fsck draws no zero-column verdict from a tensor whose rows could not be read", "[fsck]") {
    test::TempDir dir;
    const Model m = write_and_open(dir, model_tensors(false));
    // Opened whole, then cut under the open model: the last tensors' reads fail.
    const TensorInfo* output = m.find_tensor("output.weight");
    REQUIRE(output);
    std::filesystem::resize_file(dir.file("model.gguf"), output->data_offset + 32 * 4);
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    bool read_failed = false;
    for (const Finding& f : r.findings) {
        if (f.tensor != "output.weight") continue;
        if (f.code == ErrorCode::F_READ_FAILED) {
            read_failed = true;
            // The finding says why: the read's own error (on a remote model, the network's).
            CHECK(f.message.find("could not be read: cannot read ") != std::string::npos);
            CHECK(f.message.find("bytes of output.weight") != std::string::npos);
        }
        CHECK(f.code != ErrorCode::F_ZERO_COLUMNS);
        CHECK(f.code != ErrorCode::F_ZERO_TENSOR);
    }
    CHECK(read_failed);
}

TEST_CASE("ggml_validate_row_data agrees with every NaN and Inf finding", "[fsck]") {
    for (bool defects : {true, false}) {
        test::TempDir dir;
        const std::vector<RawTensor> tensors = model_tensors(defects);
        const Model m = write_and_open(dir, tensors);
        const FsckReport r = scan(m);
        for (const RawTensor& t : tensors) {
            bool broken = false;
            for (const Finding& f : r.findings)
                broken |= f.tensor == t.name &&
                    (f.code == ErrorCode::F_NAN || f.code == ErrorCode::F_INF || f.code == ErrorCode::F_SCALE_NAN ||
                     f.code == ErrorCode::F_SCALE_INF);
            INFO(t.name << (defects ? " with defects" : " clean"));
            CHECK(ggml_validate_row_data(static_cast<ggml_type>(t.type), t.bytes.data(), t.bytes.size()) == !broken);
        }
    }
}

TEST_CASE("fsck locates an infinite MLX group scale in its scale tensor", "[fsck]") {
    const std::vector<float> values = signal(4 * 64, 13);
    auto q = mlx_quantize(MlxMode::affine, 4, 32, values.data(), values.size());
    REQUIRE(q.ok());
    std::vector<float> scales = q->scales;
    const size_t bad = 2 * 2 + 1;  // row 2, group 1
    scales[bad] = INFINITY;
    std::vector<uint8_t> packed(q->packed.size() * 4);
    std::memcpy(packed.data(), q->packed.data(), packed.size());
    test::SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4")
        .metadata("group_size", "32")
        .tensor("w", "U32", "[4,8]", packed)
        .tensor("w.scale", "F32", "[4,2]", f32_bytes(scales))
        .tensor("w.bias", "F32", "[4,2]", f32_bytes(q->biases));
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m);
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    // Codes of the bad group: q = 0 gives 0 * inf = NaN, every other code +inf (the bias is finite).
    uint64_t zero_codes = 0;
    for (uint64_t k = 0; k < 32; ++k) {
        const uint64_t element = bad * 32 + k;
        zero_codes += ((q->packed[element / 8] >> (4 * (element % 8))) & 0xF) == 0;
    }
    const uint64_t scale_at = m.find_tensor("w.scale")->data_offset + bad * 4;
    std::map<std::string, const Finding*> by_code;
    for (const Finding& f : r.findings) by_code[std::string(code_name(f.code))] = &f;
    REQUIRE(by_code.count("F_SCALE_INF"));
    const Finding& inf_scale = *by_code["F_SCALE_INF"];
    CHECK(inf_scale.field == "scale");
    CHECK(inf_scale.count == 1);
    REQUIRE(inf_scale.locations.size() == 1);
    CHECK(inf_scale.locations[0].row == std::optional<uint64_t>(2));
    CHECK(inf_scale.locations[0].block == std::optional<uint64_t>(1));
    CHECK(inf_scale.locations[0].element == bad * 32);
    CHECK(inf_scale.locations[0].offset == std::optional<uint64_t>(scale_at));
    const uint64_t nan_count = by_code.count("F_NAN") ? by_code["F_NAN"]->count : 0;
    const uint64_t inf_count = by_code.count("F_INF") ? by_code["F_INF"]->count : 0;
    CHECK(nan_count == zero_codes);
    CHECK(inf_count == 32 - zero_codes);
    CHECK(r.findings.size() == size_t{1} + (nan_count > 0) + (inf_count > 0));
}

TEST_CASE("fsck summarizes the readers' region problems and skips tensors without data", "[fsck]") {
    test::TempDir dir;
    const std::string path = dir.file("short.gguf");
    REQUIRE(test::write_raw_gguf(path, model_tensors(false)).ok());
    std::vector<uint8_t> bytes = test::read_whole_file(path);
    bytes.resize(bytes.size() - 100);
    Model m = read_gguf(memory_source(bytes, "short.gguf"));
    mark_missing_data(m);
    REQUIRE(m.error_count() > 0);
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    // The summary first, then the one cut tensor under it; no out-of-bounds row of its own.
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0].code == ErrorCode::E_TRUNCATED_DATA);
    CHECK(!r.findings[0].tensor_index);
    CHECK(r.findings[0].field == "data");
    CHECK(r.findings[1].code == ErrorCode::E_TRUNCATED_DATA);
    CHECK(r.findings[1].severity == FindingSeverity::error);
    CHECK(r.findings[1].tensor == "output.weight");
    CHECK(r.findings[1].tensor_index == std::optional<size_t>(4));
    CHECK(r.findings[1].message == "cut: 924 of 1024 bytes present");
    // The four whole tensors, and the 7 whole rows of 32 values present of the cut one.
    CHECK(r.tensors_scanned == 5);
    CHECK(r.tensors_scanned_in_part == 1);
    CHECK(r.values_scanned == 256 * 2 * 4 + 64 * 4 + 64 + 32 * 8 + 7 * 32);
}

TEST_CASE("mlens fsck prints the findings and exits 1 on errors, 0 on a clean file", "[fsck][cli]") {
    test::TempDir dir;
    REQUIRE(test::write_raw_gguf(dir.file("bad.gguf"), model_tensors(true)).ok());
    REQUIRE(test::write_raw_gguf(dir.file("good.gguf"), model_tensors(false)).ok());
    auto bad = test::run_mlens({"fsck", dir.file("bad.gguf")});
    CHECK(bad.exit_status == 1);
    CHECK(bad.out.find("error F_SCALE_NAN d blk.0.ffn_gate_exps.weight expert 3 row 1 block 0 offset=") != std::string::npos);
    CHECK(bad.out.find(": broken (2 errors, 5 warnings, 0 notes; 5 of 5 tensors, ") != std::string::npos);
    auto json = test::run_mlens({"fsck", dir.file("bad.gguf"), "--json"});
    CHECK(json.exit_status == 1);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j["errors"] == 2);
    CHECK(j["findings"][3]["code"] == "F_DUPLICATE_EXPERT");
    CHECK(j["findings"][3]["other_expert"] == 0);
    CHECK(j["findings"][3]["locations"][0]["expert"] == 2);
    auto good = test::run_mlens({"fsck", dir.file("good.gguf")});
    CHECK(good.exit_status == 0);
    CHECK(good.out.find(": ok (0 errors, 0 warnings, 0 notes; 5 of 5 tensors, ") == good.out.find(": ok"));
    CHECK(good.out.rfind("\n", good.out.size() - 2) == std::string::npos);  // one line: no findings
}

TEST_CASE("fsck finds a dead and a duplicated expert among per-expert MLX tensors", "[fsck]") {
    test::SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4").metadata("group_size", "32");
    std::vector<std::vector<uint8_t>> packed(4), scales(4), biases(4);
    for (uint32_t e = 0; e < 4; ++e) {
        const std::vector<float> values = signal(2 * 64, 20 + e);
        auto q = mlx_quantize(MlxMode::affine, 4, 32, values.data(), values.size());
        REQUIRE(q.ok());
        packed[e].resize(q->packed.size() * 4);
        std::memcpy(packed[e].data(), q->packed.data(), packed[e].size());
        scales[e] = f32_bytes(q->scales);
        biases[e] = f32_bytes(q->biases);
    }
    packed[2] = packed[0], scales[2] = scales[0], biases[2] = biases[0];  // expert 2 = expert 0
    std::fill(packed[3].begin(), packed[3].end(), 0);  // expert 3: q = 0, bias 0
    biases[3] = f32_bytes(std::vector<float>(4, 0.0f));
    for (uint32_t e = 0; e < 4; ++e) {
        const std::string name = "model.layers.0.mlp.experts." + std::to_string(e) + ".gate_proj.weight";
        sb.tensor(name, "U32", "[2,8]", packed[e])
            .tensor(name + ".scale", "F32", "[2,2]", scales[e])
            .tensor(name + ".bias", "F32", "[2,2]", biases[e]);
    }
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m);
    REQUIRE(m.groups.size() == 1);
    const FsckReport r = scan(m);
    INFO(all_lines(r));
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0].code == ErrorCode::F_DUPLICATE_EXPERT);
    CHECK(r.findings[0].tensor == "model.layers.0.mlp.experts.2.gate_proj.weight");
    CHECK(r.findings[0].other_tensor == std::optional<std::string>("model.layers.0.mlp.experts.0.gate_proj.weight"));
    CHECK(r.findings[0].other_expert == std::optional<uint64_t>(0));
    CHECK(r.findings[0].locations[0].expert == std::optional<uint64_t>(2));
    CHECK(r.findings[1].code == ErrorCode::F_DEAD_EXPERT);
    CHECK(r.findings[1].message == "expert 3 is all zero");
}

TEST_CASE("fsck reads Q8_0 on its codes and finds what the decoded values hold", "[fsck]") {
    // Q8_0 [64, 5]: row 1 block 1 has d = NaN, row 3 block 1 has d = +Inf over some zero codes
    // (0 × Inf is NaN), row 2 is all zero codes, column 8 is zero in every row, and row 4 block 0
    // has d = 0 over non-zero codes. The same values decoded by ggml and stored as F32 are the
    // oracle: every value finding and zero row/column is at the same elements.
    const int64_t row = 64, rows = 5;
    std::vector<float> values = signal(row * rows, 17);
    for (int64_t r = 0; r < rows; ++r) values[r * row + 8] = 0.0f;
    std::vector<uint8_t> q8 = quantized(GGML_TYPE_Q8_0, values, row);
    const size_t block = 34, row_bytes = 2 * block;
    const uint16_t nan = 0x7E00, inf = 0x7C00, zero = 0;
    std::memcpy(q8.data() + 1 * row_bytes + block, &nan, 2);
    std::memcpy(q8.data() + 3 * row_bytes + block, &inf, 2);
    for (size_t k = 0; k < 32; k += 3) q8[3 * row_bytes + block + 2 + k] = 0;
    for (size_t b = 0; b < 2; ++b) std::fill_n(q8.begin() + 2 * row_bytes + b * block + 2, 32, 0);
    std::memcpy(q8.data() + 4 * row_bytes, &zero, 2);
    const uint64_t zero_codes_under_inf = std::count(q8.begin() + 3 * row_bytes + block + 2, q8.begin() + 4 * row_bytes, 0);
    std::vector<float> decoded(values.size());
    ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(q8.data(), decoded.data(), row * rows);

    test::TempDir dir;
    const Model codes = write_and_open(dir, {{"w", GGML_TYPE_Q8_0, {row, rows}, q8}});
    test::TempDir dir_f32;
    const Model oracle = write_and_open(dir_f32, {{"w", GGML_TYPE_F32, {row, rows}, f32_bytes(decoded)}});
    const FsckReport got = scan(codes), want = scan(oracle);
    INFO(all_lines(got) << "--- F32 of the decoded values:\n" << all_lines(want));
    auto by_code = [](const FsckReport& r) {
        std::map<std::string, std::pair<uint64_t, std::vector<uint64_t>>> out;
        for (const Finding& f : r.findings) {
            if (code_name(f.code).rfind("F_SCALE", 0) == 0) continue;
            std::vector<uint64_t> elements;
            for (const FsckLocation& l : f.locations) elements.push_back(l.element);
            out[std::string(code_name(f.code))] = {f.count, elements};
        }
        return out;
    };
    const auto got_values = by_code(got);
    CHECK(got_values == by_code(want));
    CHECK(zero_codes_under_inf >= 11);
    CHECK(got_values.at("F_NAN").first == 32 + zero_codes_under_inf);
    CHECK(got_values.at("F_INF").first == 32 - zero_codes_under_inf);
    CHECK(got_values.at("F_ZERO_ROWS").second == std::vector<uint64_t>{2 * row});
    CHECK(got_values.at("F_ZERO_COLUMNS").second == std::vector<uint64_t>{8});
    std::vector<std::string> scales;
    for (const Finding& f : got.findings)
        if (code_name(f.code).rfind("F_SCALE", 0) == 0)
            scales.push_back(std::string(code_name(f.code)) + " " + f.field + " " + std::to_string(f.locations[0].element));
    CHECK(scales == std::vector<std::string>{"F_SCALE_INF d 224", "F_SCALE_NAN d 96"});
}
