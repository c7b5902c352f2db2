// Statistics of scaled groups whose steps repeat (Q8_0) count each code once per distinct step
// (step_table_stats.h): the tables must hold every value once, the figures must equal those of
// the decoded values, and the tables must give way to the value-by-value route where a step is
// no half float or the steps are too many to pay.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "stats_agreement.h"
#include "step_table_stats.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// Groups of `length` values, value i of group g being steps[g] * code: codes over the whole int8
// range (-128 and 127 included), the steps given.
class StepGroups final : public FloatSource {
public:
    StepGroups(uint32_t length, std::vector<float> steps) : m_length(length), m_steps(std::move(steps)), m_codes(m_steps.size() * length) {
        for (uint64_t i = 0; i < m_codes.size(); ++i) m_codes[i] = static_cast<int8_t>((i * 37 + (i / length) * 11) % 256 - 128);
    }
    uint64_t size() const override { return m_codes.size(); }
    uint64_t granularity() const override { return m_length; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        m_reads += 1;
        for (uint64_t i = 0; i < count; ++i) out[i] = m_steps[(first + i) / m_length] * static_cast<float>(m_codes[first + i]);
        return ok_status();
    }
    uint32_t scaled_groups() const override { return m_length; }
    Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const override {
        std::memcpy(codes, m_codes.data() + first, count);
        std::memcpy(steps, m_steps.data() + first / m_length, count / m_length * sizeof(float));
        return ok_status();
    }
    std::vector<float> values() const {
        std::vector<float> v(size());
        REQUIRE(read(0, v.size(), v.data()).ok());
        m_reads -= 1;
        return v;
    }
    int8_t code(uint64_t i) const { return m_codes[i]; }
    uint64_t reads() const { return m_reads; }

private:
    uint32_t m_length;
    std::vector<float> m_steps;
    std::vector<int8_t> m_codes;
    mutable std::atomic<int64_t> m_reads{0};
};

// `groups` steps cycling through `set`.
std::vector<float> cycled(const std::vector<float>& set, uint64_t groups) {
    std::vector<float> steps(groups);
    for (uint64_t g = 0; g < groups; ++g) steps[g] = set[g % set.size()];
    return steps;
}

// Half floats of every kind: normal of both signs, both zeros, subnormal (the least one
// included), the greatest, one that rounds a third.
const std::vector<float> kHalfSteps = {
    0.125f, -0.25f, 0.0f, -0.0f, std::ldexp(1.0f, -24), std::ldexp(3.0f, -20), 65504.0f, ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.0f / 3.0f))};

std::optional<StepTables> tables_of(const FloatSource& source, unsigned threads) {
    auto t = count_step_tables(source, nullptr, threads, 0.0, 1.0);
    REQUIRE(t.ok());
    return *t;
}

}  // namespace

TEST_CASE("scaled groups whose steps repeat are counted once per step and code, every value once", "[stats][step_tables]") {
    for (uint32_t length : {32u, 24u}) {  // the unrolled count and the plain one
        INFO("group length " << length);
        const StepGroups source(length, cycled(kHalfSteps, 6000));
        for (unsigned threads : {1u, 2u}) {
            const auto tables = tables_of(source, threads);
            REQUIRE(tables);
            REQUIRE(tables->steps.size() == kHalfSteps.size());
            REQUIRE(tables->counts.size() == kHalfSteps.size() * StepTables::kCodes);
            // Steps ascending by their half-float bits: positive ones first, 0 the least of them.
            CHECK(std::bit_cast<uint32_t>(tables->steps.front()) == 0u);
            CHECK(std::bit_cast<uint32_t>(tables->steps[1]) == std::bit_cast<uint32_t>(std::ldexp(1.0f, -24)));
            CHECK(std::bit_cast<uint32_t>(tables->steps.back()) == std::bit_cast<uint32_t>(-0.25f));
            // Each row equals a direct count of the codes of the groups with that step.
            for (size_t s = 0; s < tables->steps.size(); ++s) {
                std::vector<uint64_t> want(StepTables::kCodes, 0);
                for (uint64_t g = 0; g < 6000; ++g)
                    if (std::bit_cast<uint32_t>(kHalfSteps[g % kHalfSteps.size()]) == std::bit_cast<uint32_t>(tables->steps[s]))
                        for (uint32_t i = 0; i < length; ++i) ++want[static_cast<uint8_t>(source.code(g * length + i))];
                const std::vector<uint64_t> row(tables->counts.begin() + s * StepTables::kCodes,
                                                tables->counts.begin() + (s + 1) * StepTables::kCodes);
                CHECK(row == want);
            }
        }
        const ValueBounds range = step_table_range(*tables_of(source, 2));
        const std::vector<float> values = source.values();
        CHECK(range.min == *std::min_element(values.begin(), values.end()));
        CHECK(range.max == *std::max_element(values.begin(), values.end()));
        CHECK(range.max == 65504.0f * 127.0f);
        CHECK(range.min == 65504.0f * -128.0f);
    }
}

