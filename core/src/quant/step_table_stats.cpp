#include "step_table_stats.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "centred_sums.h"
#include "mlens/util/parallel_job.h"
#include "pass_totals.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

constexpr uint32_t kCodes = StepTables::kCodes;
// Half-float bit patterns: the keys of the steps.
constexpr uint32_t kKeys = 1u << 16;
// Values per chunk: a chunk's codes (a byte each), steps and visiting order stay in L2.
constexpr uint64_t kChunkTarget = 1u << 19;
// Table entries (distinct steps times codes) allowed whatever the source's size, the values each
// further entry must stand for (see the contract), and the most allowed: 8 MiB of counters.
constexpr uint64_t kFreeEntries = 1u << 16;
constexpr uint64_t kValuesPerEntry = 32;
constexpr uint64_t kMostEntries = 1u << 20;
// The groups a step must have in a chunk, on average, for its counters' trip to L1 to pay
// (decode_bench, perf: shorter runs of one step counted slower than binning each value).
constexpr uint64_t kGroupsPerRun = 8;
// Groups ahead of the one counted whose codes are fetched into L1.
constexpr uint32_t kPrefetchAhead = 8;
// Steps a thread's tables have room for before they grow.
constexpr uint64_t kStepsReserved = 1024;
// Steps summarized per task: parts fixed whatever the threads, so that sums add up in one order.
constexpr uint64_t kStepsPerPart = 64;

// Each step's half-float bits in key[i]; false when a step is no half float. Branch-free, so that
// the loop vectorizes: a normal half keeps 10 of a float's 23 fraction bits, a subnormal one
// (2^-24 to 2^-15) fewer, and the bits dropped must be zero.
MLENS_VECTOR_LOOP bool half_keys(const float* step, uint64_t n, uint16_t* key) {
    uint32_t inexact = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t b = std::bit_cast<uint32_t>(step[i]);
        const uint32_t sign = (b >> 16) & 0x8000u, magnitude = b & 0x7FFFFFFFu, e = magnitude >> 23;
        const uint32_t fraction = magnitude & 0x7FFFFFu, whole = fraction | 0x800000u;
        // Unsigned range checks: 2^-14 to below 2^16 (normal), 2^-24 to below 2^-14 (subnormal).
        const uint32_t normal = e - 113u <= 29u, subnormal = e - 103u <= 9u;
        const uint32_t dropped = normal ? 13u : subnormal ? 126u - e : 0u;
        const uint32_t kept = normal ? fraction : whole;
        const uint32_t bits = normal ? ((e - 112u) << 10) | (fraction >> 13) : whole >> dropped;
        const uint32_t lost = kept & ((1u << dropped) - 1u);
        const uint32_t held = normal | subnormal;
        inexact |= magnitude == 0 ? 0u : (lost | (held ^ 1u));
        // A zero's bits are the implicit bit alone, 2^23, which the 16-bit key drops.
        key[i] = static_cast<uint16_t>(sign | bits);
    }
    return inexact == 0;
}

// One thread's tables: a row of kCodes counts per step, in the order the thread first met them.
struct ThreadTables {
    ThreadTables() { counts.reserve(kStepsReserved * kCodes); }

    std::vector<int32_t> row_of = std::vector<int32_t>(kKeys, -1);
    std::vector<uint16_t> keys;
    std::vector<float> steps;
    std::vector<uint64_t> counts;

    uint64_t* row(uint16_t key, float step) {
        if (row_of[key] < 0) {
            row_of[key] = static_cast<int32_t>(keys.size());
            keys.push_back(key);
            steps.push_back(step);
            counts.resize(counts.size() + kCodes, 0);
        }
        return counts.data() + static_cast<size_t>(row_of[key]) * kCodes;
    }
};

// A thread's buffers for one chunk; `per_key` is all zero between chunks.
struct ChunkScratch {
    ChunkScratch() { distinct.reserve(kKeys); }

    std::vector<int8_t> code;
    std::vector<float> step;
    std::vector<uint16_t> key, distinct;
    std::vector<uint32_t> order, per_key = std::vector<uint32_t>(kKeys, 0), start = std::vector<uint32_t>(kKeys, 0);
};

// Counts the codes of the n groups `order` names (of kLength codes, or `length` when kLength is
// 0) into `row`, fetching groups ahead. Decision (perf): one set of 64-bit counters per step;
// four copies of them, each a quarter of the increments, measured slower, their rows no longer
// fitting in L1 beside the codes.
template <uint32_t kLength>
[[gnu::always_inline]] inline void count_run(const uint8_t* code, const uint32_t* order, uint32_t n, uint64_t* row,
                                             uint32_t length = kLength) {
    for (uint32_t r = 0; r < n; ++r) {
        if (r + kPrefetchAhead < n) __builtin_prefetch(code + static_cast<uint64_t>(order[r + kPrefetchAhead]) * length);
        const uint8_t* c = code + static_cast<uint64_t>(order[r]) * length;
        uint32_t j = 0;
        for (; j + 4 <= length; j += 4) {
            ++row[c[j]];
            ++row[c[j + 1]];
            ++row[c[j + 2]];
            ++row[c[j + 3]];
        }
        for (; j < length; ++j) ++row[c[j]];
    }
}

