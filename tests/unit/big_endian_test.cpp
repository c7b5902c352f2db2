// Big-endian GGUF tensor data: every type with a defined big-endian layout (gguf_byte_order.h)
// reads as the same values as its little-endian twin in every analysis; our writer's big-endian
// output is byte for byte what gguf-py makes (its endian converter for F32, F16, BF16 and the
// block types, its big-endian writer for the integer types and F64, which the converter refuses);
// a type without a layout is refused with the reason, never decoded.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gguf_builder.h"
#include "gguf_py.h"
#include "mlens/analysis/model_error.h"
#include "mlens/analysis/requant.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "raw_gguf.h"
#include "test_paths.h"

using namespace mlens;
using test::RawTensor;

namespace {

// Equal, or both NaN.
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void check_same_stats(const TensorStats& a, const TensorStats& b) {
    CHECK(a.count == b.count);
    CHECK(a.finite == b.finite);
    CHECK(a.nan == b.nan);
    CHECK(a.pos_inf == b.pos_inf);
    CHECK(a.neg_inf == b.neg_inf);
    CHECK(a.zeros == b.zeros);
    CHECK(same(a.min, b.min));
    CHECK(same(a.max, b.max));
    CHECK(same(a.mean, b.mean));
    CHECK(same(a.std, b.std));
    CHECK(same(a.mean_abs, b.mean_abs));
    CHECK(same(a.kurtosis, b.kurtosis));
    for (size_t p = 0; p < a.percentiles.size(); ++p) CHECK(same(a.percentiles[p], b.percentiles[p]));
    REQUIRE(a.integer_extremes.has_value() == b.integer_extremes.has_value());
    if (a.integer_extremes) {
        CHECK(a.integer_extremes->min == b.integer_extremes->min);
        CHECK(a.integer_extremes->max == b.integer_extremes->max);
    }
}

// Every analysis of tensor `name` gives the same figures in both models: values bit for bit,
// statistics, histogram, block scales, and a Q4_0 requantization.
void check_same_analyses(const Model& le, const Model& be, const std::string& name) {
    INFO(name);
    auto a = TensorView::open(le, name);
    auto b = TensorView::open(be, name);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    std::vector<float> va(a->size()), vb(b->size());
    REQUIRE(a->read(0, va.size(), va.data()).ok());
    REQUIRE(b->read(0, vb.size(), vb.data()).ok());
    REQUIRE(std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0);
    if (a->wide_kind() != WideKind::none) {
        std::vector<long double> wa(a->size()), wb(b->size());
        REQUIRE(a->read_wide(0, wa.size(), wa.data()).ok());
        REQUIRE(b->read_wide(0, wb.size(), wb.data()).ok());
        for (size_t i = 0; i < wa.size(); ++i) CHECK((wa[i] == wb[i] || (std::isnan(wa[i]) && std::isnan(wb[i]))));
    }
    auto sa = compute_stats_and_histogram(*a, 64);
    auto sb = compute_stats_and_histogram(*b, 64);
    REQUIRE(sa.ok());
    REQUIRE(sb.ok());
    check_same_stats(sa->stats, sb->stats);
    CHECK(sa->histogram.counts == sb->histogram.counts);
    auto scales_a = block_scales(*a);
    auto scales_b = block_scales(*b);
    REQUIRE(scales_a.ok() == scales_b.ok());
    if (scales_a.ok()) {
        REQUIRE(scales_a->series.size() == scales_b->series.size());
        for (size_t i = 0; i < scales_a->series.size(); ++i) CHECK(scales_a->series[i].values == scales_b->series[i].values);
    }
    auto ra = requantize(*a, a->row_length(), {GGML_TYPE_Q4_0});
    auto rb = requantize(*b, b->row_length(), {GGML_TYPE_Q4_0});
    REQUIRE(ra.ok() == rb.ok());
    if (ra.ok()) CHECK(same(ra->front().error.rmse, rb->front().error.rmse));
}

template <typename T>
RawTensor raw_tensor(const std::string& name, uint32_t type, const std::vector<T>& values) {
    RawTensor t{name, type, {values.size()}, std::vector<uint8_t>(values.size() * sizeof(T))};
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
}

// A little-endian GGUF of tensors given as their stored bytes, through our writer.
void write_raw_model(const std::string& path, const std::vector<RawTensor>& tensors) { REQUIRE(test::write_raw_gguf(path, tensors).ok()); }

Model open_clean(const std::string& path, bool big_endian) {
    auto m = open_gguf(path);
    REQUIRE(m.ok());
    std::string lines;
    for (const Diagnostic& d : m->diagnostics) lines += d.to_line() + "\n";
    INFO(lines);
    REQUIRE(m->error_count() == 0);
    REQUIRE(m->files[0].big_endian == big_endian);
    return std::move(m).value();
}

void copy_file(const std::string& from, const std::string& to) { test::write_whole_file(to, test::read_whole_file(from)); }

}  // namespace

