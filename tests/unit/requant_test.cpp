// What-if requantization: error per type measured against an independent ggml round trip,
// ordering of the error by type, importance-matrix types flagged, and the CLI.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <atomic>
#include <cmath>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "mlens/analysis/requant.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/util/parallel.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

double direct_rmse(const std::vector<float>& v, uint64_t row, ggml_type type) {
    const int64_t rows = static_cast<int64_t>(v.size() / row);
    std::vector<uint8_t> q(ggml_row_size(type, static_cast<int64_t>(row)) * rows);
    ggml_quantize_chunk(type, v.data(), q.data(), 0, rows, static_cast<int64_t>(row), nullptr);
    std::vector<float> back(v.size());
    ggml_get_type_traits(type)->to_float(q.data(), back.data(), static_cast<int64_t>(v.size()));
    double s = 0;
    for (size_t i = 0; i < v.size(); ++i) s += (double(v[i]) - back[i]) * (double(v[i]) - back[i]);
    return std::sqrt(s / v.size());
}

// A VectorSource that counts the values read from it, and fails every read once told to.
class CountingSource final : public FloatSource {
public:
    explicit CountingSource(const std::vector<float>& values) : m_inner(values) {}
    uint64_t size() const override { return m_inner.size(); }
    uint64_t granularity() const override { return 1; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        if (fail) return Error{ErrorCode::E_IO, "", std::nullopt, "unreadable"};
        values_read += count;
        return m_inner.read(first, count, out);
    }
    mutable std::atomic<uint64_t> values_read{0};
    std::atomic<bool> fail{false};

private:
    VectorSource m_inner;
};

}  // namespace

