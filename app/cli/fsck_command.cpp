// mlens fsck PATH [--json] [--threads N] [--no-cache]: the health pass of analysis/fsck.h over
// every tensor; a report the cache database holds for the same files is printed without a scan
// (fsck_json.h).
// Text: one line per finding (finding_line) on stdout, the tensors a truncation cut indented under
// its summary (fsck.h), a count of the reader errors fsck does not list (`mlens check` does), then
// a summary line (tensors scanned of all, and how many of them only in part: the whole rows a cut
// left); the time the scan took goes to stderr, so that stdout is the same on every run. Exit status 1 when a
// finding is an error, the reader found errors (a region problem is both), or the model cannot be
// opened; 2 on usage errors.
#include <chrono>
#include <iostream>

#include "cli_common.h"
#include "cli_job.h"
#include "command_cache.h"
#include "mlens/analysis/fsck_json.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

void add_fsck_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("fsck", "Scan every tensor for broken values, scales, experts and duplicates; exit 1 on errors");
    auto args = add_path_arguments(cmd, "Model file, safetensors folder, or Ollama store model", "Print the findings as JSON on stdout");
    auto threads = std::make_shared<unsigned>(2);
    cmd->add_option("--threads", *threads, "Threads that scan (default 2)")->check(CLI::Range(1u, 256u));
    auto no_cache = std::make_shared<bool>(false);
    add_no_cache_flag(cmd, *no_cache);
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(resolve(args->path), true, exit_code);
        if (!model) return;
        std::vector<const TensorInfo*> every;
        for (const TensorInfo& t : model->tensors) every.push_back(&t);
        if (!within_download_limit(args->path, *model, every, exit_code)) return;
        const auto start = std::chrono::steady_clock::now();
        CliJob progress("fsck");
        const std::shared_ptr<CacheDatabase> cache = command_cache(*no_cache);
        auto report = fsck_model_cached(*model, cache.get(), progress.job(), *threads);
        if (!report) {
            exit_code = fail(args->path, report.error());
            return;
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const size_t errors = report->count(FindingSeverity::error);
        // Reader errors that are not about tensor regions (a cut header, a bad key) stop fsck from
        // seeing the whole file: they fail it too, and `mlens check` lists them.
        // Both as listed (truncation.h), from one listing.
        size_t reader_errors = 0, unlisted_errors = 0;
        for (const ListedDiagnostic& listed : listed_diagnostics(*model)) {
            const Diagnostic& d = model->diagnostics[listed.diagnostic];
            reader_errors += d.severity == Severity::error;
            unlisted_errors += d.severity == Severity::error && !is_region_diagnostic(d.code);
        }
        exit_code = errors || reader_errors ? kExitBroken : kExitOk;
        const ModelSummary summary = summarize(*model);
        if (args->json) {
            nlohmann::json out = {
                {"path", shown_path(args->path)},
                {"accepted", exit_code == kExitOk},
                {"errors", errors},
                {"reader_errors", reader_errors},
                {"warnings", report->count(FindingSeverity::warning)},
                {"infos", report->count(FindingSeverity::info)},
                {"missing_files", summary.missing_files},
                {"declared_tensor_count",
                 summary.declared_tensor_count ? nlohmann::json(*summary.declared_tensor_count) : nlohmann::json(nullptr)}};
            out.update(fsck_report_json(*report));
            print_json_result(out);
            return;
        }
        for (const Finding& f : report->findings) {
            std::cout << (is_cut_tensor_row(f) ? "  " : "") << finding_line(f) << "\n";  // a cut tensor sits under its summary
        }
        // The region errors are listed above; the others only by check.
        if (unlisted_errors) std::cout << plural(unlisted_errors, "reader error") << ": mlens check lists them\n";
        // A broken verdict with no finding of its own says what broke it: the reader's errors.
        std::cout << escape_for_display(shown_path(args->path)) << ": " << (exit_code ? "broken" : "ok") << " ("
                  << (unlisted_errors ? plural(unlisted_errors, "reader error") + "; " : std::string()) << plural(errors, "error") << ", "
                  << plural(report->count(FindingSeverity::warning), "warning") << ", "
                  << plural(report->count(FindingSeverity::info), "note") << "; " << report->tensors_scanned << " of "
                  << plural(report->tensors, "tensor") << summary.present_files_text()
                  << (report->tensors_scanned_in_part ? " (" + std::to_string(report->tensors_scanned_in_part) + " in part)"
                                                      : std::string())
                  << ", " << human_bytes(report->bytes_scanned) << ")\n";
        std::cerr << "fsck: " << number_text(seconds, "%.2f") << " s\n";
    });
}

}  // namespace mlens::cli