// The distinct steps of the whole source, met by any thread: the one count the tables' budget is
// checked against, whatever thread counted which chunk.
struct SeenSteps {
    std::vector<std::atomic<uint8_t>> seen = std::vector<std::atomic<uint8_t>>(kKeys);
    std::atomic<uint64_t> count{0};
};

// Counts the codes of one chunk's `groups` groups of `length` into `tables`, a step at a time;
// false, counting nothing, when the chunk's steps take the source's distinct steps past
// `allowed` entries, or when its steps are so many that each has fewer than kGroupsPerRun groups
// (a chunk of fewer groups counted as a whole one of 32-value groups).
bool count_chunk(ChunkScratch& s, uint64_t groups, uint32_t length, uint64_t allowed, SeenSteps& steps, ThreadTables& tables) {
    s.order.resize(groups);
    s.distinct.clear();
    for (uint64_t g = 0; g < groups; ++g)
        if (s.per_key[s.key[g]]++ == 0) s.distinct.push_back(s.key[g]);
    for (uint16_t k : s.distinct)
        if (steps.seen[k].exchange(1, std::memory_order_relaxed) == 0) steps.count.fetch_add(1, std::memory_order_relaxed);
    const bool short_runs = s.distinct.size() * kGroupsPerRun > std::max<uint64_t>(groups, kChunkTarget / 128);
    if (short_runs || steps.count.load(std::memory_order_relaxed) * kCodes > allowed) {
        for (uint16_t k : s.distinct) s.per_key[k] = 0;
        return false;
    }
    uint32_t at = 0;
    for (uint16_t k : s.distinct) {
        s.start[k] = at;
        at += s.per_key[k];
    }
    for (uint64_t g = 0; g < groups; ++g) s.order[s.start[s.key[g]]++] = static_cast<uint32_t>(g);
    const uint8_t* code = reinterpret_cast<const uint8_t*>(s.code.data());
    at = 0;
    for (uint16_t k : s.distinct) {
        const uint32_t n = s.per_key[k];
        s.per_key[k] = 0;
        const uint32_t* order = s.order.data() + at;
        uint64_t* row = tables.row(k, s.step[order[0]]);
        if (length == 32)
            count_run<32>(code, order, n, row);
        else
            count_run<0>(code, order, n, row, length);
        at += n;
    }
    return true;
}

// The tables of every thread as one, steps ascending by their bits.
StepTables merged(const std::vector<std::unique_ptr<ThreadTables>>& per_thread) {
    std::map<uint16_t, std::pair<float, std::vector<const uint64_t*>>> rows;
    for (const auto& t : per_thread)
        for (size_t i = 0; i < t->keys.size(); ++i) {
            auto& entry = rows[t->keys[i]];
            entry.first = t->steps[i];
            entry.second.push_back(t->counts.data() + i * kCodes);
        }
    StepTables out;
    out.steps.reserve(rows.size());
    out.counts.assign(rows.size() * kCodes, 0);
    uint64_t* row = out.counts.data();
    for (const auto& [key, entry] : rows) {
        out.steps.push_back(entry.first);
        for (const uint64_t* part : entry.second)
            for (uint32_t c = 0; c < kCodes; ++c) row[c] += part[c];
        row += kCodes;
    }
    return out;
}

// The value of `code` (a byte read as signed) times `step`, as read() computes it.
inline float step_value(float step, uint32_t code) { return step * static_cast<float>(static_cast<int8_t>(code)); }

// Adds one step's row (value[c] of count[c] values each) to `sums`, about `centre`.
MLENS_VECTOR_LOOP void tally_row(const float* value, const uint64_t* count, double centre, CentredSums& sums) {
    double total = 0, zeros = 0, a = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
#pragma omp simd reduction(+ : total, zeros, a, s1, s2, s3, s4)
    for (uint32_t c = 0; c < kCodes; ++c) {
        const double k = static_cast<double>(count[c]), x = value[c], d = x - centre, kd = k * d, kd2 = kd * d;
        total += k;
        zeros += x == 0.0 ? k : 0.0;
        a += k * std::fabs(x);
        s1 += kd;
        s2 += kd2;
        s3 += kd2 * d;
        s4 += kd2 * d * d;
    }
    CentredSums row{total, zeros, a, s1, s2, s3, s4, INFINITY, -INFINITY};
    for (uint32_t c = 0; c < kCodes; ++c)
        if (count[c] != 0) {
            row.lo = std::min(row.lo, value[c]);
            row.hi = std::max(row.hi, value[c]);
        }
    sums.add(row);
}

}  // namespace

