#include "corpus_text.h"

#include "build_paths.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace mlens::test {

namespace {

constexpr std::array<const char*, 96> kWords = {
    "the",    "of",     "and",     "a",       "to",      "in",       "is",      "you",     "that",       "it",      "he",      "was",
    "for",    "on",     "are",     "as",      "with",    "his",      "they",    "at",      "be",         "this",    "have",    "from",
    "or",     "one",    "had",     "by",      "word",    "but",      "not",     "what",    "all",        "were",    "we",      "when",
    "your",   "can",    "said",    "there",   "use",     "an",       "each",    "which",   "she",        "do",      "how",     "their",
    "if",     "will",   "up",      "other",   "about",   "out",      "many",    "then",    "them",       "these",   "so",      "some",
    "her",    "would",  "make",    "like",    "river",   "mountain", "village", "letter",  "winter",     "garden",  "morning", "stone",
    "bridge", "window", "journey", "harbour", "quietly", "across",   "under",   "between", "always",     "never",   "often",   "slowly",
    "bright", "cold",   "old",     "young",   "walked",  "found",    "carried", "opened",  "remembered", "watched", "built",   "wrote"};

}  // namespace

std::string corpus_text(size_t words, uint64_t seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    std::string text;
    bool sentence_start = true;
    for (size_t i = 0; i < words; ++i) {
        std::string w = kWords[next() % kWords.size()];
        if (sentence_start) w[0] = static_cast<char>(w[0] - 'a' + 'A');
        text += w;
        const uint64_t r = next() % 100;
        sentence_start = r < 9;
        if (r < 7)
            text += ". ";
        else if (r < 8)
            text += "?\n";
        else if (r < 9)
            text += ".\n\n";
        else if (r < 15)
            text += ", ";
        else
            text += " ";
    }
    text += ".\n";
    return text;
}

ShellRun run_shell(const std::string& command) {
    ShellRun run;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return run;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) run.output.append(buf, n);
    const int status = ::pclose(pipe);
    run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

ShellRun run_llama_tool(const std::string& command, const std::string& marker) {
    ShellRun run;
    for (int attempt = 0; attempt < 20; ++attempt) {
        run = run_shell(command);
        if (run.output.find(marker) != std::string::npos) break;
    }
    return run;
}

std::string llama_perplexity_path() { return MLENS_LLAMA_PERPLEXITY; }

}  // namespace mlens::test
