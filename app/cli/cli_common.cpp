#include "cli_common.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <iostream>

#include "mlens/infer/worker_session.h"
#include "mlens/model/summary.h"
#include "mlens/model/truncation.h"
#include "mlens/remote/remote_source.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/display_width.h"
#include "mlens/text/escape.h"
#include "mlens/text/nearest_name.h"
#include "mlens/text/number_format.h"
#include "mlens/text/text_table.h"
#include "terminal_output.h"

namespace mlens::cli {

std::optional<Model> open_or_report(const std::string& path) { return open_or_report(resolve(path)); }

void add_batch_options(CLI::App* cmd, uint32_t& batch, uint32_t& ubatch) {
    cmd->add_option("--batch", batch,
                    "Tokens per llama.cpp batch, as llama-perplexity's -b: batch / ctx chunks are decoded together (default " +
                        std::to_string(batch) + ")")
        ->check(CLI::Range(1u, 1u << 20));
    cmd->add_option("--ubatch", ubatch,
                    "Tokens per llama.cpp micro-batch, as llama-perplexity's -ub (default " + std::to_string(ubatch) + ")")
        ->check(CLI::Range(1u, 1u << 20));
}

void print_llama_log(const LogCapture& log) {
    for (const LlamaLogLine& line : log.lines()) std::cerr << "llama.cpp: " << escape_for_display(line.text, 400) << "\n";
}

ScoringSession load_scoring_session(const std::string& model, int threads, bool as_is, uint32_t timeout, bool log) {
    SessionOptions options;
    options.n_threads = threads;
    options.n_ctx = 16;
    options.as_is = as_is;
    options.worker_timeout_s = timeout;
    auto capture = std::make_shared<LogCapture>();
    auto loaded = WorkerSession::load(model, options, nullptr, capture);
    if (!loaded) {
        if (log) print_llama_log(*capture);
        return {nullptr, fail(model, loaded.error())};
    }
    if (!(*loaded)->thread_note().empty() && (threads > 0 || log)) std::cerr << "note: " << (*loaded)->thread_note() << "\n";
    return {std::move(*loaded), kExitOk};
}

std::optional<Model> open_or_fail(const std::string& path, int& exit_code) { return open_or_fail(resolve(path), true, exit_code); }

bool open_both(const std::string& a_path, const std::string& b_path, std::optional<Model>& a, std::optional<Model>& b) {
    a = open_or_report(a_path);
    if (a) b = open_or_report(b_path);
    return a && b;
}

void add_worker_timeout(CLI::App* cmd, uint32_t& seconds) {
    cmd->add_option("--worker-timeout", seconds,
                    "Stop the llama.cpp worker when it sends nothing for SECONDS (default " + std::to_string(seconds) + ")")
        ->check(CLI::Range(2u, 86400u));
}

std::optional<Model> open_or_fail(const Target& target, bool report_errors, int& exit_code, SplitParts parts) {
    std::optional<Model> model = open_or_report(target, report_errors, parts);
    if (!model) exit_code = kExitBroken;
    return model;
}

std::optional<Model> open_or_report(const Target& target, bool report_errors, SplitParts parts) {
    auto model = open_target(target, nullptr, parts);
    if (!model) {
        fail(target.text, model.error());
        return std::nullopt;
    }
    const size_t errors = listed_error_count(*model);
    if (report_errors && errors > 0) {
        for (const Diagnostic& d : model->diagnostics)
            if (d.severity == Severity::error) {
                std::cerr << d.to_line() << "\n";
                break;
            }
        if (errors > 1)
            std::cerr << "error: " << escape_for_display(shown_path(target.text)) << ": " << errors
                      << " errors (mlens check lists every one)\n";
    }
    return std::move(model).value();
}

bool within_download_limit(const std::string& path, const Model& model, const std::vector<const TensorInfo*>& tensors, int& exit_code) {
    const uint64_t budget = download_budget();
    if (budget == 0) return true;
    const uint64_t left = download_budget_left();
    uint64_t remote = 0;
    for (const TensorInfo* t : tensors)
        if (t->n_bytes && t->file < model.files.size() && model.files[t->file].source && is_http_url(model.files[t->file].source->path()))
            remote += *t->n_bytes;
    if (remote <= left) return true;
    auto amount = [](uint64_t bytes) { return human_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)"; };
    exit_code = fail(path, ErrorCode::E_DOWNLOAD_LIMIT,
                     "this would download up to " + amount(remote) + " of tensor data, more than the " + amount(left) +
                         " left of --max-download " + amount(budget));
    return false;
}

int exit_status_after_output(int exit_code) {
    // std::cout writes through stdout's buffer (synchronised with stdio); its flush is stdout's,
    // so the reason of a failed flush is in errno after either call.
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0 && std::cout.good();
    const int err = errno;
    if (flushed && !std::ferror(stdout)) return exit_code;
    std::cerr << "error: E_IO standard output: cannot write" << (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) << "\n";
    return exit_code == kExitOk ? kExitBroken : exit_code;
}

int fail_comparison(const Error& e, const std::string& session_path, const std::string& b_path) {
    return fail(is_about_model_b(e) ? b_path : session_path, e);
}

int names_match_nothing(const std::vector<std::string>& names) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
    return usage_error("--names " + escape_for_display(list, 400) + " matches no graph tensor of the model");
}

int exit_status_of(const Model& model) { return model.error_count() > 0 ? kExitBroken : kExitOk; }

std::shared_ptr<PathArguments> add_path_arguments(CLI::App* cmd, const std::string& path_help, const std::string& json_help) {
    auto args = std::make_shared<PathArguments>();
    cmd->add_option("PATH", args->path, path_help)->required();
    cmd->add_flag("--json", args->json, json_help);
    return args;
}

void print_table(const std::vector<std::vector<std::string>>& rows, size_t header_rows) {
    for (const std::string& line : table_lines(rows, header_rows, terminal_columns())) std::cout << line << '\n';
}

namespace {

std::vector<std::string> subcommand_names(CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

}  // namespace

bool is_subcommand(CLI::App& app, const std::string& name) {
    const std::vector<std::string> names = subcommand_names(app);
    return std::find(names.begin(), names.end(), name) != names.end();
}

void report_unknown_command(CLI::App& app, const std::string& name) {
    const std::vector<std::string> names = subcommand_names(app);
    std::string message = "unknown command '" + escape_for_display(name, 80) + "'";
    if (auto near = nearest_name(name, names)) message += "; did you mean '" + *near + "'?";
    fail("", ErrorCode::E_USAGE, message);
    std::cerr << "commands:";
    for (const std::string& n : names) std::cerr << " " << n;
    std::cerr << "\n(mlens --help describes each)\n";
}

std::string number_text(double v) { return table_number(v); }

std::string number_text(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

nlohmann::json json_number(double v) {
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

}  // namespace mlens::cli
