// Statistics of code groups whose value tables repeat (Q4_0, Q5_0, IQ4_NL) count each group's codes
// into its table's row (group_table_stats.h): the rows must hold every value once, the figures
// must equal those of the decoded values whatever the threads, and the tables must give way to
// the code-group route where a table is not finite, two tables share a key, or the tables are too
// many.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "group_table_stats.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "stats_agreement.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// Groups of 32 values from 16 codes, group g's value table being scale[g] * (c - 8) except where
// `skewed` has g: there it is (c == 0 ? -8 : 2 * c - 8) * scale, whose first value is the same.
class TableGroups final : public FloatSource {
public:
    static constexpr uint32_t kLength = 32, kCodes = 16;

    TableGroups(std::vector<float> scales, std::vector<uint64_t> skewed = {})
        : m_scales(std::move(scales)), m_skewed(std::move(skewed)), m_codes(m_scales.size() * kLength) {
        for (uint64_t i = 0; i < m_codes.size(); ++i) m_codes[i] = static_cast<uint8_t>((i * 7 + i / kLength) % kCodes);
    }
    uint64_t size() const override { return m_codes.size(); }
    uint64_t granularity() const override { return kLength; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        for (uint64_t i = 0; i < count; ++i) out[i] = value(first + i);
        return ok_status();
    }
    CodeGroups code_groups() const override { return {kCodes, kLength}; }
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override {
        std::memcpy(codes, m_codes.data() + first, count);
        for (uint64_t g = 0; g < count / kLength; ++g)
            for (uint32_t c = 0; c < kCodes; ++c) values[g * kCodes + c] = table_value(first / kLength + g, c);
        return ok_status();
    }
    std::vector<float> values() const {
        std::vector<float> v(size());
        REQUIRE(read(0, v.size(), v.data()).ok());
        return v;
    }

private:
    float table_value(uint64_t group, uint32_t c) const {
        const bool skew = std::find(m_skewed.begin(), m_skewed.end(), group) != m_skewed.end();
        const int factor = skew && c != 0 ? 2 * static_cast<int>(c) - 8 : static_cast<int>(c) - 8;
        return m_scales[group] * static_cast<float>(factor);
    }
    float value(uint64_t i) const { return table_value(i / kLength, m_codes[i]); }

    std::vector<float> m_scales;
    std::vector<uint64_t> m_skewed;
    std::vector<uint8_t> m_codes;
};

std::optional<GroupTables> tables_of(const FloatSource& source, unsigned threads) {
    auto t = count_group_tables(source, nullptr, threads, 0.0, 1.0);
    REQUIRE(t.ok());
    return *t;
}

// The rows a direct count gives: per distinct table (by its values' bits), how often each code
// occurs with it.
std::map<std::vector<uint32_t>, std::vector<uint64_t>> direct_rows(const FloatSource& source) {
    const CodeGroups shape = source.code_groups();
    std::vector<uint8_t> codes(source.size());
    std::vector<float> tables(source.size() / shape.length * shape.codes);
    REQUIRE(source.read_code_groups(0, codes.size(), codes.data(), tables.data()).ok());
    std::map<std::vector<uint32_t>, std::vector<uint64_t>> rows;
    for (uint64_t g = 0; g < codes.size() / shape.length; ++g) {
        std::vector<uint32_t> key(shape.codes);
        for (uint32_t c = 0; c < shape.codes; ++c) key[c] = std::bit_cast<uint32_t>(tables[g * shape.codes + c]);
        std::vector<uint64_t>& row = rows[key];
        row.resize(shape.codes, 0);
        for (uint32_t i = 0; i < shape.length; ++i) ++row[codes[g * shape.length + i]];
    }
    return rows;
}

// The tables' rows by their values' bits.
std::map<std::vector<uint32_t>, std::vector<uint64_t>> rows_of(const GroupTables& t) {
    std::map<std::vector<uint32_t>, std::vector<uint64_t>> rows;
    for (size_t r = 0; r < t.values.size() / t.codes; ++r) {
        std::vector<uint32_t> key(t.codes);
        for (uint32_t c = 0; c < t.codes; ++c) key[c] = std::bit_cast<uint32_t>(t.values[r * t.codes + c]);
        rows[key] = std::vector<uint64_t>(t.counts.begin() + static_cast<ptrdiff_t>(r * t.codes),
                                          t.counts.begin() + static_cast<ptrdiff_t>((r + 1) * t.codes));
    }
    return rows;
}

}  // namespace

