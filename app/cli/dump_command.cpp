// mlens dump PATH [--json] [--full]: everything the reader found, for scripts. Text starts with
// the header lines ("format GGUF v3", "alignment 32", "data_offset N" per file, "counts K kv,
// T tensors, D diagnostics"), then one "kv" line per key, one "tensor" line per tensor and the
// diagnostics.
#include <iostream>

#include "cli_common.h"
#include "mlens/model/model_json.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

// What a reader of the dump wants before the keys: the format and version, then per file its
// alignment and where its tensor data starts, then the counts.
void print_header_lines(const Model& model) {
    const uint32_t version = model.gguf_version();
    std::cout << "format " << format_and_version(model.format, version) << "\n";
    for (size_t i = 0; i < model.files.size(); ++i) {
        const SourceFile& f = model.files[i];
        const std::string which = model.files.size() > 1 ? " file " + std::to_string(i) : "";
        if (model.format == Format::gguf) std::cout << "alignment" << which << " " << f.alignment << "\n";
        std::cout << "data_offset" << which << " " << (f.data_start_known() ? std::to_string(f.data_start) : "unknown") << "\n";
    }
    std::cout << "counts " << model.metadata.size() << " kv, " << plural(model.tensors.size(), "tensor") << ", "
              << plural(model.diagnostics.size(), "diagnostic") << "\n";
}

}  // namespace

void add_dump_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("dump", "Every key (type, value) and tensor (type, ne, offset, size), complete");
    auto args = add_path_arguments(cmd, "Model file");
    auto full = std::make_shared<bool>(false);
    cmd->add_flag("--full", *full, "Arrays complete (default: count plus the first 8 items)");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        uint64_t items = *full ? UINT64_MAX : 8;
        if (args->json) {
            print_json_result(model_to_json(*model, items));
        } else {
            print_header_lines(*model);
            for (const MetadataEntry& e : model->metadata)
                std::cout << "kv " << escape_for_display(e.key) << " " << format_type(e.value) << " = "
                          << format_value(e.value, items, *full ? SIZE_MAX : 120) << "\n";
            for (const TensorInfo& t : model->tensors) {
                std::cout << "tensor " << escape_for_display(t.name) << " " << t.type.name << " (" << t.type.id << ") ne=[";
                for (size_t i = 0; i < t.ne.size(); ++i) std::cout << (i ? ", " : "") << t.ne[i];
                std::cout << "] offset=" << t.data_offset << " bytes=" << (t.n_bytes ? std::to_string(*t.n_bytes) : "?") << "\n";
            }
            for (const Diagnostic& d : model->diagnostics) std::cout << d.to_line() << "\n";
        }
        exit_code = exit_status_of(*model);
    });
}

}  // namespace mlens::cli
