#include "command_cache.h"

#include <iostream>

#include "mlens/remote/range_cache.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

std::shared_ptr<CacheDatabase> command_cache(bool no_cache) {
    if (no_cache) return CacheDatabase::disabled();
    std::shared_ptr<CacheDatabase> cache = CacheDatabase::shared();
    for (const std::string& w : cache->take_warnings()) std::cerr << "warning: cache: " << escape_for_display(w, 600) << "\n";
    return cache;
}

void add_no_cache_flag(CLI::App* cmd, bool& no_cache) {
    // Set while the arguments are parsed, before any remote model is opened.
    cmd->add_flag_function(
        "--no-cache",
        [&no_cache](std::int64_t count) {
            no_cache = count > 0;
            if (no_cache) set_range_cache_enabled(false);
        },
        "Neither read nor write the cache of verified digests, verdicts and remote ranges; compute and fetch everything");
}

}  // namespace mlens::cli
