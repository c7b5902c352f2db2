// ArraySearch: finds the elements of a metadata array (a vocabulary of up to millions of
// strings) that match a query, on a worker thread, so typing never blocks the window.
//
// Contract:
//  - Matching is case-insensitive for ASCII. A string element matches when the query occurs in
//    its raw bytes or in its visible form (display_text.h: "·" for space, "\n" escapes, ...);
//    with PieceEncoding::byte_level also when it occurs in the decoded text (" the" and "·the"
//    find "Ġthe", "法治" finds "æ³ķæ²»", and "æ³ķ" still does).
//    A numeric element matches when the query occurs in its exact text or, for enum-valued keys,
//    in its enum name ("control" finds CONTROL token types).
//  - A query that is a whole number below the element count also matches the element with that
//    index; it is listed first.
//  - search_array hands the matches found so far to `found` (when given) every 16,384 elements
//    and at the end, each match once, in order.
//  - strings_with_code_points lists the string elements that use any of `points` (sorted):
//    in their text as `encoding` reads it (a byte-level piece's decoded text, which may also
//    split a character over two tokens: only whole characters count). start_code_points runs it
//    as the search "label" (the tokens with characters no font draws).
//  - start() cancels a search still running. The job's result is every match (or E_CANCELLED);
//    while it runs, the matches found so far stream through a shared list, so rows appear while
//    a long search runs. poll() (main thread, each frame) publishes those, then takes the
//    finished search's result and returns true once. Results are indices in ascending order
//    (after the index match).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "job_runner.h"
#include "mlens/model/value.h"
#include "mlens/text/byte_level_bpe.h"

namespace mlens {

using MatchesFound = std::function<void(std::span<const uint64_t>)>;

std::vector<uint64_t> search_array(const ArrayIndex& array, std::string_view key, std::string_view query, PieceEncoding encoding,
                                   JobContext* job = nullptr, const MatchesFound& found = {});

std::vector<uint64_t> strings_with_code_points(const ArrayIndex& array, const std::vector<uint32_t>& points, PieceEncoding encoding,
                                               JobContext* job = nullptr, const MatchesFound& found = {});

class ArraySearch {
public:
    void start(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string key, std::string query,
               PieceEncoding encoding = PieceEncoding::plain);
    void start_code_points(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string label, std::vector<uint32_t> points,
                           PieceEncoding encoding);
    void clear();
    bool poll();
    bool running() const { return m_job && !m_job.done(); }
    double progress() const { return m_job.progress(); }
    bool active() const { return !m_query.empty(); }
    const std::string& query() const { return m_query; }
    const std::vector<uint64_t>& matches() const { return m_matches; }

private:
    using Scan = std::function<std::vector<uint64_t>(const ArrayIndex&, JobContext&, const MatchesFound&)>;
    void start_scan(JobRunner& jobs, std::shared_ptr<const ArrayIndex> array, std::string label, Scan scan);
    struct Partial {
        std::mutex mutex;
        std::vector<uint64_t> matches;  // grows while the search runs
    };
    std::string m_query;
    JobHandle<std::vector<uint64_t>> m_job;
    std::shared_ptr<Partial> m_partial;
    std::vector<uint64_t> m_matches;
    bool m_stale = false;  // m_matches are the previous query's
};

}  // namespace mlens
