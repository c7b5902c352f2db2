// A deterministic English-like text for corpus scoring tests and benchmarks: sentences of common
// words drawn by a seeded generator, with punctuation and paragraph breaks. The same arguments
// give the same bytes; about 1.3 tokens a word with the LLaMA SentencePiece vocabulary.
#pragma once

#include <cstdint>
#include <string>

namespace mlens::test {

std::string corpus_text(size_t words, uint64_t seed = 1);

// Runs `command` through /bin/sh, returning its exit status and what it wrote to stdout and stderr.
struct ShellRun {
    int exit_status = -1;
    std::string output;
};
ShellRun run_shell(const std::string& command);

// Runs a llama.cpp tool whose figures are its last log lines until its output holds `marker`, at
// most 20 times. llama.cpp's logger prints from its own thread and is never destroyed at exit
// (common/log.cpp, common_log_main), so a run can lose the lines it logged last; on a machine as
// busy as the sanitizer test run, most runs lose some, and one was seen to end with a non-zero
// status after its KL-divergence figures, its token-probability figures lost. The tools are
// deterministic, so a run again prints the same figures. Returns the last run (its output lacking
// `marker` when every run lost it, a tool that always fails included).
ShellRun run_llama_tool(const std::string& command, const std::string& marker);

// The llama-perplexity that third_party/setup.sh built from the pinned source.
std::string llama_perplexity_path();

}  // namespace mlens::test
