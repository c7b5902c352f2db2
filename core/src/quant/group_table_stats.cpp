#include "group_table_stats.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "binning_avx512.h"
#include "centred_sums.h"
#include "group_code_counts.h"
#include "mlens/util/parallel_job.h"
#include "pass_totals.h"
#include "util/finite_floats.h"
#include "util/per_thread_objects.h"
#include "util/thread_scratch.h"
#include "weighted_values.h"

namespace mlens {

namespace {

// Values per chunk: a chunk's codes, tables and counts stay in L2 together.
constexpr uint64_t kChunkTarget = 1u << 16;
// Table entries (distinct tables times codes) allowed whatever the source's size, the values each
// further entry must stand for, and the most allowed (as step_table_stats.h).
constexpr uint64_t kFreeEntries = 1u << 16;
constexpr uint64_t kValuesPerEntry = 32;
constexpr uint64_t kMostEntries = 1u << 20;
// Tables summarized per task: parts fixed whatever the threads, so that sums add up in one order.
constexpr uint64_t kTablesPerPart = 256;

// Whether two tables of n values hold the same bits.
[[gnu::always_inline]] inline bool same_table(const float* a, const float* b, uint32_t n) {
    uint32_t differ = 0;
    for (uint32_t c = 0; c < n; ++c) differ |= std::bit_cast<uint32_t>(a[c]) ^ std::bit_cast<uint32_t>(b[c]);
    return differ == 0;
}

// The distinct tables of the whole source, met by any thread: the one count the budget is checked
// against, whatever thread counted which chunk.
struct SeenTables {
    std::mutex m;
    std::unordered_set<uint32_t> keys;
};

// One thread's tables: a row of `codes` counts per table, in the order the thread first met them,
// found by an open-addressing index of their first value's bits that doubles as it fills.
class ThreadTables {
public:
    static constexpr uint32_t kNone = UINT32_MAX;

    explicit ThreadTables(uint32_t codes) : m_codes(codes), m_slots(kFirstSlots, Slot{0, kNone}) {}

    uint32_t codes() const { return m_codes; }
    size_t size() const { return m_keys.size(); }
    uint32_t key(size_t row) const { return m_keys[row]; }
    const float* table(size_t row) const { return m_values.data() + row * m_codes; }
    const uint64_t* counts(size_t row) const { return m_counts.data() + row * m_codes; }
    uint64_t* counts(size_t row) { return m_counts.data() + row * m_codes; }

    // The row of the table whose first value has the bits `key`; kNone when there is none.
    [[gnu::always_inline]] uint32_t find(uint32_t key) const {
        for (uint64_t at = home(key);; at = (at + 1) & (m_slots.size() - 1)) {
            const Slot slot = m_slots[at];
            if (slot.row == kNone || slot.key == key) return slot.row;
        }
    }

    // A new row, its counts zero, for `table` (no row has its key).
    uint32_t add(const float* table) {
        if (2 * (m_keys.size() + 1) > m_slots.size()) grow();
        const auto row = static_cast<uint32_t>(m_keys.size());
        const uint32_t key = std::bit_cast<uint32_t>(table[0]);
        place(key, row);
        m_keys.push_back(key);
        m_values.insert(m_values.end(), table, table + m_codes);
        m_counts.resize(m_counts.size() + m_codes, 0);
        return row;
    }

private:
    struct Slot {
        uint32_t key, row;
    };
    static constexpr size_t kFirstSlots = 1024;

    uint64_t home(uint32_t key) const { return (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull >> 32) & (m_slots.size() - 1); }
    void place(uint32_t key, uint32_t row) {
        uint64_t at = home(key);
        while (m_slots[at].row != kNone) at = (at + 1) & (m_slots.size() - 1);
        m_slots[at] = Slot{key, row};
    }
    void grow() {
        m_slots.assign(2 * m_slots.size(), Slot{0, kNone});
        for (size_t r = 0; r < m_keys.size(); ++r) place(m_keys[r], static_cast<uint32_t>(r));
    }

