// kld_bench A B [CTX] [CHUNKS] [THREADS] [REPEATS]
//
// Corpus KL divergence through ModelLens — `mlens kld`, llama.cpp in its worker process — against
// llama.cpp's own `llama-perplexity` (built from the pinned source by third_party/setup.sh) on the
// same models, text (test::corpus_text, enough words for CHUNKS chunks), context, batching (both
// tools' default batch of 2048 tokens: 2048 / CTX chunks decoded together) and thread count. Each
// figure is the median wall time over REPEATS runs of the whole command as a user runs it (loading
// included):
//  - both models: `mlens kld A B --save-base` against llama-perplexity's two passes
//    (--kl-divergence-base on A, then --kl-divergence on B);
//  - B against a stored base: `mlens kld --base FILE B` against `llama-perplexity --kl-divergence`.
// Prints each time and the speed ratio llama-perplexity time / mlens time (>= 1: mlens is faster).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "build_paths.h"
#include "corpus_text.h"
#include "test_paths.h"

namespace {

using Clock = std::chrono::steady_clock;

double timed(const std::string& command) {
    const auto start = Clock::now();
    mlens::test::ShellRun run = mlens::test::run_shell(command);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (run.exit_status != 0) {
        std::fprintf(stderr, "failed: %s\n%s\n", command.c_str(), run.output.c_str());
        std::exit(1);
    }
    return seconds;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: kld_bench A B [CTX] [CHUNKS] [THREADS] [REPEATS]\n");
        return 2;
    }
    const std::string a = argv[1], b = argv[2];
    const int ctx = argc > 3 ? std::atoi(argv[3]) : 256;
    const int chunks = argc > 4 ? std::atoi(argv[4]) : 8;
    const int threads = argc > 5 ? std::atoi(argv[5]) : 2;
    const int repeats = argc > 6 ? std::atoi(argv[6]) : 3;
    mlens::test::TempDir dir;
    const std::string text = dir.file("text.txt");
    const std::string body = mlens::test::corpus_text(static_cast<size_t>(ctx) * chunks);
    mlens::test::write_whole_file(text, std::vector<uint8_t>(body.begin(), body.end()));
    const std::string ppl = mlens::test::llama_perplexity_path() + " -c " + std::to_string(ctx) + " --chunks " + std::to_string(chunks) +
        " -t " + std::to_string(threads);
    const std::string mlens = std::string(MLENS_CLI_PATH) + " kld --ctx " + std::to_string(ctx) + " --chunks " + std::to_string(chunks) +
        " --threads " + std::to_string(threads);
    const std::string base_ppl = dir.file("base-ppl.bin"), base_ours = dir.file("base-mlens.bin");

    std::vector<double> ours_both, theirs_both, ours_b, theirs_b;
    for (int i = 0; i < repeats; ++i) {
        theirs_both.push_back(timed(ppl + " -m " + a + " -f " + text + " --kl-divergence-base " + base_ppl) +
                              timed(ppl + " -m " + b + " --kl-divergence-base " + base_ppl + " --kl-divergence"));
        ours_both.push_back(timed(mlens + " " + a + " " + b + " --text " + text + " --save-base " + base_ours));
        theirs_b.push_back(timed(ppl + " -m " + b + " --kl-divergence-base " + base_ppl + " --kl-divergence"));
        ours_b.push_back(timed(mlens + " --base " + base_ppl + " " + b));
    }
    std::printf("corpus KLD, ctx %d, %d chunks, %d threads, median of %d runs (wall time, loading included)\n", ctx, chunks, threads,
                repeats);
    const double tb = median(theirs_both), ob = median(ours_both), tr = median(theirs_b), orr = median(ours_b);
    std::printf("  A and B:        llama-perplexity (2 passes) %7.2f s   mlens kld %7.2f s   speed ratio %.2fx\n", tb, ob, tb / ob);
    std::printf("  B against base: llama-perplexity            %7.2f s   mlens kld %7.2f s   speed ratio %.2fx\n", tr, orr, tr / orr);
    return 0;
}
