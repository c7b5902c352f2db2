// The cache database (mlens/io/cache_database.h) as the commands that use it see it: `store`,
// `show`, `verify`, `check` and `fsck` take --no-cache.
//
// Contract: command_cache(false) is the process's shared database; its warnings (a database
// rebuilt, a cache folder that cannot be written so the command works uncached) go to stderr as
// "warning: cache: …", each once per process. command_cache(true) is a disabled database: nothing
// is looked up, nothing is written, no file is touched. The answers a command prints are the same
// either way. add_no_cache_flag's --no-cache also turns the remote range cache off for the process
// as it is parsed (set_range_cache_enabled), before the command opens anything.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

#include "mlens/io/cache_database.h"

namespace mlens::cli {

std::shared_ptr<CacheDatabase> command_cache(bool no_cache);
void add_no_cache_flag(CLI::App* cmd, bool& no_cache);

}  // namespace mlens::cli
