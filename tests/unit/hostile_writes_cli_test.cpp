// Every writing command of the CLI against its own inputs. The writing options are discovered from
// `mlens --help` and each command's help (an option or argument whose help starts with "Write"),
// so a command added later fails this test until its hostile cases are listed here. Each is run
// with its output onto its own input reached by a symbolic link, a hard link, a store path (the
// manifest and the blob of the store model it reads) and a new file in that store: every run is
// refused and no byte under the test's folder changes.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "build_paths.h"
#include "cli_runner.h"
#include "corpus_text.h"
#include "model_fixture.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

using WritingOption = std::pair<std::string, std::string>;  // command, option or argument name

// The subcommands `mlens --help` lists, then each one's options whose help starts with "Write".
std::set<WritingOption> writing_options_from_help() {
    std::set<WritingOption> found;
    const CliRun top = run_mlens({"--help"});
    bool in_subcommands = false;
    std::vector<std::string> commands;
    for (const std::string& line : lines_of(top.out)) {
        if (line.starts_with("Subcommands:")) {
            in_subcommands = true;
            continue;
        }
        if (in_subcommands && line.starts_with("  ")) {
            std::smatch m;
            static const std::regex name(R"(^  (\S+))");
            if (std::regex_search(line, m, name)) commands.push_back(m[1]);
        } else if (in_subcommands && !line.empty()) {
            in_subcommands = false;
        }
    }
    REQUIRE(commands.size() > 10);
    static const std::regex option(R"(^\s+(-[-\w, ]*?-?[\w-]+|[A-Z][A-Z_]*)\s+(?:[A-Z:\[\]<>.\w]+\s+)*?\s{2,}(Write\b.*)$)");
    for (const std::string& command : commands) {
        const CliRun help = run_mlens({command, "--help"});
        for (const std::string& line : lines_of(help.out)) {
            std::smatch m;
            if (!std::regex_match(line, m, option)) continue;
            std::string name = m[1];
            if (const size_t comma = name.rfind(", "); comma != std::string::npos) name = name.substr(comma + 2);
            found.insert({command, name});
        }
    }
    return found;
}

// What a writing option is run with: the command line for a model and an output target.
using CommandLine = std::function<std::vector<std::string>(const std::string& model, const std::string& target)>;

struct Inputs {
    TempDir dir;
    std::string hist_model, ollama_model, text;
    std::string tiny_ref, gem_ref, tiny_manifest, gem_manifest, tiny_blob, gem_blob, store_root;

    Inputs() {
        hist_model = dir.file("model.gguf");
        write_fixture_model(hist_model, {{"w", GGML_TYPE_Q8_0, {256, 8}, test_signal(2048, 3)}});
        ollama_model = dir.file("ollama.gguf");
        fs::copy_file(std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf", ollama_model);
        text = dir.file("text.txt");
        const std::string body = corpus_text(600);
        write_whole_file(text, std::vector<uint8_t>(body.begin(), body.end()));
        fs::create_directory(dir.file("store"));
        OllamaStoreBuilder store(dir.file("store"));
        store.add_tiny();
        LayerSpec gem = store.blob("application/vnd.ollama.image.model", read_whole_file(ollama_model));
        store.add_model("gem", {gem}, config_json("gguf", "gemma3", "F16"));
        store_root = store.root();
        tiny_ref = store_root + "/tiny:latest";
        gem_ref = store_root + "/gem:latest";
        tiny_manifest = store_root + "/manifests/registry.ollama.ai/library/tiny/latest";
        gem_manifest = store_root + "/manifests/registry.ollama.ai/library/gem/latest";
        tiny_blob = store.blob_path(store.tiny_model_layer());
        gem_blob = store.blob_path(gem);
        for (const std::string& file : {hist_model, ollama_model, text}) {
            fs::create_symlink(file, file + ".symlink");
            fs::create_hard_link(file, file + ".hardlink");
        }
        fs::create_directory_symlink(store_root, dir.file("store-link"));
    }
};

struct HostileCase {
    std::string model, target;
};

// The cases of one writing option: its output onto a file it reads, however reached.
std::vector<HostileCase> cases_for(const Inputs& in, const std::string& file_model, const std::string& store_model,
                                   const std::string& manifest, const std::string& blob) {
    return {
        {file_model, file_model + ".symlink"},
        {file_model + ".symlink", file_model + ".hardlink"},
        {file_model + ".hardlink", file_model},
        {store_model, manifest},
        {store_model, blob},
        {store_model, in.store_root + "/new-file"},
        {blob, in.dir.file("store-link") + "/manifests/new-file"},
    };
}

}  // namespace