TEST_CASE(
    "big-endian F32, F16, BF16 and block types: our writer and gguf-py's converter agree, every analysis sees the little-endian values",
    "[big_endian]") {
    test::TempDir dir;
    const uint64_t ne0 = 512, rows = 4;
    const ggml_type types[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_BF16,  GGML_TYPE_Q1_0,  GGML_TYPE_Q4_0, GGML_TYPE_Q8_0,
                               GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_TQ2_0, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4};
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : types)
        tensors.push_back({std::string("t.") + ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t)});
    tensors.push_back({"output_norm.weight", GGML_TYPE_F32, {ne0}, std::vector<float>(ne0, 1.0f)});
    std::vector<float> special = test::test_signal(ne0, 9);
    special[3] = NAN;
    special[10] = INFINITY;
    special[11] = special[12] = -INFINITY;
    tensors.push_back({"special.f32", GGML_TYPE_F32, {ne0}, special});
    tensors.push_back({"special.f16", GGML_TYPE_F16, {ne0}, special});
    test::write_fixture_model(dir.file("le.gguf"), tensors);

    const Model le = open_clean(dir.file("le.gguf"), false);
    REQUIRE(write_gguf(le, dir.file("be.gguf"), nullptr, nullptr, GgufByteOrder::big).ok());
    const auto be_bytes = test::read_whole_file(dir.file("be.gguf"));
    if (auto why = test::gguf_py_unavailable()) {
        WARN("gguf-py's endian converter not run: " << *why);
    } else {
        copy_file(dir.file("le.gguf"), dir.file("gguf-py.gguf"));
        auto failed = test::gguf_py_convert_to_big_endian(dir.file("gguf-py.gguf"));
        INFO(failed.value_or(""));
        REQUIRE(!failed);
        CHECK(test::first_difference(be_bytes, test::read_whole_file(dir.file("gguf-py.gguf"))) == -1);
    }

    const Model be = open_clean(dir.file("be.gguf"), true);
    REQUIRE(be.tensors.size() == le.tensors.size());
    for (const test::FixtureTensor& t : tensors) check_same_analyses(le, be, t.name);

    // The norm of ones, and NaN and the infinities counted as in the little-endian file.
    auto norm = compute_stats(*TensorView::open(be, "output_norm.weight"));
    REQUIRE(norm.ok());
    CHECK(norm->min == 1.0);
    CHECK(norm->max == 1.0);
    for (const char* name : {"special.f32", "special.f16"}) {
        INFO(name);
        auto s = compute_stats(*TensorView::open(be, name));
        REQUIRE(s.ok());
        CHECK(s->nan == 1);
        CHECK(s->pos_inf == 1);
        CHECK(s->neg_inf == 2);
        CHECK(s->inf == 3);
    }

    // compare against the little-endian copy: no error anywhere.
    auto compared = compare_models(le, be, pair_tensors(le, be));
    REQUIRE(compared.ok());
    REQUIRE(compared->tensors.size() == tensors.size());
    for (const TensorError& t : compared->tensors) {
        INFO(t.name_a << ": " << t.failed);
        REQUIRE(t.error);
        CHECK(t.error->max_abs == 0);
        CHECK(t.error->rmse == 0);
    }

    // Written back little-endian (export, convert), the big-endian file is the original, byte for byte.
    REQUIRE(write_gguf(be, dir.file("back.gguf")).ok());
    CHECK(test::first_difference(test::read_whole_file(dir.file("back.gguf")), test::read_whole_file(dir.file("le.gguf"))) == -1);
    // and written big-endian again, it is itself.
    REQUIRE(write_gguf(be, dir.file("again.gguf"), nullptr, nullptr, GgufByteOrder::big).ok());
    CHECK(test::first_difference(test::read_whole_file(dir.file("again.gguf")), be_bytes) == -1);

    // The CLI reads the big-endian file as the little-endian one.
    auto le_run = test::run_mlens({"stats", dir.file("le.gguf"), "t.q8_0", "--json"});
    auto be_run = test::run_mlens({"stats", dir.file("be.gguf"), "t.q8_0", "--json"});
    INFO(le_run.err);
    REQUIRE(le_run.exit_status == 0);
    REQUIRE(be_run.exit_status == 0);
    CHECK(nlohmann::json::parse(le_run.out) == nlohmann::json::parse(be_run.out));
}

