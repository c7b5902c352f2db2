#include "array_search.h"

#include <algorithm>
#include <charconv>

#include "display_text.h"
#include "mlens/model/enum_names.h"
#include "mlens/text/text_search.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxElementBytes = 4096;

bool string_matches(std::string_view s, std::string_view query) {
    return contains_folded(s, query) || contains_folded(visible_piece_text(s, 512), query);
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

std::vector<uint64_t> search_array(const ArrayIndex& array, std::string_view key, std::string_view query, JobContext* job,
                                   const MatchesFound& found) {
    std::vector<uint64_t> out;
    if (query.empty()) return out;
    std::optional<uint64_t> index = whole_number(query);
    if (index && *index >= array.count) index.reset();
    if (index) out.push_back(*index);
    size_t handed = 0;  // matches already given to `found`
    auto hand_over = [&] {
        if (found && out.size() > handed) found(std::span<const uint64_t>(out).subspan(handed));
        handed = out.size();
    };
    auto progress = [&](uint64_t i) {
        if ((i & 0x3FFF) != 0) return true;
        hand_over();
        job_report(job, static_cast<double>(i) / static_cast<double>(std::max<uint64_t>(array.count, 1)));
        return !job_cancelled(job);
    };
    if (array.element_type == ValueType::string) {
        array.for_each_string(0, kMaxElementBytes, [&](uint64_t i, std::string_view s) {
            if (i != index && string_matches(s, query)) out.push_back(i);
            return progress(i);
        });
    } else if (value_type_size(array.element_type) > 0) {
        for (uint64_t i = 0; i < array.count; ++i) {
            if (i != index && scalar_matches(array.scalar_at(i), key, query)) out.push_back(i);
            if (!progress(i)) break;
        }
    }
    hand_over();
    return out;
}

void ArraySearch::start(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string key, std::string query) {
    m_job.cancel();
    m_job.reset();
    m_partial.reset();
    m_query = std::move(query);
    if (m_query.empty() || !array) {
        m_matches.clear();
        return;
    }
    auto partial = std::make_shared<Partial>();
    m_partial = partial;
    m_stale = true;
    m_job = jobs.start("search " + std::to_string(array->count) + " elements",
                       [array, key = std::move(key), query = m_query, partial](JobContext& ctx) -> Result<std::vector<uint64_t>> {
                           std::vector<uint64_t> matches = search_array(*array, key, query, &ctx, [&](std::span<const uint64_t> more) {
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
