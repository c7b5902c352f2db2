// Shared pieces of the mlens subcommands: opening a model for a command, exit codes, and the
// tabular text output. Exit codes: 0 success, 1 the file is broken or could not be opened
// (check: it has errors), 2 usage errors.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::cli {

constexpr int kExitOk = 0;
constexpr int kExitBroken = 1;
constexpr int kExitUsage = 2;

// Opens a model, printing the reason to stderr when the path cannot be opened.
std::optional<Model> open_or_report(const std::string& path);

// Prints rows as columns separated by two spaces, the last column unpadded.
void print_table(const std::vector<std::vector<std::string>>& rows);

// `v` printed with a printf format for one double (default "%.6g").
std::string number_text(double v, const char* format = "%.6g");
// A JSON number, or "nan" / "inf" / "-inf" (JSON has no such numbers).
nlohmann::json json_number(double v);
// "[a, b, c]" of a shape as given.
std::string shape_text(const std::vector<uint64_t>& dims);

// Each subcommand registers itself and stores its exit code in `exit_code` when it runs.
void add_info_command(CLI::App& app, int& exit_code);
void add_kv_command(CLI::App& app, int& exit_code);
void add_tensors_command(CLI::App& app, int& exit_code);
void add_dump_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
// store: list an Ollama store, or show one model's manifest
void add_store_command(CLI::App& app, int& exit_code);
// show, verify: one store model's manifest, and its digests checked
void add_show_commands(CLI::App& app, int& exit_code);
// stats, hist, compare
void add_quant_commands(CLI::App& app, int& exit_code);
void add_requant_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
// compat: what Ollama's compatibility shim would rewrite
void add_compat_command(CLI::App& app, int& exit_code);
// export-upstream: write the upstream-shaped GGUF (and mmproj) of an Ollama-made GGUF
void add_export_command(CLI::App& app, int& exit_code);
// tokenize, run, ab, layers (test inference through llama.cpp)
void add_infer_commands(CLI::App& app, int& exit_code);

}  // namespace mlens::cli
