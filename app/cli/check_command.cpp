// mlens check PATH [--json]: diagnostics, one per line on stderr (malformed-inputs.md A4).
// Exit status: 0 accepted (warnings allowed), 1 errors, 2 usage.
#include <iostream>

#include "cli_common.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

void add_check_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "Validate a file; exit status 1 on errors");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_flag("--json", *json, "Print diagnostics as JSON on stdout");
    cmd->callback([=, &exit_code] {
        auto model = open_or_report(*path);
        if (!model) { exit_code = kExitBroken; return; }
        size_t errors = model->error_count();
        exit_code = errors ? kExitBroken : kExitOk;
        if (*json) {
            nlohmann::json out = {{"path", *path}, {"accepted", errors == 0}, {"errors", errors},
                                  {"warnings", model->warning_count()}, {"diagnostics", nlohmann::json::array()}};
            for (const Diagnostic& d : model->diagnostics) out["diagnostics"].push_back(diagnostic_to_json(d));
            std::cout << json_text(out) << "\n";
            return;
        }
        for (const Diagnostic& d : model->diagnostics) std::cerr << d.to_line() << "\n";
        std::cout << escape_for_display(*path) << ": " << (errors ? "rejected" : "ok") << " (" << errors
                  << " errors, " << model->warning_count() << " warnings)\n";
    });
}

}  // namespace mlens::cli
