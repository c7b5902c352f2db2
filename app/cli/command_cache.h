// The cache database (mlens/io/cache_database.h) as the commands that use it see it: `store`,
// `show`, `verify`, `check` and `fsck` take --no-cache.
//
// Contract: command_cache(false) is the process's shared database; its warnings (a database
// rebuilt, a cache folder that cannot be written so the command works uncached) go to stderr as
// "warning: cache: …", each once per process. command_cache(true) is a disabled database: nothing
// is looked up, nothing is written, no file is touched. The answers a command prints are the same
// either way.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

#include "mlens/io/cache_database.h"

namespace mlens::cli {

std::shared_ptr<CacheDatabase> command_cache(bool no_cache);
void add_no_cache_flag(CLI::App* cmd, bool& no_cache);

}  // namespace mlens::cli
