// Shared pieces of the mlens subcommands: opening a model for a command and the tabular text
// output. Exit codes and failures: cli_error.h (0 success, 1 the input has errors or could not be
// opened, 2 usage errors).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_error.h"
#include "mlens/infer/worker_session.h"
#include "mlens/model/model.h"
#include "mlens/model/shape_text.h"
#include "mlens/open/target.h"
#include "mlens/text/number_format.h"

namespace mlens::cli {

// Opens the model a path or reference names (open/target.h), printing the reason to stderr when it
// cannot be opened. When the Model has errors, their first (a truncation summary comes first) and
// their count go to stderr too, unless `report_errors` is false (check prints them all itself).
std::optional<Model> open_or_report(const std::string& path);
std::optional<Model> open_or_report(const Target& target, bool report_errors = true, SplitParts parts = SplitParts::joined);
// open_or_report for a command's callback: when the model cannot be opened, also sets
// exit_code to kExitBroken.
std::optional<Model> open_or_fail(const std::string& path, int& exit_code);
std::optional<Model> open_or_fail(const Target& target, bool report_errors, int& exit_code, SplitParts parts = SplitParts::joined);
// Opens A, then B when A opened, each reported when it fails; true when both are open.
bool open_both(const std::string& a_path, const std::string& b_path, std::optional<Model>& a, std::optional<Model>& b);
// fail() for an error of a comparison run in one worker session (ab, kld, layer-divergence): about
// `b_path` when the error is about model B (is_about_model_b, worker_session.h), else about
// `session_path`, the model the session loaded.
int fail_comparison(const Error& e, const std::string& session_path, const std::string& b_path);
// The usage error of --names that captured nothing: no graph tensor of the model has these names.
int names_match_nothing(const std::vector<std::string>& names);
// Whether reading `tensors` of `model` stays within the --max-download budget (remote_source.h):
// the data of the tensors that lie in remote files counts whole. When it does not, reports
// E_DOWNLOAD_LIMIT about `path` with both amounts, before anything is read, and sets exit_code.
bool within_download_limit(const std::string& path, const Model& model, const std::vector<const TensorInfo*>& tensors, int& exit_code);
// kExitBroken when the Model has errors, else kExitOk.
int exit_status_of(const Model& model);

// --worker-timeout SECONDS of the commands that run llama.cpp (SessionOptions::worker_timeout_s):
// `seconds` keeps its default unless the option is given; at least 2, since a working worker
// sends a frame every second.
void add_worker_timeout(CLI::App* cmd, uint32_t& seconds);

// --batch N and --ubatch N of the corpus scoring commands (kld, ppl): llama-perplexity's -b and
// -ub, defaulting to what `batch` and `ubatch` hold.
void add_batch_options(CLI::App* cmd, uint32_t& batch, uint32_t& ubatch);

// The worker session the corpus scoring commands (kld, ppl) score in: `model` loaded with
// `threads`, `as_is` and `timeout` (its own context unused: the scoring makes its own). A failed
// load prints llama.cpp's log when `log` and returns the status fail() gave; a loaded one prints
// the thread note when threads were asked for or `log`.
struct ScoringSession {
    std::unique_ptr<WorkerSession> session;
    int exit_status = kExitOk;
};
ScoringSession load_scoring_session(const std::string& model, int threads, bool as_is, uint32_t timeout, bool log);
// llama.cpp's log lines on stderr, "llama.cpp: " before each.
void print_llama_log(const LogCapture& log);

// PATH (required) and --json, the arguments a command on one model starts with. CLI11 fills them
// in when it parses the command line, before the command's callback runs.
struct PathArguments {
    std::string path;
    bool json = false;
};
// Registers PATH with `path_help` and --json with `json_help` on `cmd`, in that order.
std::shared_ptr<PathArguments> add_path_arguments(CLI::App* cmd, const std::string& path_help, const std::string& json_help = "Print JSON");

// Prints rows as a table fitted to the terminal (table_lines, text/text_table.h, at
// terminal_columns(), terminal_output.h): numbers right-aligned, cells too wide for their column
// broken into lines inside it, nothing cut. The first `header_rows` rows are headings.
void print_table(const std::vector<std::vector<std::string>>& rows, size_t header_rows = 1);

// A number as tables show it (table_number, text/number_format.h: 4 significant digits; cosines
// go through cosine_text); --json keeps full precision.
std::string number_text(double v);
// `v` printed with a printf format for one double.
std::string number_text(double v, const char* format);
// A JSON number, or "nan" / "inf" / "-inf" (JSON has no such numbers).
nlohmann::json json_number(double v);

// Whether `name` is one of app's subcommands.
bool is_subcommand(CLI::App& app, const std::string& name);
// Reports "unknown command 'infoo'; did you mean 'info'?" as a usage error (fail, E_USAGE), then lists the
// commands on stderr.
void report_unknown_command(CLI::App& app, const std::string& name);

// The exit status once standard output is flushed: a command whose output could not be written
// (a full disk, a file-size limit) did not succeed, so a failed write or flush is reported on
// stderr with the reason and turns a success into kExitBroken.
int exit_status_after_output(int exit_code);

// Each subcommand registers itself and stores its exit code in `exit_code` when it runs.
void add_info_command(CLI::App& app, int& exit_code);
void add_kv_command(CLI::App& app, int& exit_code);
void add_tensors_command(CLI::App& app, int& exit_code);
void add_dump_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_loads_command(CLI::App& app, int& exit_code);
// store: list an Ollama store, or show one model's manifest
void add_store_command(CLI::App& app, int& exit_code);
// show, verify: one store model's manifest, and its digests checked
void add_show_commands(CLI::App& app, int& exit_code);
// stats, hist, compare
void add_quant_commands(CLI::App& app, int& exit_code);
void add_requant_command(CLI::App& app, int& exit_code);
// imatrix: a llama-imatrix importance matrix, per tensor and per expert
void add_imatrix_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
// fsck: the health pass over every tensor (analysis/fsck.h)
void add_fsck_command(CLI::App& app, int& exit_code);
// recipe: the quantization recipe and its llama-quantize command (analysis/quant_recipe.h)
void add_recipe_command(CLI::App& app, int& exit_code);
// compat: what Ollama's compatibility shim would rewrite
void add_compat_command(CLI::App& app, int& exit_code);
// export-upstream: write the upstream-shaped GGUF (and mmproj) of an Ollama-made GGUF
void add_export_command(CLI::App& app, int& exit_code);
// edit: change a GGUF file's metadata, verified like an export (edit/edit_write.h)
void add_edit_command(CLI::App& app, int& exit_code);
// export: get a store model out as a GGUF bundle or a Hugging Face folder
void add_export_store_command(CLI::App& app, int& exit_code);
// tokenize, run, ab, layers (test inference through llama.cpp)
void add_infer_commands(CLI::App& app, int& exit_code);
// tokenizer-parity: a GGUF vocabulary against a Hugging Face tokenizer.json
void add_tokenizer_parity_command(CLI::App& app, int& exit_code);
// kld: KL divergence of two models over a text, as llama-perplexity measures it
void add_kld_command(CLI::App& app, int& exit_code);
// ppl: perplexity of a model over a text, as llama-perplexity computes it
void add_ppl_command(CLI::App& app, int& exit_code);
// memory: the memory plan estimated and as llama.cpp allocates it
void add_memory_command(CLI::App& app, int& exit_code);
// layer-divergence: each layer's output of B against A's
void add_divergence_command(CLI::App& app, int& exit_code);
// cache: the cache of ranges read from remote models (remote/range_cache.h)
void add_cache_command(CLI::App& app, int& exit_code);
// template: a conversation rendered through every chat template of a model, compared (template_lab.h)
void add_template_command(CLI::App& app, int& exit_code);

}  // namespace mlens::cli
