// mlens store [PATH] [MODEL:TAG] [--json] [--verify] [--tensors]
// mlens store [PATH] --names
// mlens show MODEL[:TAG] [--store PATH] [--json] [--tensors]   (= store PATH MODEL; reads a
//   tensor-blob model's blobs only with --tensors)
// mlens verify MODEL[:TAG] [--store PATH] [--json]             (= store PATH MODEL --verify)
// mlens verify ollama://[REGISTRY/][NAMESPACE/]MODEL[:TAG] [--json]   (every blob fetched whole)
// Without PATH the default stores are used ($OLLAMA_MODELS, ~/.ollama/models,
// /usr/share/ollama/.ollama/models). A single argument (and `show`'s MODEL without --store) is
// resolved as every command resolves a path (open/target.h): a store root is listed, a store model
// (STORE/MODEL:TAG, MODEL:TAG, a manifest file) is shown. `verify` exits 1 when a
// blob is missing or its content does not match its digest. A single argument that is a path
// ("/", "./" or "../" first) naming nothing is E_NOT_FOUND "no such file or folder". An ollama://
// reference alone shows that registry's model (print_registry_manifest; with --verify,
// print_registry_verification, as `verify` does); with a store path it is refused (E_ARGS).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "cli_common.h"
#include "command_cache.h"
#include "mlens/open/store_input.h"
#include "mlens/text/escape.h"
#include "store_output.h"

namespace mlens::cli {

namespace {

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `path` when given, else every default store found.
std::vector<std::string> store_roots(const std::string& path) {
    if (!path.empty()) return {path};
    std::vector<std::string> roots;
    for (const StoreLocation& loc : find_stores()) roots.push_back(loc.path);
    return roots;
}

// The store at `root` (open_store_input), or nullopt once why not is reported (fail): a folder
// above a store names the store below it.
std::optional<Store> open_store_or_report(const std::string& root) {
    StoreInput input = open_store_input(root);
    if (!input.below.empty())
        fail(root, input.problem.code, input.problem.message);
    else if (!input.store)
        fail(root, input.problem);
    return std::move(input.store);
}

int run_store(const std::vector<std::string>& args, const StoreShowOptions& options) {
    // A model of a registry is shown where it lives; a store is a local folder.
    if (args.size() == 1 && args[0].starts_with("ollama://"))
        return options.verify ? print_registry_verification(args[0], options.json) : print_registry_manifest(args[0], options);
    for (const std::string& arg : args)
        if (arg.starts_with("ollama://"))
            return fail(arg, ErrorCode::E_ARGS, "an ollama:// model is read from its registry, not from a store: give it alone");
    std::string path, reference;
    if (args.size() >= 2) {
        path = args[0];
        reference = args[1];
    } else if (args.size() == 1) {
        // One argument names a store or a model the way every command resolves it: a store root,
        // a manifest file, STORE/MODEL:TAG or MODEL:TAG in the default stores.
        const Target target = resolve(args[0]);
        if (target.kind == TargetKind::store_model) return print_store_manifest(*target.store, target.name, options);
        if (target.kind == TargetKind::store_root) return print_store_listing(*target.store, options);
        // A store that has the model under other tags: the error lists them.
        if (target.kind == TargetKind::missing && target.store) return fail(args[0], target.problem);
        // A file wins over a reference of the same text: one that is no model is the answer.
        if (target.kind == TargetKind::not_a_model && !is_directory(args[0])) return fail(args[0], target.problem);
        // A path (no model reference starts with "/", "./" or "../") that names nothing.
        const std::string& text = args[0];
        std::error_code ec;
        if ((text.starts_with('/') || text.starts_with("./") || text.starts_with("../")) && !std::filesystem::exists(text, ec))
            return fail(text, ErrorCode::E_NOT_FOUND, escape_for_display(text) + ": no such file or folder");
        (is_directory(args[0]) ? path : reference) = args[0];
    }
    const std::vector<std::string> roots = store_roots(path);
    if (roots.empty()) {
        std::string looked;
        for (const StoreLocation& loc : default_store_locations()) looked += " " + escape_for_display(loc.path);
        return fail(reference, ErrorCode::E_NOT_FOUND, "no Ollama store found (looked at" + looked + "); give its path");
    }
    std::optional<ModelName> name;
    if (!reference.empty()) {
        auto parsed = parse_model_reference(reference);
        if (!parsed) return usage_error(escape_for_display(reference) + ": " + parsed.error().to_string());
        name = *parsed;
    }
    int exit_code = kExitOk;
    for (const std::string& root : roots) {
        auto store = open_store_or_report(root);
        if (!store) {
            exit_code = kExitBroken;
            continue;
        }
        if (name) {
            // Without an explicit path, the first default store holding the model answers.
            if (path.empty() && !store->read_manifest(*name).present() && &root != &roots.back()) continue;
            return print_store_manifest(*store, *name, options);
        }
        exit_code = std::max(exit_code, print_store_listing(*store, options));
    }
    return exit_code;
}

// `store --names`: the references of every model of the store at `path` (or of the default
// stores), sorted, each once; only manifest names are read, so completion stays quick.
int print_model_names(const std::string& path) {
    std::set<std::string> names;
    int exit_code = kExitOk;
    for (const std::string& root : store_roots(path)) {
        auto store = open_store_or_report(root);
        if (!store) {
            exit_code = kExitBroken;
            continue;
        }
        for (const ManifestRef& ref : store->scan().manifests) names.insert(escape_for_display(ref.name.display()));
    }
    for (const std::string& name : names) std::cout << name << "\n";
    return exit_code;
}

}  // namespace

void add_store_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("store", "List the models of an Ollama store, or show one model's manifest and layers");
    auto path = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    auto options = std::make_shared<StoreShowOptions>();
    cmd->add_option("PATH", *path,
                    "Store root (default: the Ollama stores found), or one model: MODEL:TAG, STORE/MODEL:TAG, a manifest file");
    cmd->add_option("MODEL", *model, "A model of the store at PATH, e.g. gemma3:4b");
    cmd->add_flag("--json", options->json, "Print JSON");
    cmd->add_flag("--verify", options->verify, "Hash every blob and compare it with its digest (the listing or one model)");
    cmd->add_flag("--tensors", options->tensors, "With a model: open it and list its logical tensors and expert groups");
    add_no_cache_flag(cmd, options->no_cache);
    cmd->add_flag("--cached", options->cached,
                  "List from manifests, config blobs and the cache only: no blob is read; a model whose blobs the cache does not know "
                  "is \"not yet verified\"")
        ->excludes("--verify")
        ->excludes("--no-cache")
        ->excludes("--tensors")
        ->excludes("MODEL");
    auto names_only = std::make_shared<bool>(false);
    cmd->add_flag("--names", *names_only, "Print only the references of the store's models, one a line (what shell completion offers)")
        ->excludes("MODEL")
        ->excludes("--json")
        ->excludes("--verify")
        ->excludes("--tensors");
    cmd->callback([=, &exit_code] {
        if (*names_only) {
            exit_code = print_model_names(*path);
            return;
        }
        std::vector<std::string> args;
        for (const std::string* a : {path.get(), model.get()})
            if (!a->empty()) args.push_back(*a);
        exit_code = run_store(args, *options);
    });
}

