// mlens cache [--clear] [--json]: what ModelLens keeps in its cache folder (io/cache_database.h):
// the cache database (its size and its entries per kind: blob digests, blob header verdicts, fsck
// summaries, store models' loadability verdicts) and the ranges read from remote models (range_cache.h: entries, bytes, one row per
// URL), and the bytes runs stopped while storing left (RangeCache::leftover_bytes, a row of its own
// when there are any); --clear empties both and says what it removed. With --json the same facts as
// one object (mlens-cache.schema.json): a database that cannot be opened is {"enabled": false} with
// the warning in "warnings", as the text output says it on stderr.
#include <iostream>

#include "cli_common.h"
#include "mlens/io/cache_database.h"
#include "mlens/model/summary.h"
#include "mlens/remote/range_cache.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

std::string bytes_text(uint64_t bytes) { return human_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)"; }

uint64_t database_entries(CacheDatabase& db) {
    uint64_t n = 0;
    for (const CacheKindCount& c : db.entry_counts()) n += c.entries;
    return n;
}

const char* json_kind_key(CacheKind kind) {
    switch (kind) {
        case CacheKind::blob_digest: return "blob_digests";
        case CacheKind::blob_header: return "blob_header_verdicts";
        case CacheKind::fsck_summary: return "fsck_summaries";
        case CacheKind::model_loadability: return "model_loadability_verdicts";
    }
    return "unknown";
}

nlohmann::json cache_json(CacheDatabase& db, const std::vector<std::string>& warnings, const std::vector<CacheEntryInfo>& entries,
                          uint64_t range_bytes, uint64_t leftover_bytes) {
    nlohmann::json database = {{"enabled", db.enabled()}};
    if (db.enabled()) {
        database["bytes"] = db.bytes();
        nlohmann::json counts = nlohmann::json::object();
        for (const CacheKindCount& c : db.entry_counts()) counts[json_kind_key(c.kind)] = c.entries;
        database["entries"] = counts;
    }
    nlohmann::json urls = nlohmann::json::array();
    for (const CacheEntryInfo& e : entries)
        urls.push_back({{"url", e.url}, {"file_size", e.size}, {"ranges", e.ranges}, {"bytes", e.bytes}});
    return {{"folder", default_cache_root()},
            {"database", database},
            {"remote_ranges", {{"entries", entries.size()}, {"bytes", range_bytes}, {"leftover_bytes", leftover_bytes}, {"urls", urls}}},
            {"warnings", warnings}};
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("cache",
                                   "The cache folder: the database of verified digests, blob and loadability verdicts and fsck summaries, and "
                                   "the ranges read from remote models");
    auto clear = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--clear", *clear, "Remove everything the database and the range cache hold");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([clear, json, &exit_code] {
        const std::shared_ptr<CacheDatabase> db = CacheDatabase::open();
        std::vector<std::string> warnings = db->take_warnings();
        const auto ranges = RangeCache::open();
        if (std::string reason = ranges->unusable_reason(); !reason.empty()) warnings.push_back(std::move(reason));
        for (const std::string& w : warnings) std::cerr << "warning: cache: " << escape_for_display(w, 600) << "\n";
        const RangeCache::Contents contents = ranges->contents();
        const std::vector<CacheEntryInfo>& entries = contents.entries;
        const uint64_t leftover_bytes = contents.leftover_bytes;
        uint64_t range_bytes = 0;
        for (const CacheEntryInfo& e : entries) range_bytes += e.bytes;
        if (*clear) {
            const uint64_t cleared = database_entries(*db);
            // The range cache first: when its lock is not had, nothing is cleared.
            Status cleared_all = ranges->clear();
            if (cleared_all) cleared_all = db->clear();
            if (!cleared_all) {
                exit_code = fail(default_cache_root(), cleared_all.error());
                return;
            }
            if (*json) {
                print_json_result({{"folder", default_cache_root()},
                                   {"removed",
                                    {{"database_entries", cleared},
                                     {"range_entries", entries.size()},
                                     {"range_bytes", range_bytes},
                                     {"leftover_bytes", leftover_bytes}}},
                                   {"warnings", warnings}});
                return;
            }
            std::cout << "removed " << plural(cleared, "database entry", "database entries") << " and "
                      << plural(entries.size(), "range entry", "range entries") << " of " << bytes_text(range_bytes)
                      << (leftover_bytes ? " and " + bytes_text(leftover_bytes) + " left by stopped runs" : "") << " from "
                      << escape_for_display(default_cache_root()) << "\n";
            return;
        }
        if (*json) {
            print_json_result(cache_json(*db, warnings, entries, range_bytes, leftover_bytes));
            return;
        }
        std::vector<std::vector<std::string>> rows = {{"cache folder", escape_for_display(default_cache_root())}};
        if (db->enabled()) {
            rows.push_back({"database", "cache.sqlite, " + bytes_text(db->bytes())});
            for (const CacheKindCount& c : db->entry_counts()) rows.push_back({cache_kind_name(c.kind), std::to_string(c.entries)});
        } else {
            rows.push_back({"database", "unavailable (see the warning)"});
        }
        rows.push_back({"remote ranges", plural(entries.size(), "entry", "entries") + ", " + bytes_text(range_bytes)});
        if (leftover_bytes) rows.push_back({"left by stopped runs", bytes_text(leftover_bytes) + ", removed by --clear"});
        print_table(rows, 0);
        if (entries.empty()) return;
        std::vector<std::vector<std::string>> urls = {{"STORED", "RANGES", "FILE SIZE", "URL"}};
        for (const CacheEntryInfo& e : entries)
            urls.push_back({human_bytes(e.bytes), std::to_string(e.ranges), human_bytes(e.size), escape_for_display(e.url)});
        std::cout << "\n";
        print_table(urls);
    });
}

}  // namespace mlens::cli
