// The client-side parts of the operation descriptors (operations.h).
#include "mlens/infer/operations.h"

#include <filesystem>

#include "mlens/io/text_file.h"

namespace mlens {

void append(GenerationStream& into, GenerationStream&& batch) {
    if (into.prompt.empty()) into.prompt = std::move(batch.prompt);
    for (GenerationStep& step : batch.steps) into.steps.push_back(std::move(step));
}

Status KldOp::prepare(Options& options, OpClient& client) {
    if (options.text.empty() && !options.text_path.empty()) {
        auto text = read_text_file(options.text_path, kMaxCorpusTextBytes);
        if (!text) return text.error();
        options.text = std::move(text).value();
    }
    if (!options.options.save_base.empty()) {
        const std::string folder = std::filesystem::path(options.options.save_base).parent_path().string();
        client.write_folders.push_back(folder.empty() ? "." : folder);
    }
    // The models as the user named them, not as the worker loaded them: a model loaded through a
    // converted copy is protected by its original (and its store), which the copy does not name.
    for (const std::string& named : {options.text_path, client.model_path, options.b_model, options.options.base})
        if (!named.empty()) options.inputs.push_back(named);
    return ok_status();
}

}  // namespace mlens