TEST_CASE("big-endian integer and F64 tensors: our writer and gguf-py's writer agree, statistics are exact in both byte orders",
          "[big_endian][stats]") {
    test::TempDir dir;
    const int64_t below_2_53 = -9007199254740993;  // -(2^53 + 1): no double holds it
    write_raw_model(
        dir.file("le.gguf"),
        {raw_tensor<int8_t>("i8", GGML_TYPE_I8, {-128, 127, 0, 5}), raw_tensor<int16_t>("i16", GGML_TYPE_I16, {-32768, 32767, 1, 0}),
         raw_tensor<int32_t>("i32", GGML_TYPE_I32, {16777217, 3, -2, INT32_MIN}),
         raw_tensor<int64_t>("i64", GGML_TYPE_I64, {15497244678, below_2_53, 3, -5}),
         raw_tensor<int64_t>("i64.extremes", GGML_TYPE_I64, {INT64_MIN, INT64_MAX}),
         raw_tensor<double>("f64", GGML_TYPE_F64, {-1.30772916114607, 1e300, 2.5, 0.0, NAN, INFINITY, -INFINITY})});
    const Model le = open_clean(dir.file("le.gguf"), false);
    REQUIRE(write_gguf(le, dir.file("be.gguf"), nullptr, nullptr, GgufByteOrder::big).ok());
    if (auto why = test::gguf_py_unavailable()) {
        WARN("gguf-py's writer not run: " << *why);
    } else {
        auto failed = test::gguf_py_write_big_endian(dir.file("le.gguf"), dir.file("gguf-py.gguf"));
        INFO(failed.value_or(""));
        REQUIRE(!failed);
        CHECK(test::first_difference(test::read_whole_file(dir.file("be.gguf")), test::read_whole_file(dir.file("gguf-py.gguf"))) == -1);
    }
    const Model be = open_clean(dir.file("be.gguf"), true);
    for (const char* name : {"i8", "i16", "i32", "i64", "i64.extremes", "f64"}) check_same_analyses(le, be, name);

    for (const Model* m : {&le, &be}) {
        auto i32 = compute_stats(*TensorView::open(*m, "i32"));
        REQUIRE(i32.ok());
        REQUIRE(i32->integer_extremes);
        CHECK(i32->integer_extremes->max == 16777217);
        CHECK(i32->integer_extremes->min == INT32_MIN);
        CHECK(i32->max == 16777217.0);
        CHECK(i32->mean == (16777217.0 + 3 - 2 + INT32_MIN) / 4);

        auto i64 = compute_stats(*TensorView::open(*m, "i64"));
        REQUIRE(i64.ok());
        CHECK(i64->integer_extremes->max == 15497244678);
        CHECK(i64->integer_extremes->min == below_2_53);
        CHECK(i64->max == 15497244678.0);
        const WideInteger sum = WideInteger{15497244678} + below_2_53 + 3 - 5;
        CHECK(i64->mean == static_cast<double>(static_cast<long double>(sum) / 4));

        auto extremes = compute_stats(*TensorView::open(*m, "i64.extremes"));
        REQUIRE(extremes.ok());
        CHECK(extremes->integer_extremes->min == INT64_MIN);
        CHECK(extremes->integer_extremes->max == INT64_MAX);
        CHECK(extremes->mean == -0.5);

        // 1e300 is beyond float: it counts as a finite value, not as the infinity float makes of it.
        auto f64 = compute_stats(*TensorView::open(*m, "f64"));
        REQUIRE(f64.ok());
        CHECK(!f64->integer_extremes);
        CHECK(f64->min == -1.30772916114607);
        CHECK(f64->max == 1e300);
        CHECK(f64->finite == 4);
        CHECK(f64->zeros == 1);
        CHECK(f64->nan == 1);
        CHECK(f64->pos_inf == 1);
        CHECK(f64->neg_inf == 1);
        CHECK(f64->mean == static_cast<double>((-1.30772916114607L + 1e300L + 2.5L) / 4));
    }

    // The CLI prints integers whole, in JSON and in text.
    auto json_run = test::run_mlens({"stats", dir.file("be.gguf"), "i64", "--json"});
    INFO(json_run.err);
    REQUIRE(json_run.exit_status == 0);
    const auto j = nlohmann::json::parse(json_run.out);
    CHECK(j["name"] == "i64");
    CHECK(j["type"] == "I64");
    CHECK(j["shape"] == nlohmann::json::array({4}));
    CHECK(j["shape_order"] == "fastest_first");
    CHECK(j["min"].get<int64_t>() == below_2_53);
    CHECK(j["max"].get<int64_t>() == 15497244678);
    auto text = test::run_mlens({"stats", dir.file("be.gguf"), "i64.extremes"});
    CHECK(text.out.find("-9223372036854775808") != std::string::npos);
    CHECK(text.out.find("9223372036854775807") != std::string::npos);
    auto f64_run = test::run_mlens({"stats", dir.file("be.gguf"), "f64", "--json"});
    REQUIRE(f64_run.exit_status == 0);
    const auto f = nlohmann::json::parse(f64_run.out);
    CHECK(f["min"].get<double>() == -1.30772916114607);
    CHECK(f["pos_inf"] == 1);
    CHECK(f["neg_inf"] == 1);
}

