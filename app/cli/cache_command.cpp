// mlens cache [--clear]: what the cache of remote ranges holds (entries, bytes, one row per URL),
// or nothing any more.
#include <iostream>

#include "cli_common.h"
#include "mlens/model/summary.h"
#include "mlens/remote/range_cache.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

void add_cache_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("cache", "The cache of ranges read from remote models: entries, bytes, one row per URL");
    auto clear = std::make_shared<bool>(false);
    cmd->add_flag("--clear", *clear, "Remove everything the cache holds");
    cmd->callback([clear, &exit_code] {
        const auto cache = RangeCache::open();
        const std::vector<CacheEntryInfo> entries = cache->list_entries();
        uint64_t bytes = 0;
        for (const CacheEntryInfo& e : entries) bytes += e.bytes;
        if (*clear) {
            if (Status s = cache->clear(); !s) {
                exit_code = fail(cache->folder(), s.error());
                return;
            }
            std::cout << "removed " << plural(entries.size(), "entry", "entries") << ", " << human_bytes(bytes) << " (" << bytes << " bytes) from "
                      << escape_for_display(cache->folder()) << "\n";
            return;
        }
        print_table({{"cache", escape_for_display(cache->folder())},
                     {"entries", std::to_string(entries.size())},
                     {"bytes", human_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)"}},
                    0);
        if (entries.empty()) return;
        std::vector<std::vector<std::string>> rows = {{"STORED", "RANGES", "FILE SIZE", "URL"}};
        for (const CacheEntryInfo& e : entries)
            rows.push_back({human_bytes(e.bytes), std::to_string(e.ranges), human_bytes(e.size), escape_for_display(e.url)});
        std::cout << "\n";
        print_table(rows);
    });
}

}  // namespace mlens::cli
