// mlens loads FILE|REF [--json]: whether the linked llama.cpp loads the model, why not, and what
// to do (loadability.h). Exit status 1 when it does not load, 0 when it loads as is or after the
// compat rewrite.
#include <iostream>

#include "cli_common.h"
#include "mlens/analysis/loadability.h"
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

}  // namespace

void add_loads_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("loads", "Whether the linked llama.cpp loads the model, why not, and what to do (header only)");
    auto args = add_path_arguments(cmd, "Model file, folder or Ollama model");
    cmd->callback([args, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        const Loadability l = assess_loadability(*model);
        if (args->json) {
            nlohmann::json j = loadability_json(l);
            j["path"] = args->path;
            print_json_result(j);
        } else {
            std::cout << escape_for_display(args->path) << ": " << escape_for_display(l.summary()) << '\n';
            print_reasons("reason", l.reasons);
            print_reasons("warning", l.warnings);
        }
        exit_code = l.verdict == LoadVerdict::does_not_load ? 1 : 0;
    });
}

}  // namespace mlens::cli