    uint32_t m_codes;
    std::vector<Slot> m_slots;
    std::vector<uint32_t> m_keys;
    std::vector<float> m_values;
    std::vector<uint64_t> m_counts;
};

// A thread's buffers for one chunk.
struct ChunkScratch {
    std::vector<uint8_t> code, count;
    std::vector<float> value;
};

// A group's first value's bits, the key of its table.
inline uint32_t key_of(const float* table) { return std::bit_cast<uint32_t>(table[0]); }

// The row of `table`, added when new; nullptr when the table refuses the source (see the
// contract): a NaN or an infinity, another table under its key, or past `allowed` entries.
// same(a, b) compares two tables.
template <typename Same>
[[gnu::always_inline]] inline uint64_t* row_of(const float* table, uint32_t codes, uint64_t allowed, SeenTables& seen, ThreadTables& tables,
                                               Same same) {
    const uint32_t key = key_of(table);
    uint32_t r = tables.find(key);
    if (r == ThreadTables::kNone) {
        if (!all_finite(table, codes)) return nullptr;
        {
            std::lock_guard lock(seen.m);
            seen.keys.insert(key);
            if (seen.keys.size() * codes > allowed) return nullptr;
        }
        r = tables.add(table);
    } else if (!same(tables.table(r), table)) {
        return nullptr;
    }
    return tables.counts(r);
}

// Counts one chunk's `groups` groups into `tables`, false when a table refuses the source. A
// group whose table is its predecessor's goes to the same row without a lookup.
bool count_plainly(const float* value, const uint8_t* count, uint64_t groups, uint32_t codes, uint64_t allowed, SeenTables& seen,
                   ThreadTables& tables) {
    uint64_t* row = nullptr;
    for (uint64_t g = 0; g < groups; ++g) {
        const float* table = value + g * codes;
        auto same = [codes](const float* a, const float* b) { return same_table(a, b, codes); };
        if (!row || !same(table - codes, table))
            if (row = row_of(table, codes, allowed, seen, tables, same); !row) return false;
        const uint8_t* n = count + g * codes;
        for (uint32_t c = 0; c < codes; ++c) row[c] += n[c];
    }
    return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
// Whether two tables of kCodes (a multiple of 16) values hold the same bits, with AVX-512.
template <uint32_t kCodes>
[[gnu::always_inline]] MLENS_AVX512_TARGET inline bool same_table_avx512(const float* a, const float* b) {
    __mmask16 differ = 0;
    for (uint32_t v = 0; v < kCodes / 16; ++v)
        differ |= _mm512_cmpneq_epi32_mask(_mm512_loadu_si512(a + 16 * v), _mm512_loadu_si512(b + 16 * v));
    return differ == 0;
}

// count_plainly for tables of 16 or 32 codes with AVX-512: a table compared in one or two vectors,
// its counts widened and added in two or four.
template <uint32_t kCodes>
MLENS_AVX512_TARGET bool count_avx512(const float* value, const uint8_t* count, uint64_t groups, uint64_t allowed, SeenTables& seen,
                                      ThreadTables& tables) {
    uint64_t* row = nullptr;
    for (uint64_t g = 0; g < groups; ++g) {
        const float* table = value + g * kCodes;
        if (!row || !same_table_avx512<kCodes>(table - kCodes, table))
            if (row = row_of(table, kCodes, allowed, seen, tables, same_table_avx512<kCodes>); !row) return false;
        const uint8_t* n = count + g * kCodes;
        for (uint32_t v = 0; v < kCodes / 8; ++v) {
            const __m512i add = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n + 8 * v)));
            _mm512_storeu_si512(row + 8 * v, _mm512_add_epi64(_mm512_loadu_si512(row + 8 * v), add));
        }
    }
    return true;
}
#endif

bool count_chunk(const CodeGroups& shape, const ChunkScratch& s, uint64_t groups, uint64_t allowed, SeenTables& seen,
                 ThreadTables& tables) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    if (avx512 && shape.codes == 16) return count_avx512<16>(s.value.data(), s.count.data(), groups, allowed, seen, tables);
    if (avx512 && shape.codes == 32) return count_avx512<32>(s.value.data(), s.count.data(), groups, allowed, seen, tables);
#endif
    return count_plainly(s.value.data(), s.count.data(), groups, shape.codes, allowed, seen, tables);
}

// The tables of every thread as one, ascending by their first value's bits; nullopt when two
// threads hold different tables under one key.
std::optional<GroupTables> merged(const std::vector<std::unique_ptr<ThreadTables>>& per_thread, uint32_t codes) {
    std::map<uint32_t, size_t> index;  // key -> table in `all`
    GroupTables all{codes, {}, {}};
    for (const auto& t : per_thread)
        for (size_t r = 0; r < t->size(); ++r) {
            auto [it, added] = index.emplace(t->key(r), all.values.size() / codes);
            if (added) {
                all.values.insert(all.values.end(), t->table(r), t->table(r) + codes);
                all.counts.insert(all.counts.end(), t->counts(r), t->counts(r) + codes);
                continue;
            }
            if (!same_table(all.values.data() + it->second * codes, t->table(r), codes)) return std::nullopt;
            uint64_t* row = all.counts.data() + it->second * codes;
            for (uint32_t c = 0; c < codes; ++c) row[c] += t->counts(r)[c];
        }
    GroupTables out{codes, {}, {}};
    out.values.reserve(all.values.size());
    out.counts.reserve(all.counts.size());
    for (const auto& [key, at] : index) {
        out.values.insert(out.values.end(), all.values.begin() + static_cast<ptrdiff_t>(at * codes),
                          all.values.begin() + static_cast<ptrdiff_t>((at + 1) * codes));
        out.counts.insert(out.counts.end(), all.counts.begin() + static_cast<ptrdiff_t>(at * codes),
                          all.counts.begin() + static_cast<ptrdiff_t>((at + 1) * codes));
    }
    return out;
}

}  // namespace

