#include "mlens_reference.h"

#include <iostream>
#include <string_view>

#include "cli_common.h"
#include "mlens/util/build_info.h"

namespace mlens::cli {

ProgramReference mlens_reference() {
    ProgramReference r;
    r.name = "mlens";
    r.version = modellens_version();
    r.description =
        "mlens reads GGUF files, safetensors files and folders, and Ollama model stores without loading the weights: "
        "their metadata, tensors, quantization statistics, differences between models, and what Ollama's compatibility "
        "shim would rewrite. It can also run a model through llama.cpp (in the separate mlens-llama-worker process) "
        "to tokenize text, generate, and compare two models. A PATH is a model file, a safetensors folder, an Ollama "
        "store root, or a model of an Ollama store (MODEL:TAG, STORE/MODEL:TAG, a manifest file). Every --json output "
        "follows a JSON Schema installed with the program.";
    r.sections.push_back({"Exit status",
                          {{std::to_string(kExitOk), "success"},
                           {std::to_string(kExitBroken), "the input has errors or could not be opened (the reason is on standard error)"},
                           {std::to_string(kExitUsage), "usage error: unknown command, missing or invalid argument"}}});
    r.sections.push_back({"Environment",
                          {{"OLLAMA_MODELS", "the Ollama store used instead of ~/.ollama/models and /usr/share/ollama/.ollama/models"},
                           {"MLENS_LLAMA_WORKER", "the mlens-llama-worker program to run instead of the installed one"}}});
    r.sections.push_back({"Files",
                          {{"PREFIX/share/modellens/schemas/mlens-COMMAND.schema.json",
                            "the JSON Schema (draft 2020-12) of each command's --json output; PREFIX is /usr for the Debian package"},
                           {"PREFIX/share/modellens/demo/", "demo models: small GGUF files and an Ollama store"},
                           {"PREFIX/libexec/modellens/mlens-llama-worker", "the process that runs llama.cpp"}}});
    r.see_also = {"modellens(1)"};
    return r;
}

std::optional<int> print_reference_if_asked(const CLI::App& app, int argc, char** argv) {
    if (argc != 3 || std::string_view(argv[1]) != "--reference") return std::nullopt;
    const std::optional<std::string> document = reference_document(app, mlens_reference(), argv[2]);
    if (!document) return usage_error("--reference wants man, bash, zsh or fish");
    std::cout << *document;
    return kExitOk;
}

}  // namespace mlens::cli
