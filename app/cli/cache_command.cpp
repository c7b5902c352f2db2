// mlens cache [--clear]: what ModelLens keeps in its cache folder (io/cache_database.h): the
// cache database (its size and its entries per kind: blob digests, blob header verdicts, fsck
// summaries) and the ranges read from remote models (range_cache.h: entries, bytes, one row per
// URL); --clear empties both.
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

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("cache",
                                   "The cache folder: the database of verified digests, blob verdicts and fsck summaries, and the ranges "
                                   "read from remote models");
    auto clear = std::make_shared<bool>(false);
    cmd->add_flag("--clear", *clear, "Remove everything the database and the range cache hold");
    cmd->callback([clear, &exit_code] {
        const std::shared_ptr<CacheDatabase> db = CacheDatabase::open();
        for (const std::string& w : db->take_warnings()) std::cerr << "warning: cache: " << escape_for_display(w, 600) << "\n";
        const auto ranges = RangeCache::open();
        const std::vector<CacheEntryInfo> entries = ranges->list_entries();
        uint64_t range_bytes = 0;
        for (const CacheEntryInfo& e : entries) range_bytes += e.bytes;
        if (*clear) {
            const uint64_t cleared = database_entries(*db);
            for (Status s : {db->clear(), ranges->clear()})
                if (!s) {
                    exit_code = fail(default_cache_root(), s.error());
                    return;
                }
            std::cout << "removed " << plural(cleared, "database entry", "database entries") << " and "
                      << plural(entries.size(), "range entry", "range entries") << " of " << bytes_text(range_bytes) << " from "
                      << escape_for_display(default_cache_root()) << "\n";
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