TEST_CASE("statistics from step tables equal those of the decoded values, decode nothing and do not depend on the threads",
          "[stats][step_tables]") {
    const StepGroups source(32, cycled(kHalfSteps, 6000));
    const std::vector<float> values = source.values();
    for (uint32_t bins : {1u, 7u, 256u, 4096u})
        for (unsigned threads : {1u, 2u}) test::require_same_figures(source, values, bins, threads);
    const StepGroups counted(32, cycled(kHalfSteps, 6000));
    auto one = compute_stats_and_histogram(counted, 256, nullptr, 1);
    auto two = compute_stats_and_histogram(counted, 256, nullptr, 2);
    REQUIRE(one.ok());
    REQUIRE(two.ok());
    CHECK(counted.reads() == 0);
    CHECK(one->stats.zeros == static_cast<uint64_t>(std::count(values.begin(), values.end(), 0.0f)));
    // The same bits on one thread and on two: the sums are taken step by step in one order.
    CHECK(std::bit_cast<uint64_t>(one->stats.mean) == std::bit_cast<uint64_t>(two->stats.mean));
    CHECK(std::bit_cast<uint64_t>(one->stats.std) == std::bit_cast<uint64_t>(two->stats.std));
    CHECK(std::bit_cast<uint64_t>(one->stats.kurtosis) == std::bit_cast<uint64_t>(two->stats.kurtosis));
    CHECK(std::bit_cast<uint64_t>(one->stats.mean_abs) == std::bit_cast<uint64_t>(two->stats.mean_abs));
    CHECK(one->histogram.counts == two->histogram.counts);
}

TEST_CASE("step tables give way where a step is no half float, is not finite, or the steps are too many", "[stats][step_tables]") {
    SECTION("a step no half float holds, first or later") {
        for (uint64_t at : {0u, 4000u}) {
            std::vector<float> steps = cycled(kHalfSteps, 6000);
            steps[at] = 0.1f;
            const StepGroups source(32, steps);
            CHECK_FALSE(tables_of(source, 2));
            test::require_same_figures(source, source.values(), 256, 2);
        }
        std::vector<float> steps = cycled(kHalfSteps, 6000);
        steps[10] = std::numeric_limits<float>::denorm_min();  // below the least subnormal half
        CHECK_FALSE(tables_of(StepGroups(32, steps), 1));
    }
    SECTION("an infinite or NaN step") {
        for (float bad : {INFINITY, -INFINITY, NAN}) {
            std::vector<float> steps = cycled(kHalfSteps, 6000);
            steps[77] = bad;
            CHECK_FALSE(tables_of(StepGroups(32, steps), 2));
        }
    }
    SECTION("more distinct steps than the values pay for") {
        // 8,192 steps for 262,144 values: 2 million entries where 65,536 are allowed.
        std::vector<float> steps(8192);
        for (uint64_t g = 0; g < steps.size(); ++g) steps[g] = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(0x2000 + g));
        const StepGroups source(32, steps);
        CHECK_FALSE(tables_of(source, 2));
        test::require_same_figures(source, source.values(), 256, 2);
        // 256 steps always pay.
        steps.resize(256);
        CHECK(tables_of(StepGroups(32, cycled(steps, 8192)), 2));
    }
    SECTION("steps so mixed that a chunk has fewer than 8 groups a step, on one thread or two") {
        // 2^25 values may take 4,096 steps, but 4,000 of them in every chunk of 16,384 groups
        // leave about 4 groups a step; 1,000 leave 16.
        std::vector<float> steps(4000);
        for (uint64_t g = 0; g < steps.size(); ++g) steps[g] = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(0x2000 + g));
        for (unsigned threads : {1u, 2u}) {
            CHECK_FALSE(tables_of(StepGroups(32, cycled(steps, 1u << 20)), threads));
            steps.resize(1000);
            CHECK(tables_of(StepGroups(32, cycled(steps, 1u << 20)), threads));
            steps.resize(4000);
            for (uint64_t g = 1000; g < steps.size(); ++g) steps[g] = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(0x2000 + g));
        }
    }
}

TEST_CASE("Q8_0 tensors written by ggml's quantizer take the step tables where their scales repeat, Q6_K never", "[stats][step_tables]") {
    test::TempDir dir;
    // A sine of one amplitude: every block's largest value is near 0.5, so the scales repeat.
    std::vector<float> even(1u << 16), signal = test::test_signal(1u << 16, 5);
    for (size_t i = 0; i < even.size(); ++i) even[i] = static_cast<float>(0.5 * std::sin(static_cast<double>(i) * 0.731));
    test::write_fixture_model(dir.file("q.gguf"),
                              {{"even", GGML_TYPE_Q8_0, {4096, 16}, even}, {"q6_K", GGML_TYPE_Q6_K, {4096, 16}, signal}});
    auto model = open_gguf(dir.file("q.gguf"));
    REQUIRE(model.ok());
    auto q8 = TensorView::open(*model, "even");
    REQUIRE(q8.ok());
    const auto tables = tables_of(*q8, 2);
    REQUIRE(tables);
    CHECK(tables->steps.size() < 16);
    std::vector<float> decoded(q8->size());
    REQUIRE(q8->read(0, decoded.size(), decoded.data()).ok());
    for (uint32_t bins : {1u, 256u})
        for (unsigned threads : {1u, 2u}) test::require_same_figures(*q8, decoded, bins, threads);
    auto q6 = TensorView::open(*model, "q6_K");
    REQUIRE(q6.ok());
    CHECK(q6->scaled_groups() == 16);
    CHECK_FALSE(tables_of(*q6, 2));
}
