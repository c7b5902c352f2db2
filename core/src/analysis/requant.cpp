#include "mlens/analysis/requant.h"

#include <ggml.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <numeric>

#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/util/analysis_memory.h"
#include "util/thread_scratch.h"

namespace mlens {

namespace {

// The reference passed through one ggml type: quantize, decode again. Values are quantized in
// units of whole rows, or for rows longer than an analysis reads at once, of whole blocks: without
// an importance matrix ggml quantizes each block by itself, so a row quantized in pieces gives the
// bytes the whole row gives. With `keep`, each unit's quantized bytes are kept after its first
// read: a read claims the units no one has quantized yet (under the mutex), quantizes them into
// the store, marks them ready (or failed, when reading the reference failed) and waits for units
// other reads claimed; a thread never waits while holding unquantized claims.
class RequantizedSource final : public FloatSource {
public:
    RequantizedSource(const FloatSource& ref, uint64_t row, ggml_type type, bool keep, const ColumnImportance* importance)
        : m_ref(ref), m_row(row), m_type(type), m_importance(importance) {
        const uint64_t rows_unit = std::lcm(ref.granularity(), row);
        m_unit = rows_unit <= kMaxReadUnit ? rows_unit : std::lcm(ref.granularity(), static_cast<uint64_t>(ggml_blck_size(type)));
        m_unit_bytes = ggml_row_size(type, static_cast<int64_t>(m_unit));
        const uint64_t units = (ref.size() + m_unit - 1) / m_unit;
        if (!keep || units > kAnalysisMemoryBound / 2 / m_unit_bytes) return;
        m_store.reset(new uint8_t[units * m_unit_bytes]);  // not touched until quantized into
        m_state.assign(units, Unit::empty);
    }
    uint64_t size() const override { return m_ref.size(); }
    uint64_t granularity() const override { return m_unit; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        if (first % m_unit != 0 || first > size() || count > size() - first || (count % m_unit != 0 && first + count != size()))
            return Error{ErrorCode::E_RANGE, "", std::nullopt, "requantization reads whole rows or blocks"};
        if (!m_store) {
            if (Status s = m_ref.read(first, count, out); !s) return s;
            std::vector<uint8_t>& q = thread_scratch<std::vector<uint8_t>>([] {});
            q.resize(ggml_row_size(m_type, static_cast<int64_t>(count)));
            quantize(first, out, count, q.data());
            decode(q.data(), count, out);
            return ok_status();
        }
        const uint64_t first_unit = first / m_unit, units = (count + m_unit - 1) / m_unit;
        std::vector<uint64_t> claimed;
        {
            std::lock_guard lock(m_mutex);
            for (uint64_t u = first_unit; u < first_unit + units; ++u)
                if (m_state[u] == Unit::empty) {
                    m_state[u] = Unit::claimed;
                    claimed.push_back(u);
                }
        }
        Status s = claimed.empty() ? ok_status() : m_ref.read(first, count, out);
        for (size_t i = 0, j = 0; s && i < claimed.size(); i = j) {  // runs of consecutive units
            for (j = i + 1; j < claimed.size() && claimed[j] == claimed[j - 1] + 1;) ++j;
            const uint64_t from = claimed[i] * m_unit, to = std::min(first + count, claimed[j - 1] * m_unit + m_unit);
            quantize(from, out + (from - first), to - from, m_store.get() + claimed[i] * m_unit_bytes);
        }
        {
            std::unique_lock lock(m_mutex);
            for (uint64_t u : claimed) m_state[u] = s ? Unit::ready : Unit::failed;
            m_changed.notify_all();
            if (!s) return s;
            const auto begin = m_state.begin() + static_cast<std::ptrdiff_t>(first_unit), end = begin + static_cast<std::ptrdiff_t>(units);
            m_changed.wait(lock, [&] { return std::none_of(begin, end, [](Unit state) { return state == Unit::claimed; }); });
            if (std::find(begin, end, Unit::failed) != end)
                return Error{ErrorCode::E_IO, "", std::nullopt, "values whose quantization failed in an earlier read"};
        }
        decode(m_store.get() + first_unit * m_unit_bytes, count, out);
        return ok_status();
    }

private:
    enum class Unit : uint8_t { empty, claimed, ready, failed };

    // `count` values from value `first`, the start of a unit: whole rows, or whole blocks of a
    // longer row (never with an importance). Rows of one importance run are quantized together.
    void quantize(uint64_t first, const float* values, uint64_t count, uint8_t* q) const {
        if (count % m_row != 0) {
            ggml_quantize_chunk(m_type, values, q, 0, 1, static_cast<int64_t>(count), nullptr);
            return;
        }
        const uint64_t first_row = first / m_row, rows = count / m_row;
        const size_t row_bytes = ggml_row_size(m_type, static_cast<int64_t>(m_row));
        for (uint64_t r = 0, next = 0; r < rows; r = next) {
            next = rows;
            const float* weights = nullptr;
            if (m_importance) {
                const uint64_t run_end = ((first_row + r) / m_importance->rows_per_run + 1) * m_importance->rows_per_run;
                next = std::min(rows, run_end - first_row);
                weights = m_importance->run_of_row(first_row + r);
            }
            ggml_quantize_chunk(m_type, values + r * m_row, q + r * row_bytes, 0, static_cast<int64_t>(next - r),
                                static_cast<int64_t>(m_row), weights);
        }
    }
    void decode(const uint8_t* q, uint64_t count, float* out) const {
        ggml_get_type_traits(m_type)->to_float(q, out, static_cast<int64_t>(count));
    }

