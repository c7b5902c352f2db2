#include "mlens/quant/imatrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "mlens/formats/gguf_reader.h"
#include "mlens/io/cursor.h"
#include "mlens/io/source_read_error.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/text/number_format.h"
#include "mlens/util/analysis_memory.h"

namespace mlens {

namespace {

constexpr uint32_t kMaxLegacyNameBytes = 4096;
constexpr std::string_view kSumsSuffix = ".in_sum2";
constexpr std::string_view kCountsSuffix = ".counts";
// Sums are summarized this many values at a time, so a summary's memory is one chunk whatever
// column count a file claims.
constexpr uint64_t kSumsChunkValues = 1u << 20;
// Experts an entry may have: their counts and summaries are kept one per expert (far above the
// few hundred of any mixture-of-experts model).
constexpr uint64_t kMaxExperts = 1u << 20;
// Entries a legacy file may have: each is kept in memory, several times the 16 bytes it takes
// at least in the file (far above the few thousand weights of any model).
constexpr uint64_t kMaxLegacyEntries = 1u << 20;
// Counts are token or call counts that llama.cpp keeps in a double: whole numbers up to 2^53.
constexpr double kMaxCount = 9007199254740992.0;

Error truncated(std::string field, uint64_t offset, uint64_t need, uint64_t size) {
    return {ErrorCode::E_TRUNCATED, std::move(field), offset,
            "needs " + std::to_string(need) + " bytes at offset " + std::to_string(offset) + ", the file has " + std::to_string(size)};
}

bool read_i32(Cursor& c, int32_t& v) {
    uint32_t u = 0;
    if (!c.read_u32(u)) return false;
    std::memcpy(&v, &u, 4);
    return true;
}

// The legacy layout, values skipped (they are read on demand).
Result<Imatrix> read_legacy(const ByteSourcePtr& source) {
    const uint64_t size = source->size();
    Cursor c(*source, 0);
    Imatrix m;
    m.format = ImatrixFormat::legacy;
    m.source = source;
    int32_t n_entries = 0;
    if (!read_i32(c, n_entries)) return truncated("n_entries", 0, 4, size);
    // Each entry takes at least 16 bytes (three int32, one name byte, one value).
    if (n_entries < 1)
        return Error{ErrorCode::E_COUNT, "n_entries", 0, std::to_string(n_entries) + " entries, where a legacy imatrix holds at least one"};
    if (static_cast<uint64_t>(n_entries) > (size - 4) / 16)
        return Error{ErrorCode::E_COUNT, "n_entries", 0,
                     std::to_string(n_entries) + " entries cannot fit in " + std::to_string(size) + " bytes"};
    // Nothing is reserved from the count: entries are kept as they are read, and a count that
    // the file's size allows (a sparse file) stops at the first entry that is not there.
    if (static_cast<uint64_t>(n_entries) > kMaxLegacyEntries)
        return Error{ErrorCode::E_LIMIT, "n_entries", 0,
                     std::to_string(n_entries) + " entries, more than the " + std::to_string(kMaxLegacyEntries) +
                         " an importance matrix is read with"};
    for (int32_t i = 0; i < n_entries; ++i) {
        const std::string field = "entries[" + std::to_string(i) + "]";
        int32_t len = 0, ncall = 0, nval = 0;
        uint64_t at = c.position();
        if (!read_i32(c, len)) return truncated(field + ".name_length", at, 4, size);
        if (len < 1 || static_cast<uint32_t>(len) > kMaxLegacyNameBytes || static_cast<uint64_t>(len) > c.remaining())
            return Error{
                ErrorCode::E_COUNT, field + ".name_length", at,
                "name length " + std::to_string(len) + " (1 to " + std::to_string(kMaxLegacyNameBytes) + " bytes that the file has)"};
        ImatrixEntry e;
        if (!c.read_string(e.name, static_cast<uint64_t>(len)))
            return truncated(field + ".name", c.position(), static_cast<uint64_t>(len), size);
        if (std::any_of(e.name.begin(), e.name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
            return Error{ErrorCode::E_NOT_IMATRIX, field + ".name", at + 4,
                         "entry name with control bytes: " + escape_for_display(e.name, 80)};
        e.counts_offset = c.position();
        if (!read_i32(c, ncall)) return truncated(field + ".ncall", e.counts_offset, 4, size);
        at = c.position();
        if (!read_i32(c, nval)) return truncated(field + ".n_values", at, 4, size);
        if (ncall < 0) return Error{ErrorCode::E_COUNT, field + ".ncall", e.counts_offset, "negative call count " + std::to_string(ncall)};
        if (nval < 1 || static_cast<uint64_t>(nval) > c.remaining() / 4)
            return Error{
                ErrorCode::E_COUNT, field + ".n_values", at,
                std::to_string(nval) + " values (at least 1, and " + std::to_string(c.remaining() / 4) + " fit in the bytes left)"};
        e.columns = static_cast<uint64_t>(nval);
        e.counts = {static_cast<double>(ncall)};
        e.sums_offset = c.position();
        c.skip(e.columns * 4);
        m.entries.push_back(std::move(e));
    }
    // Optional trailer: chunk count, then the dataset name.
    if (c.remaining() == 0) return m;
    int32_t chunks = 0, len = 0;
    uint64_t at = c.position();
    if (!read_i32(c, chunks)) return truncated("chunk_count", at, 4, size);
    m.chunk_count = static_cast<uint64_t>(std::max(chunks, 0));
    if (c.remaining() == 0) return m;
    at = c.position();
    if (!read_i32(c, len)) return truncated("dataset_length", at, 4, size);
    if (len < 0 || static_cast<uint64_t>(len) != c.remaining())
        return Error{ErrorCode::E_NOT_IMATRIX, "dataset_length", at,
                     "dataset name of " + std::to_string(len) + " bytes where " + std::to_string(c.remaining()) + " bytes are left"};
    std::string dataset;
    if (len > 0 && !c.read_string(dataset, static_cast<uint64_t>(len)))
        return truncated("dataset", c.position(), static_cast<uint64_t>(len), size);
    if (!dataset.empty()) m.datasets.push_back(std::move(dataset));
    return m;
}

bool strip_suffix(std::string& s, std::string_view suffix) {
    if (!s.ends_with(suffix)) return false;
    s.resize(s.size() - suffix.size());
    return true;
}

Result<Imatrix> read_gguf_imatrix(const ByteSourcePtr& source) {
    Model model = read_gguf(source);
    for (const Diagnostic& d : model.diagnostics)
        if (d.severity == Severity::error) return Error{d.code, d.field, d.offset, d.message};
    if (model.files.empty() || model.files[0].big_endian)
        return Error{ErrorCode::E_NOT_IMATRIX, "", std::nullopt, "a big-endian GGUF is not read as an importance matrix"};
    Imatrix m;
    m.format = ImatrixFormat::gguf;
    m.source = source;
    if (const MetadataEntry* kv = model.find("imatrix.datasets");
        kv && kv->value.is_array() && kv->value.array->element_type == ValueType::string)
        for (uint64_t i = 0; i < kv->value.array->count && i < 1024; ++i) m.datasets.push_back(kv->value.array->string_at(i, 4096));
    m.chunk_count = model.get_uint("imatrix.chunk_count");
    m.chunk_size = model.get_uint("imatrix.chunk_size");

    // name → (sums tensor, counts tensor), in the order the sums appear.
    std::map<std::string, std::pair<const TensorInfo*, const TensorInfo*>> pairs;
    std::vector<std::string> order;
    for (const TensorInfo& t : model.tensors) {
        std::string name = t.name;
        if (strip_suffix(name, kSumsSuffix)) {
            if (!pairs.count(name)) order.push_back(name);
            pairs[name].first = &t;
        } else if (strip_suffix(name, kCountsSuffix)) {
            if (!pairs.count(name)) order.push_back(name);
            pairs[name].second = &t;
        }
    }
    if (order.empty())
        return Error{ErrorCode::E_NOT_IMATRIX, "", std::nullopt,
                     "a GGUF without <name>.in_sum2 and <name>.counts tensors: not an importance matrix"};
    for (const std::string& name : order) {
        auto [sums, counts] = pairs[name];
        const std::string shown = escape_for_display(name, 120);
        auto shape_error = [&](const TensorInfo* t, std::string message) {
            return Error{ErrorCode::E_IMATRIX_SHAPE, t ? "tensors." + escape_for_display(t->name, 120) : "",
                         t ? std::optional(t->info_range.offset) : std::nullopt, std::move(message)};
        };
        if (!sums || !counts)
            return shape_error(sums ? sums : counts, shown + " has " + (sums ? "in_sum2 but no counts" : "counts but no in_sum2"));
        if (sums->type.id != 0 || counts->type.id != 0)
            return shape_error(sums->type.id != 0 ? sums : counts, shown + ": sums and counts must be F32");
        ImatrixEntry e;
        e.name = name;
        e.columns = sums->ne.empty() ? 0 : sums->ne[0];
        e.experts = counts->n_elements;
        if (e.columns == 0 || e.experts == 0 || sums->n_elements != e.columns * e.experts || sums->n_elements / e.columns != e.experts)
            return shape_error(sums,
                               shown + ": " + std::to_string(sums->n_elements) + " sums are not " + std::to_string(e.experts) +
                                   " experts of " + std::to_string(e.columns) + " columns");
        if (e.experts > kMaxExperts)
            return shape_error(counts,
                               shown + ": " + std::to_string(e.experts) + " experts, more than the " + std::to_string(kMaxExperts) +
                                   " an importance matrix is read with");
        if (!source->contains(sums->data_offset, sums->n_elements * 4) || !source->contains(counts->data_offset, e.experts * 4))
            return truncated("tensors." + escape_for_display(name, 120), sums->data_offset, sums->n_elements * 4, source->size());
        e.sums_offset = sums->data_offset;
        e.counts_offset = counts->data_offset;
        std::vector<float> stored(e.experts);
        if (!source->read(e.counts_offset, e.experts * 4, stored.data()))
            return Error{ErrorCode::E_IO, "", e.counts_offset, "cannot read the counts of " + shown};
        for (uint64_t x = 0; x < e.experts; ++x) {
            const float f = stored[x];
            if (!std::isfinite(f) || f < 0 || f > kMaxCount)
                return Error{ErrorCode::E_IMATRIX_VALUE, "tensors." + escape_for_display(counts->name, 120), e.counts_offset + x * 4,
                             shown + ": the count of expert " + std::to_string(x) + " is " + significant(f, 9) +
                                 ", where a count is a number of tokens from 0 to 2^53"};
            // llama.cpp rounds the stored float to the nearest integer count.
            e.counts.push_back(std::round(static_cast<double>(f)));
        }
        m.entries.push_back(std::move(e));
    }
    return m;
}

// Skips one GGUF value of `type`; false when it does not fit or is not a known type.
bool skip_gguf_value(Cursor& c, uint32_t type, bool in_array = false) {
    switch (type) {
        case 0:
        case 1:
        case 7:
            return c.skip(1);
        case 2:
        case 3:
            return c.skip(2);
        case 4:
        case 5:
        case 6:
            return c.skip(4);
        case 10:
        case 11:
        case 12:
            return c.skip(8);
        case 8: {
            uint64_t n = 0;
            return c.read_u64(n) && c.skip(n);
        }
        case 9: {
            uint32_t element = 0;
            uint64_t n = 0;
            if (in_array || !c.read_u32(element) || !c.read_u64(n) || element == 9) return false;
            for (uint64_t i = 0; i < n; ++i)
                if (c.position() > Cursor::kWindowBytes || !skip_gguf_value(c, element, true)) return false;
            return true;
        }
        default:
            return false;
    }
}

// The field that names an entry's sums: GGUF its in_sum2 tensor, legacy its values.
std::string sums_field(const Imatrix& m, const ImatrixEntry& e) {
    if (m.format == ImatrixFormat::gguf) return "tensors." + escape_for_display(e.name, 120) + std::string(kSumsSuffix);
    const auto at = std::find_if(m.entries.begin(), m.entries.end(), [&](const ImatrixEntry& x) { return &x == &e; });
    return "entries[" + std::to_string(at - m.entries.begin()) + "].values";
}

// Sums of squared activations are finite and not negative: any other value poisons every
// importance computed from it (and every quantization made with it), so the entry is refused.
Status check_sums(const Imatrix& m, const ImatrixEntry& e, uint64_t expert, uint64_t first_column, const std::vector<float>& sums) {
    for (size_t i = 0; i < sums.size(); ++i) {
        if (std::isfinite(sums[i]) && sums[i] >= 0) continue;
        const uint64_t column = first_column + i;
        return Error{ErrorCode::E_IMATRIX_VALUE, sums_field(m, e), e.sums_offset + (expert * e.columns + column) * 4,
                     escape_for_display(e.name, 120) + ": the sum of column " + std::to_string(column) +
                         (e.experts > 1 ? " of expert " + std::to_string(expert) : std::string()) + " is " + significant(sums[i], 9) +
                         ", where a sum of squared activations is finite and not negative"};
    }
    return ok_status();
}

}  // namespace

const char* imatrix_format_name(ImatrixFormat f) { return f == ImatrixFormat::gguf ? "GGUF" : "legacy .dat"; }

const ImatrixEntry* Imatrix::find(std::string_view tensor_name) const {
    for (const ImatrixEntry& e : entries)
        if (e.name == tensor_name) return &e;
    return nullptr;
}

bool looks_like_imatrix(const ByteSource& source) {
    Cursor c(source, 0);
    const uint8_t* magic = c.peek(4);
    if (magic && std::memcmp(magic, "GGUF", 4) == 0) {
        uint32_t version = 0;
        uint64_t tensors = 0, kvs = 0;
        if (!c.skip(4) || !c.read_u32(version) || version < 2 || version > 3 || !c.read_u64(tensors) || !c.read_u64(kvs)) return false;
        for (uint64_t i = 0; i < std::min<uint64_t>(kvs, 64) && c.position() < Cursor::kWindowBytes; ++i) {
            uint64_t key_length = 0;
            uint32_t type = 0;
            std::string key;
            if (!c.read_u64(key_length) || key_length > 256 || !c.read_string(key, key_length) || !c.read_u32(type)) return false;
            if (key == "general.type" && type == 8) {
                uint64_t n = 0;
                std::string value;
                return c.read_u64(n) && n == 7 && c.read_string(value, n) && value == "imatrix";
            }
            if (!skip_gguf_value(c, type)) return false;
        }
        return false;
    }
    // Legacy: the structure walk reads headers only; a legacy imatrix is small next to a model.
    struct NoDelete {
        void operator()(const ByteSource*) const {}
    };
    return read_legacy(ByteSourcePtr(&source, NoDelete{})).ok();
}

Result<Imatrix> read_imatrix(ByteSourcePtr source) {
    uint8_t magic[4] = {};
    if (source->size() >= 4 && !source->read(0, 4, magic)) return source_read_error(*source, "", 0, "cannot read the first bytes");
    if (std::memcmp(magic, "GGUF", 4) == 0) return read_gguf_imatrix(source);
    Result<Imatrix> legacy = read_legacy(source);
    if (legacy) return legacy;
    Error e = legacy.error();
    e.message = "not a GGUF, and not a legacy imatrix: " + e.message;
    return e;
}

Result<Imatrix> open_imatrix(const std::string& path) {
    Result<ByteSourcePtr> source = open_file(path);
    if (!source) return source.error();
    return read_imatrix(*source);
}

Result<std::vector<float>> read_sums(const Imatrix& m, const ImatrixEntry& e, uint64_t expert) {
    if (expert >= e.experts)
        return Error{ErrorCode::E_RANGE, "", std::nullopt, "expert " + std::to_string(expert) + " of " + std::to_string(e.experts)};
    std::vector<float> sums(e.columns);
    const uint64_t offset = e.sums_offset + expert * e.columns * 4;
    if (!m.source->read(offset, e.columns * 4, sums.data()))
        return Error{ErrorCode::E_IO, "", offset, "cannot read the sums of " + escape_for_display(e.name, 120)};
    if (Status valid = check_sums(m, e, expert, 0, sums); !valid) return valid.error();
    return sums;
}

Result<std::vector<float>> importance(const Imatrix& m, const ImatrixEntry& e, uint64_t expert) {
    Result<std::vector<float>> sums = read_sums(m, e, expert);
    if (!sums) return sums;
    const double count = e.count_of(expert);
    std::vector<float>& v = *sums;
    if (m.format == ImatrixFormat::gguf && count <= 0)
        std::fill(v.begin(), v.end(), 1.0f);
    else if (count > 0)
        for (float& x : v) x = static_cast<float>(x / count);
    return sums;
}

Result<ColumnImportance> importance_for(const Imatrix& m, std::string_view tensor, uint64_t row_length, uint64_t rows,
                                        std::optional<uint64_t> expert) {
    const std::string shown = escape_for_display(std::string(tensor), 120);
    const ImatrixEntry* e = m.find(tensor);
    if (!e) return Error{ErrorCode::E_NOT_FOUND, "", std::nullopt, "the importance matrix has no entry for " + shown};
    // Runs of row_length values: GGUF keeps one per expert; legacy keeps all experts end to end.
    const bool split = m.format == ImatrixFormat::legacy && row_length > 0 && e->columns % row_length == 0;
    if (row_length == 0 || (!split && e->columns != row_length))
        return Error{ErrorCode::E_IMATRIX_SHAPE, "", std::nullopt,
                     "the importance matrix has " + std::to_string(e->columns) + " columns for " + shown + ", whose rows have " +
                         std::to_string(row_length) + " values"};
    const uint64_t runs = split ? e->columns / row_length : e->experts;
    const std::string experts_text = plural(runs, "expert");
    if (expert && *expert >= runs)
        return Error{ErrorCode::E_IMATRIX_SHAPE, "", std::nullopt,
                     "expert " + std::to_string(*expert) + " of " + shown + ": the importance matrix has " + experts_text};
    if (!expert && runs > 1 && (rows == 0 || rows % runs != 0))
        return Error{ErrorCode::E_IMATRIX_SHAPE, "", std::nullopt,
                     shown + " has " + std::to_string(rows) + " rows, which do not split into the importance matrix's " + experts_text};
    const uint64_t wanted = expert ? 1 : runs;
    if ((split ? e->columns : wanted * row_length) > kAnalysisMemoryBound / 4 / sizeof(float))
        return Error{ErrorCode::E_LIMIT, "", std::nullopt,
                     "the importance of " + shown + " takes more than " + std::to_string(kAnalysisMemoryBound / 4) + " bytes"};
    ColumnImportance out;
    out.entry = e->name;
    out.row_length = row_length;
    out.rows_per_run = expert || runs == 1 ? std::max<uint64_t>(rows, 1) : rows / runs;
    if (split) {
        Result<std::vector<float>> all = importance(m, *e, 0);
        if (!all) return all.error();
        const uint64_t first = expert ? *expert * row_length : 0;
        out.values.assign(all->begin() + static_cast<std::ptrdiff_t>(first),
                          all->begin() + static_cast<std::ptrdiff_t>(first + wanted * row_length));
        return out;
    }
    for (uint64_t x = expert.value_or(0); x < expert.value_or(0) + wanted; ++x) {
        Result<std::vector<float>> run = importance(m, *e, x);
        if (!run) return run.error();
        out.values.insert(out.values.end(), run->begin(), run->end());
    }
    return out;
}

namespace {

// Calls `use` on the sums of expert `x`, a bounded chunk at a time.
template <class Use>
Status for_each_sums_chunk(const Imatrix& m, const ImatrixEntry& e, uint64_t x, JobContext* job, Use&& use) {
    std::vector<float> chunk;
    for (uint64_t first = 0; first < e.columns; first += kSumsChunkValues) {
        if (job_cancelled(job)) return cancelled_error();
        const uint64_t n = std::min(kSumsChunkValues, e.columns - first);
        chunk.resize(n);
        const uint64_t offset = e.sums_offset + (x * e.columns + first) * 4;
        if (!m.source->read(offset, n * 4, chunk.data()))
            return Error{ErrorCode::E_IO, "", offset, "cannot read the sums of " + escape_for_display(e.name, 120)};
        if (Status valid = check_sums(m, e, x, first, chunk); !valid) return valid;
        use(chunk);
    }
    return ok_status();
}

}  // namespace

// Two passes over the sums, one expert and one chunk at a time, so memory does not grow with the
// entry: the figures and the range of the logarithms, then the histogram.
Result<ImatrixEntrySummary> summarize_entry(const Imatrix& m, const ImatrixEntry& e, uint32_t bins, JobContext* job) {
    ImatrixEntrySummary s;
    double total = 0, log_lo = 0, log_hi = 0;
    uint64_t activated = 0, positive = 0;
    const double passes = 2.0 * static_cast<double>(e.experts);
    for (int pass = 0; pass < 2; ++pass) {
        for (uint64_t x = 0; x < e.experts; ++x) {
            if (job_cancelled(job)) return cancelled_error();
            const double count = e.count_of(x);
            if (pass == 1 && (count <= 0 || positive == 0)) continue;
            if (pass == 1) {
                Histogram& h = s.log10_importance;
                const double scale = static_cast<double>(h.counts.size()) / (h.hi - h.lo);
                Status read = for_each_sums_chunk(m, e, x, job, [&](const std::vector<float>& sums) {
                    for (float v : sums) {
                        if (v / count <= 0) continue;
                        const double bin = std::floor((std::log10(v / count) - h.lo) * scale);
                        ++h.counts[static_cast<size_t>(std::clamp(bin, 0.0, static_cast<double>(h.counts.size() - 1)))];
                    }
                });
                if (!read) return read.error();
                continue;
            }
            ImatrixExpertSummary ex;
            ex.count = count;
            Status read = for_each_sums_chunk(m, e, x, job, [&](const std::vector<float>& sums) {
                for (float v : sums) {
                    ex.sum += v;
                    if (v == 0) ++ex.zero_columns;
                    if (count <= 0) continue;
                    const double w = v / count;
                    s.min_importance = activated ? std::min(s.min_importance, w) : w;
                    s.max_importance = activated ? std::max(s.max_importance, w) : w;
                    total += w;
                    ++activated;
                    if (w <= 0) {
                        ++s.zero_importance;
                        continue;
                    }
                    const double l = std::log10(w);
                    log_lo = positive ? std::min(log_lo, l) : l;
                    log_hi = positive ? std::max(log_hi, l) : l;
                    ++positive;
                }
            });
            if (!read) return read.error();
            s.zero_columns += ex.zero_columns;
            if (count <= 0) ++s.inactive_experts;
            s.experts.push_back(ex);
            job_report(job, static_cast<double>(x + 1) / passes);
        }
        if (pass == 0 && positive) {
            s.log10_importance.lo = log_lo;
            s.log10_importance.hi = log_hi > log_lo ? log_hi : log_lo + 1;
            s.log10_importance.counts.assign(std::max<uint32_t>(1, bins), 0);
        }
    }
    if (activated) s.mean_importance = total / static_cast<double>(activated);
    job_report(job, 1.0);
    return s;
}

}  // namespace mlens