TEST_CASE("requantization error per type", "[requant]") {
    test::TempDir dir;
    const uint64_t row = 512, rows = 8;
    const std::vector<float> values = test::test_signal(row * rows, 3);
    test::write_fixture_model(dir.file("ref.gguf"), {{"w", GGML_TYPE_F32, {row, rows}, values}});
    auto model = open_gguf(dir.file("ref.gguf"));
    REQUIRE(model.ok());
    auto view = TensorView::open(*model, "w");
    REQUIRE(view.ok());
    auto r = requantize(*view, row, {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_IQ2_XXS, GGML_TYPE_I32});
    REQUIRE(r.ok());
    REQUIRE(r->size() == 5);
    const RequantRow &q4 = (*r)[0], &q8 = (*r)[1], &q4k = (*r)[2], &iq2 = (*r)[3], &i32 = (*r)[4];
    CHECK(q4.type_name == "Q4_0");
    CHECK(q4.bits_per_weight == 4.5);
    CHECK(q8.bits_per_weight == 8.5);
    CHECK(q4k.bits_per_weight == 4.5);
    CHECK(q8.error.rmse < q4.error.rmse);
    CHECK(q8.error.count == values.size());
    CHECK(q4.error.rmse == Approx(direct_rmse(values, row, GGML_TYPE_Q4_0)).epsilon(1e-9));
    CHECK(q8.error.rmse == Approx(direct_rmse(values, row, GGML_TYPE_Q8_0)).epsilon(1e-9));
    CHECK(q4k.error.rmse == Approx(direct_rmse(values, row, GGML_TYPE_Q4_K)).epsilon(1e-9));
    CHECK(q8.error.snr_db > q4.error.snr_db);
    CHECK(iq2.needs_imatrix);
    CHECK(iq2.skipped.empty());
    CHECK(i32.skipped == "ggml cannot quantize to this type");

    // Rows that do not split into a type's blocks are skipped with the reason.
    auto odd = requantize(*view, 32, {GGML_TYPE_Q4_K, GGML_TYPE_Q8_0});
    REQUIRE(odd.ok());
    CHECK((*odd)[0].skipped == "rows of 32 values do not split into blocks of 256");
    CHECK((*odd)[1].skipped.empty());
    CHECK(requantize(*view, 500, {GGML_TYPE_Q8_0}).error().code == ErrorCode::E_SHAPE);

    JobContext cancelled;
    cancelled.cancel();
    CHECK(requantize(*view, row, {GGML_TYPE_Q8_0}, &cancelled).error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("mlens requant prints the error table", "[requant]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("ref.gguf"), {{"w", GGML_TYPE_F16, {256, 4}, test::test_signal(1024, 4)}});
    auto run = test::run_mlens({"requant", dir.file("ref.gguf"), "w", "--types", "Q4_0,Q8_0,IQ2_XXS", "--json"});
    REQUIRE(run.exit_status == 0);
    auto j = nlohmann::json::parse(run.out);
    CHECK(j["reference_type"] == "F16");
    REQUIRE(j["types"].size() == 3);
    CHECK(j["types"][0]["type"] == "Q4_0");
    CHECK(j["types"][1]["rmse"].get<double>() < j["types"][0]["rmse"].get<double>());
    CHECK(j["types"][2]["needs_imatrix"] == true);
    auto text = test::run_mlens({"requant", dir.file("ref.gguf"), "w", "--types", "Q8_0,IQ2_XXS"});
    REQUIRE(text.exit_status == 0);
    // The type without figures: dashes in the figure columns, the reason last.
    const size_t iq2 = text.out.find("\nIQ2_XXS ");
    REQUIRE(iq2 != std::string::npos);
    std::istringstream words(text.out.substr(iq2 + 1, text.out.find('\n', iq2 + 1) - iq2 - 1));
    std::vector<std::string> cells{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    CHECK(
        cells ==
        std::vector<std::string>{"IQ2_XXS", "2.06", "-", "-", "-", "-", "-", "needs", "an", "importance", "matrix", "(--imatrix", "FILE)"});
    auto bad = test::run_mlens({"requant", dir.file("ref.gguf"), "w", "--types", "Q9_9"});
    CHECK(bad.exit_status == 2);
    CHECK(bad.err == "error: unknown ggml type Q9_9\n");
}

TEST_CASE("requantized_source reads the reference passed through one type", "[requant]") {
    const int64_t row = 256, rows = 4;
    const std::vector<float> values = test::test_signal(static_cast<uint64_t>(row * rows), 5);
    VectorSource reference(values);
    auto q8 = requantized_source(reference, row, GGML_TYPE_Q8_0);
    REQUIRE(q8.ok());
    CHECK((*q8)->size() == values.size());
    std::vector<float> read(values.size());
    REQUIRE((*q8)->read(0, values.size(), read.data()).ok());
    std::vector<uint8_t> q(ggml_row_size(GGML_TYPE_Q8_0, row) * static_cast<size_t>(rows));
    ggml_quantize_chunk(GGML_TYPE_Q8_0, values.data(), q.data(), 0, rows, row, nullptr);
    std::vector<float> expected(values.size());
    ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(q.data(), expected.data(), static_cast<int64_t>(values.size()));
    CHECK(read == expected);
    CHECK(read != values);
    CHECK((*q8)->read(1, static_cast<uint64_t>(row), read.data()).error().code == ErrorCode::E_RANGE);

    auto iq2 = requantized_source(reference, row, GGML_TYPE_IQ2_XXS);
    CHECK(iq2.error().code == ErrorCode::E_NEEDS_IMATRIX);
    CHECK(iq2.error().message == "needs an importance matrix");
    auto i32 = requantized_source(reference, row, GGML_TYPE_I32);
    CHECK(i32.error().message == "ggml cannot quantize to this type");
    auto q4k = requantized_source(reference, 64, GGML_TYPE_Q4_K);
    CHECK(q4k.error().code == ErrorCode::E_BLOCK_SIZE);
    CHECK(q4k.error().message == "rows of 64 values do not split into blocks of 256");
    CHECK(requantized_source(reference, 300, GGML_TYPE_Q8_0).error().code == ErrorCode::E_SHAPE);
}

TEST_CASE("a requantized source that keeps its quantized rows quantizes each row once", "[requant]") {
    const uint64_t row = 256, rows = 64, n = row * rows;
    const std::vector<float> values = test::test_signal(n, 6);
    CountingSource reference(values);
    auto plain = requantized_source(reference, row, GGML_TYPE_Q4_K);
    auto kept = requantized_source(reference, row, GGML_TYPE_Q4_K, true);
    REQUIRE(kept.ok());
    std::vector<float> expected(n), read(n);
    REQUIRE((*plain)->read(0, n, expected.data()).ok());
    reference.values_read = 0;
    // Four threads read overlapping runs of rows, each several times: every read gives the
    // values of the plain source.
    std::atomic<uint64_t> wrong{0};
    parallel_for(400, 4, [&](uint64_t i) {
        const uint64_t first_row = (i * 7) % rows, count_rows = std::min<uint64_t>(1 + i % 9, rows - first_row);
        std::vector<float> part(count_rows * row);
        if (!(*kept)->read(first_row * row, part.size(), part.data()).ok()) return false;
        wrong += !std::equal(part.begin(), part.end(), expected.begin() + static_cast<std::ptrdiff_t>(first_row * row));
        return true;
    });
    CHECK(wrong == 0);
    const uint64_t after_first_reads = reference.values_read;
    CHECK(after_first_reads >= n);
    // Every row is kept now: reading the whole tensor twice more reads nothing of the reference.
    for (int pass = 0; pass < 2; ++pass) {
        REQUIRE((*kept)->read(0, n, read.data()).ok());
        CHECK(read == expected);
    }
    CHECK(reference.values_read == after_first_reads);

    // A failed read of the reference fails that read and, without waiting, later reads of its rows.
    auto failing = requantized_source(reference, row, GGML_TYPE_Q8_0, true);
    reference.fail = true;
    CHECK((*failing)->read(0, 2 * row, read.data()).error().code == ErrorCode::E_IO);
    reference.fail = false;
    CHECK((*failing)->read(0, row, read.data()).error().message == "values whose quantization failed in an earlier read");
    CHECK((*failing)->read(2 * row, row, read.data()).ok());
}
