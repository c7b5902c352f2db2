#include "array_search.h"

#include <algorithm>
#include <charconv>

#include "display_text.h"
#include "mlens/model/enum_names.h"
#include "mlens/text/text_search.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxElementBytes = 4096;

bool string_matches(std::string_view s, std::string_view query, PieceEncoding encoding) {
    if (contains_folded(s, query) || contains_folded(visible_piece_text(s, 512, encoding), query)) return true;
    if (encoding != PieceEncoding::byte_level) return false;
    std::optional<std::string> text = byte_level_decode(s);
    return text && contains_folded(*text, query);
}

bool scalar_matches(const Scalar& v, std::string_view key, std::string_view query) {
    if (contains_folded(v.to_string(), query)) return true;
    if (auto name = enum_value_name(key, v)) return contains_folded(*name, query);
    return false;
}

std::optional<uint64_t> whole_number(std::string_view s) {
    uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
    return n;
}

}  // namespace

namespace {

// The matches of one scan, handed to `found` every 16,384 elements and at the end.
class Collector {
public:
    Collector(uint64_t count, JobContext* job, const MatchesFound& found) : m_count(count), m_job(job), m_found(found) {}
    std::vector<uint64_t> out;
    // After element i: hands over and reports every 16,384 elements; false once cancelled.
    bool progress(uint64_t i) {
        if ((i & 0x3FFF) != 0) return true;
        hand_over();
        job_report(m_job, static_cast<double>(i) / static_cast<double>(std::max<uint64_t>(m_count, 1)));
        return !job_cancelled(m_job);
    }
    std::vector<uint64_t> finish() {
        hand_over();
        return std::move(out);
    }

private:
    void hand_over() {
        if (m_found && out.size() > m_handed) m_found(std::span<const uint64_t>(out).subspan(m_handed));
        m_handed = out.size();
    }
    uint64_t m_count;
    JobContext* m_job;
    const MatchesFound& m_found;
    size_t m_handed = 0;  // matches already given to `found`
};

bool uses_any(std::string_view text, const std::vector<uint32_t>& points) {
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        const size_t len = utf8_decode(text.substr(i), cp);
        if (len && std::binary_search(points.begin(), points.end(), cp)) return true;
        i += len ? len : 1;
    }
    return false;
}

}  // namespace

std::vector<uint64_t> search_array(const ArrayIndex& array, std::string_view key, std::string_view query, PieceEncoding encoding,
                                   JobContext* job, const MatchesFound& found) {
    if (query.empty()) return {};
    Collector c(array.count, job, found);
    std::optional<uint64_t> index = whole_number(query);
    if (index && *index >= array.count) index.reset();
    if (index) c.out.push_back(*index);
    if (array.element_type == ValueType::string) {
        array.for_each_string(0, kMaxElementBytes, [&](uint64_t i, std::string_view s) {
            if (i != index && string_matches(s, query, encoding)) c.out.push_back(i);
            return c.progress(i);
        });
    } else if (value_type_size(array.element_type) > 0) {
        for (uint64_t i = 0; i < array.count; ++i) {
            if (i != index && scalar_matches(array.scalar_at(i), key, query)) c.out.push_back(i);
            if (!c.progress(i)) break;
        }
    }
    return c.finish();
}

std::vector<uint64_t> strings_with_code_points(const ArrayIndex& array, const std::vector<uint32_t>& points, PieceEncoding encoding,
                                               JobContext* job, const MatchesFound& found) {
    Collector c(array.count, job, found);
    if (array.element_type != ValueType::string || points.empty()) return c.finish();
    array.for_each_string(0, kMaxElementBytes, [&](uint64_t i, std::string_view s) {
        std::optional<std::string> text = encoding == PieceEncoding::byte_level ? byte_level_decode(s) : std::nullopt;
        if (uses_any(text ? *text : s, points)) c.out.push_back(i);
        return c.progress(i);
    });
    return c.finish();
}

void ArraySearch::start(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string key, std::string query,
                        PieceEncoding encoding) {
    const std::string label = query;
    start_scan(jobs, std::move(array), label,
               [key = std::move(key), query = std::move(query), encoding](const ArrayIndex& a, JobContext& ctx, const MatchesFound& found) {
                   return search_array(a, key, query, encoding, &ctx, found);
               });
}

void ArraySearch::start_code_points(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string label,
                                    std::vector<uint32_t> points, PieceEncoding encoding) {
    start_scan(jobs, std::move(array), std::move(label),
               [points = std::move(points), encoding](const ArrayIndex& a, JobContext& ctx, const MatchesFound& found) {
                   return strings_with_code_points(a, points, encoding, &ctx, found);
               });
}

void ArraySearch::start_scan(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string label, Scan scan) {
    m_job.cancel();
    m_job.reset();
    m_partial.reset();
    m_query = std::move(label);
    if (m_query.empty() || !array) {
        m_matches.clear();
        return;
    }
    auto partial = std::make_shared<Partial>();
    m_partial = partial;
    m_stale = true;
    m_job = jobs.start("search " + std::to_string(array->count) + " elements",
                       [array, scan = std::move(scan), partial](JobContext& ctx) -> Result<std::vector<uint64_t>> {
                           std::vector<uint64_t> matches = scan(*array, ctx, [&](std::span<const uint64_t> more) {
                               std::lock_guard lock(partial->mutex);
                               partial->matches.insert(partial->matches.end(), more.begin(), more.end());
                           });
                           if (ctx.cancelled()) return cancelled_error();
                           return matches;
                       });
}

void ArraySearch::clear() {
    m_job.cancel();
    m_job.reset();
    m_partial.reset();
    m_query.clear();
    m_matches.clear();
}

bool ArraySearch::poll() {
    if (!m_job) return false;
    if (std::optional<Result<std::vector<uint64_t>>> taken = m_job.try_take()) {
        m_partial.reset();
        if (!*taken) return false;
        m_matches = std::move(*taken).value();
        m_stale = false;
        return true;
    }
    // The previous query's rows stay until this search has found something.
    std::lock_guard lock(m_partial->mutex);
    const size_t found = m_partial->matches.size();
    if (m_stale ? found > 0 : found != m_matches.size()) {
        m_matches = m_partial->matches;
        m_stale = false;
    }
    return false;
}

}  // namespace mlens