Result<std::optional<StepTables>> count_step_tables(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                    double progress_to) {
    const uint32_t length = src.scaled_groups();
    const uint64_t size = src.size();
    if (length == 0 || size == 0) return std::optional<StepTables>{};
    {
        // The first granule's steps, before any chunk is read: a type whose steps are no half
        // floats (Q6_K: a half times an 8-bit scale) is passed over at the cost of one block.
        const uint64_t count = std::min<uint64_t>(src.granularity(), size), groups = count / length;
        std::vector<int8_t> code(count);
        std::vector<float> step(groups);
        std::vector<uint16_t> key(groups);
        if (Status s = src.read_scaled_groups(0, count, code.data(), step.data()); !s) return s.error();
        if (!half_keys(step.data(), groups, key.data())) return std::optional<StepTables>{};
    }
    const uint64_t chunk = src.chunk_length(kChunkTarget), allowed = std::clamp(size / kValuesPerEntry, kFreeEntries, kMostEntries);
    std::atomic<bool> declined{false};
    SeenSteps seen;
    std::mutex m;
    std::map<std::thread::id, size_t> thread_index;
    std::vector<std::unique_ptr<ThreadTables>> per_thread;
    Status run = parallel_job((size + chunk - 1) / chunk, threads, job,
                              [&](uint64_t c) -> Status {
                                  if (declined.load(std::memory_order_relaxed)) return ok_status();
                                  ThreadTables* tables = nullptr;
                                  {
                                      std::lock_guard lock(m);
                                      auto [it, added] = thread_index.emplace(std::this_thread::get_id(), per_thread.size());
                                      if (added) per_thread.push_back(std::make_unique<ThreadTables>());
                                      tables = per_thread[it->second].get();
                                  }
                                  ChunkScratch& s = thread_scratch<ChunkScratch>([] {});
                                  const uint64_t first = c * chunk, count = std::min(chunk, size - first), groups = count / length;
                                  s.code.resize(count);
                                  s.step.resize(groups);
                                  s.key.resize(groups);
                                  if (Status r = src.read_scaled_groups(first, count, s.code.data(), s.step.data()); !r) return r;
                                  if (!half_keys(s.step.data(), groups, s.key.data())) {
                                      declined = true;
                                      return ok_status();
                                  }
                                  try {
                                      if (!count_chunk(s, groups, length, allowed, seen, *tables)) declined = true;
                                  } catch (...) {
                                      // A table that could not grow: the counters start from zero next time.
                                      std::fill(s.per_key.begin(), s.per_key.end(), 0u);
                                      throw;
                                  }
                                  return ok_status();
                              },
                              progress_from, progress_to);
    if (!run) return run.error();
    if (declined) return std::optional<StepTables>{};
    return std::optional<StepTables>{merged(per_thread)};
}

ValueBounds step_table_range(const StepTables& tables) {
    ValueBounds r{INFINITY, -INFINITY};
    for (size_t s = 0; s < tables.steps.size(); ++s) {
        // The least and greatest code of the row that occurs (a row has at least one).
        const uint64_t* count = tables.counts.data() + s * kCodes;
        int least = -128, greatest = 127;
        while (count[static_cast<uint8_t>(least)] == 0) ++least;
        while (count[static_cast<uint8_t>(greatest)] == 0) --greatest;
        const float a = step_value(tables.steps[s], static_cast<uint8_t>(least));
        const float b = step_value(tables.steps[s], static_cast<uint8_t>(greatest));
        r.min = std::min({r.min, a, b});
        r.max = std::max({r.max, a, b});
    }
    return r;
}

Status summarize_step_tables(const StepTables& tables, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                             double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total) {
    total.assign(binning.slots(), 0);
    const double centre = (binning.lo + binning.hi) / 2;
    const uint64_t steps = tables.steps.size();
    PassTotals totals(total);
    Status run = parallel_job((steps + kStepsPerPart - 1) / kStepsPerPart, threads, job,
                              [&](uint64_t p) -> Status {
                                  std::vector<uint64_t>& local = thread_scratch<std::vector<uint64_t>>([] {});
                                  local.assign(binning.slots(), 0);
                                  CentredSums sums;
                                  float value[kCodes];
                                  uint32_t slot[kCodes];
                                  for (uint64_t s = p * kStepsPerPart; s < std::min(steps, (p + 1) * kStepsPerPart); ++s) {
                                      const uint64_t* count = tables.counts.data() + s * kCodes;
                                      for (uint32_t c = 0; c < kCodes; ++c) value[c] = step_value(tables.steps[s], c);
                                      binning.bin_slots(value, kCodes, slot);
                                      for (uint32_t c = 0; c < kCodes; ++c) local[slot[c]] += count[c];
                                      tally_row(value, count, centre, sums);
                                  }
                                  totals.hand_in(p, sums.summary(centre), local);
                                  return ok_status();
                              },
                              progress_from, progress_to);
    totals.merge_into(all);
    return run;
}

}  // namespace mlens
