#include "command_cache.h"

#include <iostream>

#include "mlens/text/escape.h"

namespace mlens::cli {

std::shared_ptr<CacheDatabase> command_cache(bool no_cache) {
    if (no_cache) return CacheDatabase::disabled();
    std::shared_ptr<CacheDatabase> cache = CacheDatabase::shared();
    for (const std::string& w : cache->take_warnings()) std::cerr << "warning: cache: " << escape_for_display(w, 600) << "\n";
    return cache;
}

void add_no_cache_flag(CLI::App* cmd, bool& no_cache) {
    cmd->add_flag("--no-cache", no_cache, "Neither read nor write the cache of verified digests and verdicts; compute everything");
}

}  // namespace mlens::cli
