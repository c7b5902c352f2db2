// mlens kv PATH [--json] [--full]: every metadata key with its type and value.
#include <iostream>

#include "cli_common.h"
#include "mlens/model/metadata_text.h"
#include "mlens/model/model_json.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

void add_kv_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("kv", "List metadata keys, types and values");
    auto args = add_path_arguments(cmd, "Model file");
    auto full = std::make_shared<bool>(false);
    cmd->add_flag("--full", *full, "Print arrays and strings completely");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        uint64_t items = *full ? UINT64_MAX : 8;
        if (args->json) {
            nlohmann::json out = model_to_json(*model, items)["metadata"];
            print_json_result(out);
        } else {
            std::vector<std::vector<std::string>> rows = {{"KEY", "TYPE", "VALUE"}};
            for (const MetadataEntry& e : model->metadata)
                rows.push_back({escape_for_display(e.key), format_type(e.value), metadata_value_text(e, items, *full ? SIZE_MAX : 120)});
            print_table(rows);
        }
        exit_code = exit_status_of(*model);
    });
}

}  // namespace mlens::cli