Result<std::optional<GroupTables>> count_group_tables(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                      double progress_to) {
    const CodeGroups shape = src.code_groups();
    const uint64_t size = src.size();
    if (shape.codes == 0 || src.offset_groups().length != 0 || size == 0) return std::optional<GroupTables>{};
    const uint64_t chunk = src.chunk_length(kChunkTarget), allowed = std::clamp(size / kValuesPerEntry, kFreeEntries, kMostEntries);
    std::atomic<bool> declined{false};
    SeenTables seen;
    PerThreadObjects<ThreadTables> per_thread;
    Status run = parallel_job((size + chunk - 1) / chunk, threads, job,
                              [&](uint64_t c) -> Status {
                                  if (declined.load(std::memory_order_relaxed)) return ok_status();
                                  ThreadTables* tables = &per_thread.mine([&] { return std::make_unique<ThreadTables>(shape.codes); });
                                  ChunkScratch& s = thread_scratch<ChunkScratch>([] {});
                                  const uint64_t first = c * chunk, count = std::min(chunk, size - first), groups = count / shape.length;
                                  s.code.resize(count);
                                  s.value.resize(groups * shape.codes);
                                  s.count.resize(groups * shape.codes);
                                  if (Status r = src.read_code_groups(first, count, s.code.data(), s.value.data()); !r) return r;
                                  count_group_codes(shape, s.code.data(), groups, s.count.data());
                                  if (!count_chunk(shape, s, groups, allowed, seen, *tables)) declined = true;
                                  return ok_status();
                              },
                              progress_from, progress_to);
    if (!run) return run.error();
    if (declined) return std::optional<GroupTables>{};
    return merged(per_thread.all(), shape.codes);
}

ValueBounds group_table_range(const GroupTables& tables) {
    ValueBounds r{INFINITY, -INFINITY};
    const uint32_t codes = tables.codes;
    for (size_t t = 0; t < tables.values.size() / codes; ++t) {
        // The least and greatest code of the table that occurs (each table has one).
        const uint64_t* count = tables.counts.data() + t * codes;
        uint32_t least = 0, greatest = codes - 1;
        while (count[least] == 0) ++least;
        while (count[greatest] == 0) --greatest;
        const float a = tables.values[t * codes + least], b = tables.values[t * codes + greatest];
        r.min = std::min({r.min, a, b});
        r.max = std::max({r.max, a, b});
    }
    return r;
}

Status summarize_group_tables(const GroupTables& tables, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                              double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total) {
    total.assign(binning.slots(), 0);
    const double centre = (binning.lo + binning.hi) / 2;
    const uint32_t codes = tables.codes;
    const uint64_t count = tables.values.size() / codes;
    PassTotals totals(total);
    Status run = parallel_job((count + kTablesPerPart - 1) / kTablesPerPart, threads, job,
                              [&](uint64_t p) -> Status {
                                  std::vector<uint64_t>& local = thread_scratch<std::vector<uint64_t>>([] {});
                                  std::vector<uint32_t>& slot = thread_scratch<std::vector<uint32_t>>([] {});
                                  local.assign(binning.slots(), 0);
                                  slot.resize(codes);
                                  CentredSums sums;
                                  for (uint64_t t = p * kTablesPerPart; t < std::min(count, (p + 1) * kTablesPerPart); ++t) {
                                      const float* value = tables.values.data() + t * codes;
                                      const uint64_t* n = tables.counts.data() + t * codes;
                                      binning.bin_slots(value, codes, slot.data());
                                      for (uint32_t c = 0; c < codes; ++c) local[slot[c]] += n[c];
                                      tally_weighted_values(value, n, codes, centre, sums);
                                  }
                                  totals.hand_in(p, sums.summary(centre), local);
                                  return ok_status();
                              },
                              progress_from, progress_to);
    totals.merge_into(all);
    return run;
}

}  // namespace mlens
