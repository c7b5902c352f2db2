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
        "store root, or a model of an Ollama store (MODEL:TAG, STORE/MODEL:TAG, a manifest file), or a model file on a "
        "server: an http:// or https:// URL, or hf://OWNER/REPO[@REVISION]/PATH on the Hugging Face Hub, read by range "
        "(only the header and the tensors a command needs are downloaded, and kept in a cache). Every --json output "
        "follows a JSON Schema installed with the program.";
    r.sections.push_back({"Exit status",
                          {{std::to_string(kExitOk), "success"},
                           {std::to_string(kExitBroken), "the input has errors or could not be opened (the reason is on standard error)"},
                           {std::to_string(kExitUsage), "usage error: unknown command, missing or invalid argument"}}});
    r.sections.push_back({"Environment",
                          {{"OLLAMA_MODELS", "the Ollama store used instead of ~/.ollama/models and /usr/share/ollama/.ollama/models"},
                           {"COLUMNS", "the width text output fits (default: the terminal's width when standard output is one; "
                                       "output to a pipe or a file is then not fitted to any width); --json output is "
                                       "never wrapped"},
                           {"MLENS_LLAMA_WORKER", "the mlens-llama-worker program to run instead of the installed one"},
                           {"MLENS_OLLAMA_TEMPLATE", "the mlens-ollama-template program (Ollama's Go templates) to run instead of the "
                                                     "installed one"},
                           {"HF_ENDPOINT", "the Hugging Face Hub that hf:// references name (default https://huggingface.co)"},
                           {"HF_TOKEN", "the token sent to the Hub (only to its host, never to a host it redirects to); default: "
                                        "the first line of $HF_HOME/token (HF_HOME default ~/.cache/huggingface)"},
                           {"HTTPS_PROXY, HTTP_PROXY, NO_PROXY", "proxies for remote models, as libcurl reads them"},
                           {"XDG_CACHE_HOME", "the cache folder is $XDG_CACHE_HOME/modellens (default ~/.cache/modellens): the "
                                              "cache database of verified digests, blob and loadability verdicts and fsck summaries (cache.sqlite) "
                                              "and the ranges read from remote models (http/); `mlens cache` shows both"},
                           {"MLENS_HTTP_CACHE_BYTES", "the most the cache of remote ranges keeps (default 4 GiB)"},
                           {"MLENS_HTTP_CONNECT_SECONDS, MLENS_HTTP_STALL_SECONDS, MLENS_HTTP_RETRIES, MLENS_HTTP_RETRY_MS",
                            "remote reads: connect timeout (default 15), stall time under 1 KiB/s (30), retries after a "
                            "5xx or 429 answer or a dropped connection (3), first wait between them, doubling (250)"}}});
    r.sections.push_back({"Files",
                          {{"PREFIX/share/modellens/schemas/mlens-COMMAND.schema.json",
                            "the JSON Schema (draft 2020-12) of each command's --json output; PREFIX is /usr for the Debian package"},
                           {"PREFIX/share/modellens/demo/", "demo models: small GGUF files and an Ollama store"},
                           {"PREFIX/libexec/modellens/mlens-llama-worker", "the process that runs llama.cpp"},
                           {"PREFIX/libexec/modellens/mlens-ollama-template", "Go's text/template, rendering Ollama's templates"}}});
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
