// mlens loads FILE|REF [--dry-run] [--json]: whether the linked llama.cpp loads the model, why
// not, and what to do (loadability.h). --dry-run also has llama.cpp load it with no tensor memory
// (dry_run.h) and says what llama.cpp said and whether it agrees. Exit status 1 when it does not
// load (or, with --dry-run, when llama.cpp disagrees with the verdict), 0 when it loads as is or
// after the compat rewrite.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/analysis/loadability.h"
#include "mlens/infer/dry_run.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

void print_reasons(const char* label, const std::vector<LoadReason>& reasons) {
    for (const LoadReason& r : reasons) {
        std::cout << label << ' ' << load_problem_name(r.problem);
        if (!r.name.empty()) std::cout << ' ' << load_subject_name(r.subject) << ' ' << escape_for_display(r.name);
        if (r.offset) std::cout << " offset=" << *r.offset;
        std::cout << ": " << escape_for_display(r.text) << '\n';
        if (!r.fix.empty()) std::cout << "  fix: " << escape_for_display(r.fix) << '\n';
    }
}

void print_dry_load(const char* how, const DryRunLoad& load) {
    std::cout << "dry run (" << how << "): " << (load.loaded ? "llama.cpp loaded it" : "llama.cpp refused it: " + escape_for_display(load.said))
              << '\n';
}

}  // namespace

void add_loads_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("loads", "Whether the linked llama.cpp loads the model, why not, and what to do (header only)");
    auto args = add_path_arguments(cmd, "Model file, folder or Ollama model");
    auto dry = std::make_shared<bool>(false);
    cmd->add_flag("--dry-run", *dry, "Also have llama.cpp load it with no tensor memory and say whether it agrees");
    cmd->callback([args, dry, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        const Loadability l = assess_loadability(*model);
        std::optional<DryRun> run;
        if (*dry) {
            auto ran = dry_run_load(args->path, l);
            if (!ran) {
                exit_code = fail(args->path, ran.error());
                return;
            }
            run = *ran;
        }
        if (args->json) {
            nlohmann::json j = loadability_json(l);
            j["path"] = shown_path(args->path);
            if (run) j["dry_run"] = dry_run_json(*run);
            print_json_result(j);
        } else {
            std::cout << escape_for_display(shown_path(args->path)) << ": " << escape_for_display(l.summary()) << '\n';
            print_reasons("reason", l.reasons);
            print_reasons("warning", l.warnings);
            if (run) {
                print_dry_load("as is", run->as_is);
                if (run->after_compat) print_dry_load("through the upstream export", *run->after_compat);
                std::cout << (run->agrees ? "llama.cpp agrees with the verdict" : "llama.cpp DISAGREES with the verdict") << '\n';
            }
        }
        exit_code = l.verdict == LoadVerdict::does_not_load || (run && !run->agrees) ? 1 : 0;
    });
}

}  // namespace mlens::cli
