// The client-side parts of the operation descriptors (operations.h).
#include "mlens/infer/operations.h"

#include <filesystem>

#include "mlens/io/text_file.h"

namespace mlens {

void append(GenerationStream& into, GenerationStream&& batch) {
    if (into.prompt.empty()) into.prompt = std::move(batch.prompt);
    for (GenerationStep& step : batch.steps) into.steps.push_back(std::move(step));
}

namespace {

// A corpus operation's text: `text`, or the file `path` names when `text` is empty.
Status read_corpus_text(std::string& text, const std::string& path) {
    if (!text.empty() || path.empty()) return ok_status();
    auto read = read_text_file(path, kMaxCorpusTextBytes);
    if (!read) return read.error();
    text = std::move(read).value();
    return ok_status();
}

}  // namespace

Status PplOp::prepare(Options& options, OpClient&) { return read_corpus_text(options.text, options.text_path); }

Status KldOp::prepare(Options& options, OpClient& client) {
    Status text = read_corpus_text(options.text, options.text_path);
    if (!text) return text;
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
