// mlens: the ModelLens command line. One subcommand per file; see README.md for the reference.
// `mlens --reference man|bash|zsh|fish` (not in --help) prints the man page or a completion
// script written from these same definitions; the build installs what it prints.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string_view>
#include <thread>
#include <vector>

#include "cli_common.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/io/temp_registry.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/range_cache.h"
#include "mlens/remote/remote_source.h"
#include "mlens/text/escape.h"
#include "mlens/util/build_info.h"
#include "mlens/util/out_of_memory.h"
#include "mlens_reference.h"
#include "terminal_output.h"
#include "transfer_progress.h"

namespace {

// MLENS_COMMIT_PAUSE_MS=N (for the signal tests): before each step of a multi-file commit, say
// which on stderr ("commit step keep_previous 0") and wait N milliseconds.
int g_commit_pause_ms = 0;

mlens::Status pause_at_commit_step(mlens::CommitStep step, size_t index) {
    const char* names[] = {"keep_previous", "rename", "drop_previous"};
    std::fprintf(stderr, "commit step %s %zu\n", names[static_cast<int>(step)], index);
    std::this_thread::sleep_for(std::chrono::milliseconds(g_commit_pause_ms));
    return mlens::ok_status();
}

// The command line's whole run: its commands defined, the one asked for parsed and run.
int run_command_line(int argc, char** argv) {
    // An interrupted export or histogram leaves no partial file behind; one left by a killed run
    // is removed by the next and reported.
    mlens::remove_temp_files_on_signals();
    mlens::print_temp_notices("mlens");
    if (const char* pause = std::getenv("MLENS_COMMIT_PAUSE_MS")) {
        g_commit_pause_ms = std::atoi(pause);
        mlens::set_commit_step_hook(pause_at_commit_step);
    }
    CLI::App app{"mlens — inspect and debug LLM model files (GGUF, safetensors, Ollama stores)"};
    app.require_subcommand(1);
    // --help's descriptions start within the first two fifths of the width, so a wrapped one
    // continues under its column (terminal_output.h).
    app.get_formatter()->column_width(std::clamp<size_t>(mlens::cli::terminal_columns() * 2 / 5, 16, 30));
    app.set_version_flag("--version", mlens::version_text("mlens"));
    int exit_code = mlens::cli::kExitOk;
    // Remote models (http://, https://, hf://): what one run may download at most, in any command.
    uint64_t max_download = 1ull << 30;
    mlens::set_download_budget(max_download);
    app.add_option("--max-download", max_download,
                   "Download at most SIZE from remote models in this run (default 1GiB; K, M, G are 1024-based; 0: no limit)")
        ->transform(CLI::AsSizeValue(false))
        ->each([](const std::string& value) {
            uint64_t bytes = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
            if (ec != std::errc() || end != value.data() + value.size())
                throw CLI::ValidationError("SIZE is at most 16 EiB (18446744073709551615 bytes), got " + value);
            mlens::set_download_budget(bytes);
        });
    // Remote models: how long all of one run's network transfers may take together.
    double max_time = 0;
    app.add_option("--max-time", max_time,
                   "Stop this run's network transfers after SECONDS in all, retries included (default 0: no limit)")
        ->each([](const std::string& value) {
            // A decimal number and nothing else: a blank on either side, or a hexadecimal number, is refused.
            double seconds = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
            if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(seconds) || seconds < 0)
                throw CLI::ValidationError("SECONDS is a number >= 0, got " + value);
            mlens::set_network_time_limit(seconds);
        });
    app.fallthrough();
    mlens::cli::add_info_command(app, exit_code);
    mlens::cli::add_kv_command(app, exit_code);
    mlens::cli::add_tensors_command(app, exit_code);
    mlens::cli::add_dump_command(app, exit_code);
    mlens::cli::add_check_command(app, exit_code);
    mlens::cli::add_store_command(app, exit_code);
    mlens::cli::add_show_commands(app, exit_code);
    mlens::cli::add_quant_commands(app, exit_code);
    mlens::cli::add_requant_command(app, exit_code);
    mlens::cli::add_imatrix_command(app, exit_code);
    mlens::cli::add_diff_command(app, exit_code);
    mlens::cli::add_fsck_command(app, exit_code);
    mlens::cli::add_recipe_command(app, exit_code);
    mlens::cli::add_compat_command(app, exit_code);
    mlens::cli::add_export_command(app, exit_code);
    mlens::cli::add_export_store_command(app, exit_code);
    mlens::cli::add_edit_command(app, exit_code);
    mlens::cli::add_infer_commands(app, exit_code);
    mlens::cli::add_kld_command(app, exit_code);
    mlens::cli::add_ppl_command(app, exit_code);
    mlens::cli::add_memory_command(app, exit_code);
    mlens::cli::add_divergence_command(app, exit_code);
    mlens::cli::add_loads_command(app, exit_code);
    mlens::cli::add_cache_command(app, exit_code);
    mlens::cli::add_template_command(app, exit_code);
    mlens::cli::add_tokenizer_parity_command(app, exit_code);
    app.footer(mlens::help_footer(mlens::cli::mlens_reference().sections));
    if (auto status = mlens::cli::print_reference_if_asked(app, argc, argv)) return mlens::cli::exit_status_after_output(*status);
    // From here every line of text output fits the terminal (terminal_output.h).
    const mlens::cli::LineFitter fitted_lines(std::cout);
    // CLI11 reports a mistyped command as "A subcommand is required"; name it and the nearest one.
    if (argc > 1 && argv[1][0] != '-' && !mlens::cli::is_subcommand(app, argv[1])) {
        mlens::cli::report_unknown_command(app, argv[1]);
        const bool json = std::any_of(argv + 2, argv + argc, [](const char* a) { return std::string_view(a) == "--json"; });
        return mlens::cli::exit_status_after_output(mlens::cli::finish_command(mlens::cli::kExitUsage, json));
    }
    const mlens::cli::TransferProgress transfers;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
        return mlens::cli::exit_status_after_output(mlens::cli::finish_usage_error(app, e, mlens::cli::json_requested(app)));
    } catch (const std::bad_alloc&) {
        // An allocation the command needed failed (a memory limit, ulimit -v): said, not aborted.
        const std::vector<CLI::App*> command = app.get_subcommands();
        exit_code = mlens::cli::fail("", mlens::out_of_memory_error("running mlens" + (command.empty() ? "" : " " + command.front()->get_name())));
    }
    for (const std::string& w : mlens::take_range_cache_warnings()) std::cerr << "warning: cache: " << mlens::escape_for_display(w, 600) << "\n";
    return mlens::cli::exit_status_after_output(mlens::cli::finish_command(exit_code, mlens::cli::json_requested(app)));
}

}  // namespace

int main(int argc, char** argv) {
    // A run that cannot get the memory to define its commands (a tight ulimit -v) says so rather
    // than ending by abort; a command's own allocations are reported by the command (above).
    try {
        return run_command_line(argc, argv);
    } catch (const std::bad_alloc&) {
        try {
            std::fprintf(stderr, "error: %s\n", mlens::out_of_memory_error("running mlens").to_string().c_str());
        } catch (const std::bad_alloc&) {
            std::fputs("error: E_NO_MEMORY: out of memory while running mlens\n", stderr);
        }
        return mlens::cli::kExitBroken;
    }
}
