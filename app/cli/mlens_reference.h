// What mlens's man page and --help add to the commands and options: the description, exit
// statuses, files and environment (cli_reference.h renders them), and the hidden
// `mlens --reference man|bash|zsh|fish` the build uses to write the man page and completions.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

#include "cli_reference.h"

namespace mlens::cli {

ProgramReference mlens_reference();

// When argv is `mlens --reference FORMAT`, prints that document of `app` and returns the exit
// status (2 for an unknown FORMAT); otherwise nullopt.
std::optional<int> print_reference_if_asked(const CLI::App& app, int argc, char** argv);

}  // namespace mlens::cli