TEST_CASE("Q4_0, Q5_0 and IQ4_NL tensors written by ggml count their codes in tables of repeating values", "[stats][group_tables]") {
    test::TempDir dir;
    // 4,096 rows of 64: more chunks than threads; a signal whose block scales repeat.
    const std::vector<float> signal = test::test_signal(1u << 18, 9);
    test::write_fixture_model(dir.file("t.gguf"),
                              {{"q4_0", GGML_TYPE_Q4_0, {64, 4096}, signal},
                               {"q5_0", GGML_TYPE_Q5_0, {64, 4096}, signal},
                               {"iq4_nl", GGML_TYPE_IQ4_NL, {64, 4096}, signal},
                               {"q4_1", GGML_TYPE_Q4_1, {64, 4096}, signal},
                               {"q4_K", GGML_TYPE_Q4_K, {256, 1024}, signal},
                               {"q5_K", GGML_TYPE_Q5_K, {256, 1024}, signal}});
    auto model = open_gguf(dir.file("t.gguf"));
    REQUIRE(model.ok());
    for (const char* name : {"q4_0", "q5_0", "iq4_nl"}) {
        INFO(name);
        auto view = TensorView::open(*model, name);
        REQUIRE(view.ok());
        const auto one = tables_of(*view, 1), two = tables_of(*view, 2);
        REQUIRE(one);
        REQUIRE(two);
        // Every value once, in the row of its own table; the same tables on any threads.
        CHECK(std::accumulate(one->counts.begin(), one->counts.end(), uint64_t{0}) == view->size());
        CHECK(rows_of(*one) == direct_rows(*view));
        CHECK(one->counts == two->counts);
        CHECK(std::equal(one->values.begin(), one->values.end(), two->values.begin(), two->values.end(),
                         [](float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }));
        std::vector<float> decoded(view->size());
        REQUIRE(view->read(0, decoded.size(), decoded.data()).ok());
        for (uint32_t bins : {1u, 7u, 256u, 4096u})
            for (unsigned threads : {1u, 2u}) test::require_same_figures(*view, decoded, bins, threads);
        auto a = compute_stats_and_histogram(*view, 256, nullptr, 1), b = compute_stats_and_histogram(*view, 256, nullptr, 2);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(a->stats.mean == b->stats.mean);
        CHECK(a->stats.kurtosis == b->stats.kurtosis);
    }
    // Tables that do not repeat (a scale and a minimum per group), and offset groups: never.
    for (const char* name : {"q4_1", "q4_K", "q5_K"}) {
        INFO(name);
        CHECK_FALSE(tables_of(*TensorView::open(*model, name), 2));
    }
}

TEST_CASE("group tables give way where a table is not finite, two tables share a key, or the tables are too many",
          "[stats][group_tables]") {
    // A few scales, repeated: tables.
    std::vector<float> scales(6000);
    for (size_t g = 0; g < scales.size(); ++g) scales[g] = 0.125f * static_cast<float>(1 + g % 5);
    const TableGroups plain(scales);
    REQUIRE(tables_of(plain, 2));
    CHECK(tables_of(plain, 2)->values.size() == 5 * 16);

    // One infinite scale; one group whose table starts as another's and then differs.
    std::vector<float> infinite = scales;
    infinite[4321] = INFINITY;
    const TableGroups with_infinity(infinite), skewed(scales, {3001});
    // 5,000 distinct scales over 160,000 values: 80,000 table entries against 65,536 allowed.
    std::vector<float> many(5000);
    for (size_t g = 0; g < many.size(); ++g) many[g] = 1.0f + static_cast<float>(g) / 8192.0f;
    const TableGroups too_many(many);
    for (const TableGroups* source : {&with_infinity, &skewed, &too_many}) {
        for (unsigned threads : {1u, 2u}) CHECK_FALSE(tables_of(*source, threads));
        // The statistics then take the code-group route (or decode), with the same figures.
        if (source != &with_infinity)
            for (unsigned threads : {1u, 2u}) test::require_same_figures(*source, source->values(), 256, threads);
    }
    auto stats = compute_stats(with_infinity);
    REQUIRE(stats.ok());
    CHECK(stats->inf == 30);  // the codes of the infinite group whose factor is not 0
}
