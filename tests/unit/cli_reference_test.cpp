// The man page and completions mlens prints for the build come from the same definitions as its
// --help, and the names-only listings that completion calls print exactly the names.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "build_paths.h"
#include "cli_runner.h"

using namespace mlens;

namespace {

const std::string kDemo = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";

}  // namespace

TEST_CASE("tensors --names prints the tensor names of the file, one a line", "[install]") {
    test::CliRun run = test::run_mlens({"tensors", kDemo, "--names"});
    CHECK(run.exit_status == 0);
    const std::vector<std::string> names = test::lines_of(run.out);
    REQUIRE(names.size() == 21);
    CHECK(names[0] == "token_embd.weight");
    CHECK(names[1] == "blk.0.attn_norm.weight");
    CHECK(names[2] == "blk.0.attn_q.weight");
    CHECK(test::run_mlens({"tensors", kDemo, "--names", "--json"}).exit_status == 2);
}

TEST_CASE("store --names prints the model references of a store, sorted", "[install]") {
    test::CliRun run = test::run_mlens({"store", std::string(MLENS_DEMO_DIR) + "/ollama-store", "--names"});
    CHECK(run.exit_status == 0);
    CHECK(run.out ==
          "tiny-llama:q4_0\ntiny-mlx:mixed\ntiny-moe-legacy:per-expert\ntiny-moe-legacy:switch-mlp\n"
          "tiny-moe-shared:int4\ntiny-moe:int4\n");
}

TEST_CASE("the man page has a section for every subcommand --help lists, and the exit statuses", "[install]") {
    test::CliRun help = test::run_mlens({"--help"});
    test::CliRun man = test::run_mlens({"--reference", "man"});
    REQUIRE(man.exit_status == 0);
    const std::vector<std::string> help_lines = test::lines_of(help.out);
    const std::vector<std::string> man_lines = test::lines_of(man.out);
    CHECK(man_lines[0] == ".TH MLENS 1 \"\" \"ModelLens 0.1.0\" \"User Commands\"");
    CHECK(man_lines[2] == "mlens \\- inspect and debug LLM model files (GGUF, safetensors, Ollama stores)");
    size_t subcommands = 0;
    bool listing = false;
    for (const std::string& line : help_lines) {
        if (line == "Subcommands:")
            listing = true;
        else if (line.empty())
            listing = false;
        else if (listing) {
            const std::string name = line.substr(2, line.find(' ', 2) - 2);
            INFO(name);
            CHECK(std::find(man_lines.begin(), man_lines.end(), ".SS " + name) != man_lines.end());
            ++subcommands;
        }
    }
    CHECK(subcommands >= 19);
    const std::string exit_status = ".SH EXIT STATUS\n.TP\n0\nsuccess\n.TP\n1\n";
    CHECK(man.out.find(exit_status) != std::string::npos);
    CHECK(man.out.find(".TP\n\\fB\\-\\-sort\\fR \\fITEXT\\fR\nOrder: file (default), name, size (largest first), offset "
                       "(one of: file, name, size, offset)\n") != std::string::npos);
    CHECK(help.out.find("\nExit status:\n  0  success\n") != std::string::npos);
}

TEST_CASE("the completion scripts name each command's options and argument kinds", "[install]") {
    test::CliRun bash = test::run_mlens({"--reference", "bash"});
    CHECK(bash.exit_status == 0);
    CHECK(bash.out.find("        stats) options='-h --help --expert --json' valued='--expert' kinds='path tensor' ;;\n") !=
          std::string::npos);
    CHECK(bash.out.find("        show) options='-h --help --store --json --tensors --no-cache' valued='--store' kinds='model' ;;\n") !=
          std::string::npos);
    CHECK(bash.out.rfind("complete -F _mlens mlens\n") == bash.out.size() - 25);
    test::CliRun zsh = test::run_mlens({"--reference", "zsh"});
    CHECK(zsh.out.starts_with("#compdef mlens\n"));
    CHECK(zsh.out.find("        stats) _arguments -s '-h[Print this help message and exit]'") != std::string::npos);
    test::CliRun fish = test::run_mlens({"--reference", "fish"});
    CHECK(fish.out.find("complete -c mlens -n '__fish_seen_subcommand_from tensors' -l sort -x -a 'file name size offset'") !=
          std::string::npos);
    CHECK(test::run_mlens({"--reference", "troff"}).exit_status == 2);
}