TEST_CASE("a big-endian GGUF of a type without a big-endian layout is refused with the reason, never decoded", "[big_endian]") {
    test::TempDir dir;
    // Q5_K: gguf-py's converter defines no layout for it (its d and dmin are f16 like Q4_K's,
    // but nothing says so), so its values in a big-endian file are unknown.
    test::GgufBuilder b;
    b.big_endian = true;
    b.header(1, 1).kv_string("general.architecture", "llama").tensor_info("blk.0.ffn_up.weight", {256}, GGML_TYPE_Q5_K, 0);
    b.pad_to(32).zeros(ggml_type_size(GGML_TYPE_Q5_K));
    test::write_whole_file(dir.file("be.gguf"), b.bytes);

    auto m = open_gguf(dir.file("be.gguf"));
    REQUIRE(m.ok());
    REQUIRE(m->error_count() == 1);
    const Diagnostic* refused = nullptr;
    for (const Diagnostic& d : m->diagnostics)
        if (d.code == ErrorCode::E_BIG_ENDIAN_TYPE) refused = &d;
    REQUIRE(refused);
    CHECK(refused->field == "tensors[0].type");
    CHECK(refused->message.find("Q5_K has no defined big-endian layout") != std::string::npos);
    REQUIRE(m->tensors.size() == 1);

    auto view = TensorView::open(*m, "blk.0.ffn_up.weight");
    REQUIRE(!view.ok());
    CHECK(view.error().code == ErrorCode::E_BIG_ENDIAN_TYPE);
    CHECK(view.error().message.find("Q5_K has no defined big-endian layout") != std::string::npos);
    uint8_t byte;
    Status read = m->read_tensor_bytes(0, 0, 1, &byte);
    REQUIRE(!read.ok());
    CHECK(read.error().code == ErrorCode::E_BIG_ENDIAN_TYPE);
    // Written little-endian, it would carry bytes of unknown order: refused, nothing written.
    Status written = write_gguf(*m, dir.file("le.gguf"));
    REQUIRE(!written.ok());
    CHECK(written.error().code == ErrorCode::E_BIG_ENDIAN_TYPE);
    CHECK(!std::filesystem::exists(dir.file("le.gguf")));

    auto stats = test::run_mlens({"stats", dir.file("be.gguf"), "blk.0.ffn_up.weight"});
    CHECK(stats.exit_status != 0);
    CHECK(stats.out.empty());
    CHECK(stats.err.find("Q5_K has no defined big-endian layout") != std::string::npos);
    auto check = test::run_mlens({"check", dir.file("be.gguf")});
    CHECK(check.exit_status != 0);
    CHECK(check.err.find("E_BIG_ENDIAN_TYPE") != std::string::npos);

    // Our writer refuses to make such a file, as gguf-py's converter does.
    test::write_fixture_model(dir.file("q5k.gguf"), {{"blk.0.ffn_up.weight", GGML_TYPE_Q5_K, {256}, test::test_signal(256)}});
    const Model le = open_clean(dir.file("q5k.gguf"), false);
    Status be_written = write_gguf(le, dir.file("q5k-be.gguf"), nullptr, nullptr, GgufByteOrder::big);
    REQUIRE(!be_written.ok());
    CHECK(be_written.error().code == ErrorCode::E_BIG_ENDIAN_TYPE);
    CHECK(!std::filesystem::exists(dir.file("q5k-be.gguf")));
    if (!test::gguf_py_unavailable())
        CHECK(test::gguf_py_convert_to_big_endian(dir.file("q5k.gguf")).value_or("").find("Cannot handle type Q5_K") != std::string::npos);
}