TEST_CASE("every writing command refuses to write onto its own inputs, however they are reached", "[output][hostile]") {
    Inputs in;
    const std::map<WritingOption, std::pair<CommandLine, std::vector<HostileCase>>> table = {
        {{"hist", "--csv"},
         {[](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"hist", m, "w", "--csv", t};
          },
          cases_for(in, in.hist_model, in.tiny_ref, in.tiny_manifest, in.tiny_blob)}},
        {{"hist", "--png"},
         {[](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"hist", m, "w", "--png", t};
          },
          cases_for(in, in.hist_model, in.tiny_ref, in.tiny_manifest, in.tiny_blob)}},
        {{"export-upstream", "OUT"},
         {[](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"export-upstream", m, t};
          },
          cases_for(in, in.ollama_model, in.gem_ref, in.gem_manifest, in.gem_blob)}},
        {{"export-upstream", "--mmproj"},
         {[&in](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"export-upstream", m, in.dir.file("fresh.gguf"), "--mmproj", t};
          },
          cases_for(in, in.ollama_model, in.gem_ref, in.gem_manifest, in.gem_blob)}},
        {{"kld", "--save-base"},
         {[&in](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"kld",      m,   m,           "--text", in.text,       "--ctx", "64",
                                              "--chunks", "1", "--threads", "2",      "--save-base", t};
          },
          cases_for(in, in.ollama_model, in.gem_ref, in.gem_manifest, in.gem_blob)}},
        {{"edit", "-o,--output"},
         {[](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"edit", m, "-o", t, "--set", "general.name=x"};
          },
          cases_for(in, in.hist_model, in.tiny_ref, in.tiny_manifest, in.tiny_blob)}},
        // In place, the file named is the file written: a symbolic link to it and anything in a store
        // are refused (a hard link names the file itself).
        {{"edit", "--in-place"},
         {[](const std::string&, const std::string& t) {
              return std::vector<std::string>{"edit", t, "--in-place", "--set", "general.architecture=llama"};
          },
          {{"", in.hist_model + ".symlink"},
           {"", in.tiny_ref},
           {"", in.tiny_blob},
           {"", in.gem_blob},
           {"", in.dir.file("store-link") + in.gem_blob.substr(in.store_root.size())}}}},
        {{"export", "OUT_DIR"},
         {[](const std::string& m, const std::string& t) {
              return std::vector<std::string>{"export", m, t, "--format", "gguf"};
          },
          {{in.gem_ref, in.store_root + "/new-folder"},
           {in.gem_ref, in.dir.file("store-link") + "/blobs/new-folder"},
           {in.gem_ref, in.store_root + "/blobs"},
           {in.gem_ref, in.gem_blob}}}},
    };

    const std::set<WritingOption> discovered = writing_options_from_help();
    for (const WritingOption& w : discovered) {
        INFO("mlens " << w.first << " " << w.second << " writes a file: list its hostile cases in this test");
        CHECK(table.count(w) == 1);
    }
    for (const auto& [option, entry] : table) {
        INFO("listed here but not found in the help: mlens " << option.first << " " << option.second);
        CHECK(discovered.count(option) == 1);
    }

    const auto before = folder_bytes(in.dir.path());
    for (const auto& [option, entry] : table)
        for (const HostileCase& c : entry.second) {
            const std::vector<std::string> args = entry.first(c.model, c.target);
            std::string shown = "mlens";
            for (const std::string& a : args) shown += " " + a;
            INFO(shown);
            CliRun run = run_mlens(args);
            INFO(run.err);
            CHECK(run.exit_status != 0);
            CHECK(run.signal == 0);
            CHECK(folder_bytes(in.dir.path()) == before);
        }
    CHECK(leftovers_in(in.dir.path()) == 0);
}