    const FloatSource& m_ref;
    uint64_t m_row;
    ggml_type m_type;
    const ColumnImportance* m_importance;
    uint64_t m_unit = 0;  // values quantized at once
    size_t m_unit_bytes = 0;
    std::unique_ptr<uint8_t[]> m_store;  // keep: the quantized units
    mutable std::vector<Unit> m_state;  // keep: each unit's, under m_mutex
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
};

// The types ggml_quantize_chunk handles in the pinned ggml (any other aborts inside ggml).
bool ggml_can_quantize(ggml_type t) {
    const GgmlTypeRow* row = ggml_type_row(t);
    return row && row->requant;
}

Status check_whole_rows(const FloatSource& reference, uint64_t row_length) {
    if (row_length != 0 && reference.size() % row_length == 0) return ok_status();
    return Error{ErrorCode::E_SHAPE, "", std::nullopt,
                 std::to_string(reference.size()) + " values are not whole rows of " + std::to_string(row_length)};
}

}  // namespace

Result<std::unique_ptr<FloatSource>> requantized_source(const FloatSource& reference, uint64_t row_length, uint32_t id, bool keep_quantized,
                                                        const ColumnImportance* importance) {
    if (Status s = check_whole_rows(reference, row_length); !s) return s.error();
    if (id >= GGML_TYPE_COUNT) return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "not a ggml type"};
    auto type = static_cast<ggml_type>(id);
    const ggml_type_traits* traits = ggml_get_type_traits(type);
    if (!importance && ggml_quantize_requires_imatrix(type))
        return Error{ErrorCode::E_NEEDS_IMATRIX, "", std::nullopt, "needs an importance matrix"};
    if (!ggml_can_quantize(type) || !traits->to_float)
        return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "ggml cannot quantize to this type"};
    if (row_length % static_cast<uint64_t>(traits->blck_size) != 0)
        return Error{ErrorCode::E_BLOCK_SIZE, "", std::nullopt,
                     "rows of " + std::to_string(row_length) + " values do not split into blocks of " + std::to_string(traits->blck_size)};
    if (importance &&
        (importance->row_length != row_length || importance->rows_per_run == 0 ||
         reference.size() / row_length > importance->values.size() / row_length * importance->rows_per_run))
        return Error{ErrorCode::E_SHAPE, "", std::nullopt,
                     "the importance does not cover the reference's rows of " + std::to_string(row_length)};
    if (importance && row_length > kMaxReadUnit)
        return Error{ErrorCode::E_LIMIT, "", std::nullopt,
                     "rows of " + std::to_string(row_length) + " values are longer than " + std::to_string(kMaxReadUnit) +
                         ", the most quantized with an importance matrix"};
    ggml_quantize_init(type);
    return std::unique_ptr<FloatSource>(std::make_unique<RequantizedSource>(reference, row_length, type, keep_quantized, importance));
}

Result<std::vector<RequantRow>> requantize(const FloatSource& reference, uint64_t row_length, const std::vector<uint32_t>& types,
                                           JobContext* job, unsigned threads, const ColumnImportance* importance) {
    if (Status s = check_whole_rows(reference, row_length); !s) return s.error();
    std::vector<RequantRow> rows;
    for (size_t i = 0; i < types.size(); ++i) {
        RequantRow r;
        r.ggml_type = types[i];
        if (types[i] < GGML_TYPE_COUNT) {
            const ggml_type_traits* traits = ggml_get_type_traits(static_cast<ggml_type>(types[i]));
            r.type_name = describe_ggml_type(types[i]).name;
            if (traits->blck_size > 0)
                r.bits_per_weight = 8.0 * static_cast<double>(traits->type_size) / static_cast<double>(traits->blck_size);
        } else {
            r.type_name = "unknown(" + std::to_string(types[i]) + ")";
        }
        Result<std::unique_ptr<FloatSource>> candidate = requantized_source(reference, row_length, types[i], false, importance);
        if (!candidate) {
            if (candidate.error().code == ErrorCode::E_NEEDS_IMATRIX)
                r.needs_imatrix = true;
            else
                r.skipped = candidate.error().message;
            rows.push_back(std::move(r));
            continue;
        }
        auto c = compare_sources(reference, **candidate, row_length, 10, job, threads,
                                 static_cast<double>(i) / static_cast<double>(types.size()),
                                 static_cast<double>(i + 1) / static_cast<double>(types.size()));
        if (!c) return c.error();
        r.error = std::move(*c);
        r.with_importance = importance != nullptr;
        rows.push_back(std::move(r));
    }
    job_report(job, 1.0);
    return rows;
}

std::vector<uint32_t> default_requant_types(uint64_t row_length, bool with_importance) {
    const ggml_type kDefaults[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q2_K,    GGML_TYPE_Q3_K,   GGML_TYPE_Q4_K,
                                   GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS};
    const ggml_type kInPlaceOfKQuants[] = {GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1};
    auto fits = [&](ggml_type t) {
        return row_length > 0 && row_length % static_cast<uint64_t>(ggml_blck_size(t)) == 0 &&
            (with_importance || !ggml_quantize_requires_imatrix(t));
    };
    std::vector<uint32_t> out;
    for (ggml_type t : kDefaults) {
        if (fits(t)) out.push_back(t);
        if (t == GGML_TYPE_Q8_0 && !fits(GGML_TYPE_Q4_K))
            for (ggml_type filler : kInPlaceOfKQuants)
                if (fits(filler)) out.push_back(filler);
    }
    return out;
}

}  // namespace mlens