TEST_CASE("a tensor with no finite value has no min, max, mean or std, and counts +Inf and -Inf apart", "[stats]") {
    test::TempDir dir;
    const std::vector<float> none = {NAN, INFINITY, -INFINITY, -INFINITY};
    test::write_fixture_model(dir.file("m.gguf"), {{"f32", GGML_TYPE_F32, {4}, none}, {"f16", GGML_TYPE_F16, {4}, none}});
    auto m = open_gguf(dir.file("m.gguf"));
    REQUIRE(m.ok());
    for (const char* name : {"f32", "f16"}) {
        INFO(name);
        auto s = compute_stats(*TensorView::open(*m, name));
        REQUIRE(s.ok());
        CHECK(s->finite == 0);
        CHECK(s->nan == 1);
        CHECK(s->pos_inf == 1);
        CHECK(s->neg_inf == 2);
        for (double v : {s->min, s->max, s->mean, s->std, s->mean_abs, s->kurtosis, s->percentiles[4]}) CHECK(std::isnan(v));

        auto run = test::run_mlens({"stats", dir.file("m.gguf"), name, "--json"});
        REQUIRE(run.exit_status == 0);
        const auto j = nlohmann::json::parse(run.out);
        for (const char* key : {"min", "max", "mean", "std", "mean_abs", "kurtosis"}) CHECK(j[key].is_null());
        CHECK(j["percentiles"]["50"].is_null());
        CHECK(j["pos_inf"] == 1);
        CHECK(j["neg_inf"] == 2);
        auto text = test::run_mlens({"stats", dir.file("m.gguf"), name});
        CHECK(text.out.find("none") != std::string::npos);
        CHECK(text.out.find("1 / 1 / 2") != std::string::npos);
    }
}

TEST_CASE("a big-endian upstream vocabulary: our writer and gguf-py's converter agree on every key and array", "[big_endian]") {
    if (auto why = test::gguf_py_unavailable()) {
        WARN("gguf-py's endian converter not run: " << *why);
        return;
    }
    test::TempDir dir;
    // String, float and integer arrays of a real SentencePiece vocabulary, no tensors.
    const std::string vocab = test::llama_source_dir() + "/models/ggml-vocab-llama-spm.gguf";
    const Model le = open_clean(vocab, false);
    REQUIRE(write_gguf(le, dir.file("be.gguf"), nullptr, nullptr, GgufByteOrder::big).ok());
    copy_file(vocab, dir.file("gguf-py.gguf"));
    auto failed = test::gguf_py_convert_to_big_endian(dir.file("gguf-py.gguf"));
    INFO(failed.value_or(""));
    REQUIRE(!failed);
    const auto be_bytes = test::read_whole_file(dir.file("be.gguf"));
    CHECK(test::first_difference(be_bytes, test::read_whole_file(dir.file("gguf-py.gguf"))) == -1);
    // Read back and written little-endian, it is the upstream file again.
    const Model be = open_clean(dir.file("be.gguf"), true);
    REQUIRE(write_gguf(be, dir.file("back.gguf")).ok());
    CHECK(test::first_difference(test::read_whole_file(dir.file("back.gguf")), test::read_whole_file(vocab)) == -1);
}
