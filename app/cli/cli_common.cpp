#include "cli_common.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <iostream>

#include "mlens/infer/worker_session.h"
#include "mlens/model/summary.h"
#include "mlens/remote/remote_source.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/display_width.h"
#include "mlens/text/escape.h"
#include "mlens/text/fit_width.h"
#include "mlens/text/nearest_name.h"
#include "mlens/text/significant.h"
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

std::optional<Model> open_or_fail(const Target& target, bool report_errors, int& exit_code) {
    std::optional<Model> model = open_or_report(target, report_errors);
    if (!model) exit_code = kExitBroken;
    return model;
}

std::optional<Model> open_or_report(const Target& target, bool report_errors) {
    auto model = open_target(target);
    if (!model) {
        fail(target.text, model.error());
        return std::nullopt;
    }
    const size_t errors = model->error_count();
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
    uint64_t remote = 0;
    for (const TensorInfo* t : tensors)
        if (t->n_bytes && t->file < model.files.size() && model.files[t->file].source && is_http_url(model.files[t->file].source->path()))
            remote += *t->n_bytes;
    if (remote <= budget) return true;
    auto amount = [](uint64_t bytes) { return human_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)"; };
    exit_code = fail(path, ErrorCode::E_DOWNLOAD_LIMIT,
                     "this would download up to " + amount(remote) + " of tensor data, more than --max-download " + amount(budget));
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

namespace {

// A cell that reads as a number: digits with an optional sign, point, exponent, and one of the
// suffixes tables give numbers ("%", "×", "x"); "-", "nan" and "inf" too, as they stand for one.
bool numeric_cell(const std::string& cell) {
    if (cell == "-" || cell == "nan" || cell == "inf" || cell == "-inf" || cell == "+inf") return true;
    std::string_view s(cell);
    for (std::string_view suffix : {"%", "\xC3\x97", "x"})
        if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
            s.remove_suffix(suffix.size());
            break;
        }
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' || c == ',';
    });
}

// The width of column `c`'s headings.
size_t floors_header(const std::vector<std::vector<std::string>>& rows, size_t header_rows, size_t c) {
    size_t w = 0;
    for (size_t r = 0; r < header_rows && r < rows.size(); ++r)
        if (c < rows[r].size()) w = std::max(w, display_width(rows[r][c]));
    return w;
}

}  // namespace

void print_table(const std::vector<std::vector<std::string>>& rows, size_t header_rows) {
    std::vector<size_t> widths, floors;
    std::vector<bool> numeric;
    for (size_t r = 0; r < rows.size(); ++r)
        for (size_t c = 0; c < rows[r].size(); ++c) {
            if (widths.size() <= c) {
                widths.push_back(0);
                floors.push_back(0);
                numeric.push_back(true);
            }
            widths[c] = std::max(widths[c], display_width(rows[r][c]));
            if (r < header_rows) floors[c] = std::max(floors[c], display_width(rows[r][c]));
            else if (!rows[r][c].empty() && !numeric_cell(rows[r][c])) numeric[c] = false;
        }
    // Over the terminal's width, a last text column (a value, a message) keeps at least
    // kLastRoom columns and is broken into lines; the widest other text columns give up columns
    // first, down to their header's width (and at least 16): numbers and short codes keep theirs.
    constexpr size_t kLastRoom = 24;
    const size_t columns = terminal_columns();
    const size_t last = widths.empty() ? 0 : widths.size() - 1;
    const bool flexible_last = !widths.empty() && !numeric[last] && widths.size() > 1;
    size_t before_last = 0;
    for (size_t c = 0; c < last; ++c) before_last += widths[c] + 2;
    for (size_t c = 0; c < widths.size(); ++c) floors[c] = numeric[c] ? widths[c] : std::min(widths[c], std::max<size_t>(floors[c], 16));
    auto wanted_last = [&] { return flexible_last ? std::min(widths[last], kLastRoom) : widths[last]; };
    auto shrink = [&] {
        while (!widths.empty() && before_last + wanted_last() > columns) {
            size_t widest = widths.size();
            for (size_t c = 0; c < (flexible_last ? last : widths.size()); ++c)
                if (widths[c] > floors[c] && (widest == widths.size() || widths[c] > widths[widest])) widest = c;
            if (widest == widths.size()) return;
            --widths[widest];
            if (widest != last) --before_last;
        }
    };
    shrink();
    // A table of many columns that still does not fit cuts every text column down to its heading
    // (at least 4), so that each row stays one line; only then are lines broken by the line fitting.
    for (size_t c = 0; c < widths.size(); ++c)
        if (!numeric[c]) floors[c] = std::min(widths[c], std::max<size_t>(header_rows ? floors_header(rows, header_rows, c) : 0, 4));
    shrink();
    if (flexible_last && before_last + widths[last] > columns) widths[last] = std::max(kLastRoom, columns > before_last ? columns - before_last : 0);
    std::string line;
    for (size_t r = 0; r < rows.size(); ++r) {
        line.clear();
        std::vector<std::string> continued;  // the last cell's further lines
        for (size_t c = 0; c < rows[r].size(); ++c) {
            std::string cell = rows[r][c];
            if (c == last && flexible_last && display_width(cell) > widths[c]) {
                std::vector<std::string> pieces = wrap_words(cell, widths[c]);
                cell = pieces.front();
                continued.assign(pieces.begin() + 1, pieces.end());
            }
            cell = elide_middle(cell, widths[c]);
            const size_t pad = widths[c] - display_width(cell);
            const bool right = numeric[c] && rows.size() > header_rows;
            if (right) line.append(pad, ' ');
            line += cell;
            if (c + 1 < rows[r].size()) line.append((right ? 0 : pad) + 2, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);  // an empty last cell leaves no padding
        std::cout << line << '\n';
        for (const std::string& piece : continued) std::cout << std::string(before_last, ' ') << elide_middle(piece, widths[last]) << '\n';
    }
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

std::string number_text(double v) { return significant(v, 4); }

std::string cosine_text(double v) { return std::isfinite(v) ? number_text(v, "%.6f") : significant(v); }

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