void add_show_commands(CLI::App& app, int& exit_code) {
    struct ShowArgs {
        std::string reference;
        std::string store;
        StoreShowOptions options;
        std::vector<std::string> store_args() const {
            return store.empty() ? std::vector<std::string>{reference} : std::vector<std::string>{store, reference};
        }
    };
    auto show = std::make_shared<ShowArgs>();
    auto* cmd = app.add_subcommand("show", "One model of an Ollama store or registry (ollama://): manifest, layers, config, text layers");
    cmd->add_option("MODEL", show->reference, "Model reference, e.g. gemma3:4b or host/namespace/model:tag, or ollama://MODEL[:TAG] for a registry's")->required();
    cmd->add_option("--store", show->store, "Store root (default: the Ollama stores found)");
    cmd->add_flag("--json", show->options.json, "Print JSON");
    cmd->add_flag("--tensors", show->options.tensors, "Open the model and list its logical tensors and expert groups");
    add_no_cache_flag(cmd, show->options.no_cache);
    cmd->callback([show, &exit_code] { exit_code = run_store(show->store_args(), show->options); });

    auto verify = std::make_shared<ShowArgs>();
    verify->options.verify = true;
    auto* vcmd = app.add_subcommand("verify", "Hash every blob of a store model, or of a registry's (ollama://), and compare it with its digest");
    vcmd->add_option("MODEL", verify->reference, "Model reference, e.g. gemma3:4b, or ollama://MODEL[:TAG] for a registry's")->required();
    vcmd->add_option("--store", verify->store, "Store root (default: the Ollama stores found)");
    vcmd->add_flag("--json", verify->options.json, "Print JSON");
    add_no_cache_flag(vcmd, verify->options.no_cache);
    vcmd->callback([verify, &exit_code] {
        // A model of a registry is verified where it lives: its blobs are fetched whole.
        if (!verify->reference.starts_with("ollama://"))
            exit_code = run_store(verify->store_args(), verify->options);
        else if (!verify->store.empty())
            exit_code = usage_error("--store: an ollama:// model is read from its registry, not from a store");
        else
            exit_code = print_registry_verification(verify->reference, verify->options.json);
    });
}

}  // namespace mlens::cli
