// mlens ppl MODEL --text FILE [--ctx N] [--chunks K] [--batch N] [--ubatch N] [--threads N] [--json] [--log]
//           [--as-is] [--worker-timeout SECONDS]
// The model's perplexity over a text as llama-perplexity computes it without --kl-divergence
// (corpus_perplexity.h). Text output: the running perplexity after each chunk, as
// llama-perplexity's "[i]x" figures, then its "Final estimate" line; --json adds each chunk's
// own negative log-likelihood sum and the sums over the text.

#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/infer/corpus_perplexity.h"
#include "mlens/infer/worker_session.h"
#include "mlens/io/text_file.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

struct PplFlags {
    std::string model, text_file;
    uint32_t ctx = PerplexityOptions{}.n_ctx;
    int32_t chunks = -1;
    uint32_t batch = PerplexityOptions{}.n_batch, ubatch = PerplexityOptions{}.n_ubatch;
    int threads = 0;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
    bool json = false, log = false, as_is = false;
};

void print_json(const PplFlags& f, const CorpusPerplexityResult& r) {
    nlohmann::json chunks = nlohmann::json::array();
    for (const PerplexityChunk& c : r.chunks)
        chunks.push_back(
            {{"index", c.index}, {"running_ppl", json_number(c.running_ppl)}, {"nll", json_number(c.nll)}, {"seconds", c.seconds}});
    print_json_result({{"model", f.model},
                       {"text", f.text_file},
                       {"n_ctx", r.n_ctx},
                       {"n_batch", f.batch},
                       {"n_ubatch", f.ubatch},
                       {"n_chunk", r.n_chunk},
                       {"text_tokens", r.text_tokens},
                       {"positions", r.count},
                       {"nll_sum", json_number(r.nll)},
                       {"nll2_sum", json_number(r.nll2)},
                       {"ppl", json_number(r.ppl)},
                       {"ppl_err", json_number(r.ppl_err)},
                       {"chunks", chunks},
                       {"seconds", r.seconds}});
}

int run_ppl(const PplFlags& f) {
    auto text = read_text_file(f.text_file, kMaxCorpusTextBytes);
    if (!text) return fail(f.text_file, text.error());
    ScoringSession scoring = load_scoring_session(f.model, f.threads, f.as_is, f.worker_timeout, f.log);
    if (!scoring.session) return scoring.exit_status;
    WorkerSession& session = *scoring.session;
    PerplexityOptions po{f.ctx, f.chunks, f.batch, f.ubatch};
    auto result = session.run<PplOp>({std::move(*text), "", po}, nullptr, [&](const PerplexityChunk& c) {
        if (!f.json) std::cout << "[" << c.index + 1 << "] " << number_text(c.running_ppl, "%.4f") << "\n" << std::flush;
    });
    if (f.log) print_llama_log(session.log());
    if (!result) return fail(f.model, result.error());
    const CorpusPerplexityResult& r = *result;
    if (f.json) {
        print_json(f, r);
        return kExitOk;
    }
    std::cout << "\n"
              << r.text_tokens << " tokens in the text; " << r.n_chunk << " chunks of " << r.n_ctx << "; " << r.count
              << " positions scored in " << number_text(r.seconds, "%.2f") << " s\n";
    // llama-perplexity's own last line, digit for digit, so the two can be compared as text.
    std::cout << "Final estimate: PPL = " << number_text(r.ppl, "%.4f") << " +/- " << number_text(r.ppl_err, "%.5f") << "\n";
    return kExitOk;
}

}  // namespace

void add_ppl_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("ppl", "Perplexity of a model over a text, as llama-perplexity computes it");
    auto f = std::make_shared<PplFlags>();
    cmd->add_option("MODEL", f->model, "GGUF, store model or reference")->required();
    cmd->add_option("--text", f->text_file, "The text to score (a regular file, at most 256 MiB)")->required();
    cmd->add_option("--ctx", f->ctx, "Tokens per chunk (default 512); the second half of each is scored")->check(CLI::Range(4u, 1u << 20));
    cmd->add_option("--chunks", f->chunks, "Score at most K chunks (default: all)")->check(CLI::Range(1, 1 << 30));
    add_batch_options(cmd, f->batch, f->ubatch);
    cmd->add_option("--threads", f->threads, "Threads for llama.cpp and the scoring (>= 1; default: the idle cores)")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_flag("--json", f->json, "Print JSON");
    cmd->add_flag("--log", f->log, "Print llama.cpp's log lines to stderr");
    cmd->add_flag("--as-is", f->as_is, "Hand the file to llama.cpp unmodified, even an Ollama-made GGUF");
    add_worker_timeout(cmd, f->worker_timeout);
    cmd->callback([f, &exit_code] { exit_code = run_ppl(*f); });
}

}  // namespace mlens::cli
