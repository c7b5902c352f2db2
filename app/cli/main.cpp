// mlens: the ModelLens command line. One subcommand per file; see README.md for the reference.
// `mlens --reference man|bash|zsh|fish` (not in --help) prints the man page or a completion
// script written from these same definitions; the build installs what it prints.
#include <algorithm>
#include <string_view>

#include "cli_common.h"
#include "mlens/io/temp_registry.h"
#include "mlens/util/build_info.h"
#include "mlens_reference.h"

int main(int argc, char** argv) {
    // An interrupted export or histogram leaves no partial file behind.
    mlens::remove_temp_files_on_signals();
    CLI::App app{"mlens — inspect and debug LLM model files (GGUF, safetensors, Ollama stores)"};
    app.require_subcommand(1);
    app.set_version_flag("--version", mlens::version_text("mlens"));
    int exit_code = mlens::cli::kExitOk;
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
    mlens::cli::add_infer_commands(app, exit_code);
    mlens::cli::add_kld_command(app, exit_code);
    mlens::cli::add_memory_command(app, exit_code);
    mlens::cli::add_divergence_command(app, exit_code);
    app.footer(mlens::help_footer(mlens::cli::mlens_reference().sections));
    if (auto status = mlens::cli::print_reference_if_asked(app, argc, argv)) return mlens::cli::exit_status_after_output(*status);
    // CLI11 reports a mistyped command as "A subcommand is required"; name it and the nearest one.
    if (argc > 1 && argv[1][0] != '-' && !mlens::cli::is_subcommand(app, argv[1])) {
        mlens::cli::report_unknown_command(app, argv[1]);
        const bool json = std::any_of(argv + 2, argv + argc, [](const char* a) { return std::string_view(a) == "--json"; });
        return mlens::cli::exit_status_after_output(mlens::cli::finish_command(mlens::cli::kExitUsage, json));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
        return mlens::cli::exit_status_after_output(mlens::cli::finish_usage_error(app, e, mlens::cli::json_requested(app)));
    }
    return mlens::cli::exit_status_after_output(mlens::cli::finish_command(exit_code, mlens::cli::json_requested(app)));
}
