// mlens kld A B --text FILE [--ctx N] [--chunks K] [--batch N] [--ubatch N] [--save-base FILE] [--threads N] [--json] [--log] [--as-is]
//           [--worker-timeout SECONDS]
// mlens kld --base FILE B [--chunks K] [...]
// Model B scored against reference A over a text, chunk by chunk, with llama-perplexity's
// --kl-divergence definitions (corpus_kld.h, kld_statistics.h). Text output: one line per chunk
// with the running figures, as llama-perplexity prints them, then the overall statistics; --json
// adds the per-chunk figures of each chunk alone and the per-position values.

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/text/number_format.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/worker_session.h"
#include "mlens/io/text_file.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

struct KldFlags {
    std::string a, b, text_file, base, save_base;
    uint32_t ctx = 0;  // 0: 512, or the base file's
    uint32_t batch = KldOptions{}.n_batch, ubatch = KldOptions{}.n_ubatch;
    int32_t chunks = -1;
    int threads = 0;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
    bool json = false, log = false, as_is = false;
};

nlohmann::json moments_json(const KldMoments& m) {
    return {{"positions", m.count},
            {"ppl_a", json_number(m.ppl_a)},
            {"ppl_a_err", json_number(m.ppl_a_err)},
            {"ppl_b", json_number(m.ppl_b)},
            {"ppl_b_err", json_number(m.ppl_b_err)},
            {"ln_ppl_ratio", json_number(m.ln_ratio)},
            {"ln_ppl_ratio_err", json_number(m.ln_ratio_err)},
            {"ppl_correlation", json_number(m.ppl_correlation)},
            {"kld_mean", json_number(m.kld_mean)},
            {"kld_err", json_number(m.kld_err)},
            {"p_diff_mean", json_number(m.p_diff_mean)},
            {"p_diff_err", json_number(m.p_diff_err)},
            {"p_diff_rms", json_number(m.p_diff_rms)},
            {"p_diff_rms_err", json_number(m.p_diff_rms_err)},
            {"same_top", json_number(m.same_top)},
            {"same_top_err", json_number(m.same_top_err)},
            {"same_top_count", m.same_top_count}};
}

nlohmann::json order_json(const KldOrder& o) {
    return {{"min", json_number(o.min)}, {"p0_1", json_number(o.p01)}, {"p1", json_number(o.p1)},         {"p5", json_number(o.p5)},
            {"p10", json_number(o.p10)}, {"p25", json_number(o.p25)},  {"median", json_number(o.median)}, {"p75", json_number(o.p75)},
            {"p90", json_number(o.p90)}, {"p95", json_number(o.p95)},  {"p99", json_number(o.p99)},       {"p99_9", json_number(o.p999)},
            {"max", json_number(o.max)}};
}

std::string pm(double v, double e, const char* format) { return number_text(v, format) + " ± " + number_text(e, format); }

void print_chunk_line(const KldChunk& chunk, KldSums& running) {
    running.add(chunk.sums);
    const KldMoments m = kld_moments(running);
    std::cout << number_text(chunk.index + 1, "%4.0f") << "  " << pm(m.ppl_b, m.ppl_b_err, "%10.4f") << "  "
              << pm(m.ln_ratio, m.ln_ratio_err, "%10.5f") << "  " << pm(m.kld_mean, m.kld_err, "%10.5f") << "  "
              << pm(100 * m.p_diff_rms, 100 * m.p_diff_rms_err, "%6.3f") << " %  " << pm(100 * m.same_top, 100 * m.same_top_err, "%6.3f")
              << " %\n"
              << std::flush;
}

void print_summary(const CorpusKldResult& r) {
    const KldMoments m = kld_moments(r.total);
    const KldOrder k = kld_order(r.kld);
    const KldOrder d = kld_order(r.p_diff);
    std::cout << "\n"
              << r.text_tokens << " tokens in the text; " << r.n_chunk << " chunks of " << r.n_ctx << "; " << m.count
              << " positions scored in " << number_text(r.seconds, "%.2f") << " s\n\n";
    std::cout << "PPL(A)            " << plus_minus_text(m.ppl_a, m.ppl_a_err) << "   (from A's stored log-probabilities)\n";
    std::cout << "PPL(B)            " << plus_minus_text(m.ppl_b, m.ppl_b_err) << "\n";
    std::cout << "ln(PPL(B)/PPL(A)) " << pm(m.ln_ratio, m.ln_ratio_err, "%.6f") << "   correlation "
              << number_text(100 * m.ppl_correlation, "%.2f") << " %\n\n";
    std::cout << "KLD mean          " << pm(m.kld_mean, m.kld_err, "%.6f") << "\n";
    std::cout << "KLD max " << number_text(k.max, "%.6f") << ", 99.9% " << number_text(k.p999, "%.6f") << ", 99% "
              << number_text(k.p99, "%.6f") << ", 95% " << number_text(k.p95, "%.6f") << ", 90% " << number_text(k.p90, "%.6f")
              << ", median " << number_text(k.median, "%.6f") << ", 10% " << number_text(k.p10, "%.6f") << ", min "
              << number_text(k.min, "%.6f") << "\n\n";
    std::cout << "same top token    " << m.same_top_count << " of " << m.count << " (" << pm(100 * m.same_top, 100 * m.same_top_err, "%.3f")
              << " %)\n";
    std::cout << "Δp mean           " << pm(100 * m.p_diff_mean, 100 * m.p_diff_err, "%.3f") << " %, RMS "
              << pm(100 * m.p_diff_rms, 100 * m.p_diff_rms_err, "%.3f") << " %\n";
    std::cout << "Δp max " << number_text(100 * d.max, "%.3f") << "%, 99% " << number_text(100 * d.p99, "%.3f") << "%, 90% "
              << number_text(100 * d.p90, "%.3f") << "%, median " << number_text(100 * d.median, "%.3f") << "%, 10% "
              << number_text(100 * d.p10, "%.3f") << "%, 1% " << number_text(100 * d.p1, "%.3f") << "%, min "
              << number_text(100 * d.min, "%.3f") << "%\n";
}

void print_json(const KldFlags& f, const CorpusKldResult& r) {
    nlohmann::json chunks = nlohmann::json::array();
    for (const KldChunk& c : r.chunks) {
        nlohmann::json j = moments_json(kld_moments(c.sums));
        j["index"] = c.index;
        j["seconds"] = c.seconds;
        chunks.push_back(std::move(j));
    }
    nlohmann::json positions = {{"kld", r.kld}, {"p_diff", r.p_diff}, {"top_a", r.top_a}, {"top_b", r.top_b}};
    nlohmann::json out = {{"a", f.base.empty() ? nlohmann::json(f.a) : nlohmann::json(nullptr)},
                          {"base", f.base.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.base)},
                          {"b", f.b},
                          {"n_ctx", r.n_ctx},
                          {"n_batch", f.batch},
                          {"n_ubatch", f.ubatch},
                          {"n_chunk", r.n_chunk},
                          {"text_tokens", r.text_tokens},
                          {"first_scored", kld_first_scored(r.n_ctx)},
                          {"seconds", r.seconds},
                          {"overall", moments_json(kld_moments(r.total))},
                          {"kld", order_json(kld_order(r.kld))},
                          {"p_diff", order_json(kld_order(r.p_diff))},
                          {"chunks", chunks},
                          {"positions", positions}};
    print_json_result(out);
}

// fail() naming the file the error of a scoring run is about: the base file for its own errors
// (E_KLD_BASE, or it could not be opened: their messages begin with its name), the --save-base
// file for a refused output, B when it is about B, else the model the session loaded.
int fail_kld(const Error& e, const KldFlags& f) {
    if (!f.base.empty() && (e.code == ErrorCode::E_KLD_BASE || e.message.starts_with(escape_for_display(f.base)))) return fail(f.base, e);
    if (!f.save_base.empty() && e.field == "output") return fail(f.save_base, e);
    return fail_comparison(e, f.base.empty() ? f.a : f.b, f.b);
}

int run_kld(KldFlags f) {
    std::string text;
    if (f.base.empty()) {
        auto read = read_text_file(f.text_file, kMaxCorpusTextBytes);
        if (!read) return fail(f.text_file, read.error());
        text = std::move(*read);
    }
    const std::string& first = f.base.empty() ? f.a : f.b;
    ScoringSession scoring = load_scoring_session(first, f.threads, f.as_is, f.worker_timeout, f.log);
    if (!scoring.session) return scoring.exit_status;
    WorkerSession& session = *scoring.session;
    KldOptions ko;
    ko.n_ctx = f.ctx != 0 ? f.ctx : f.base.empty() ? 512 : 0;
    ko.max_chunks = f.chunks;
    ko.n_batch = f.batch;
    ko.n_ubatch = f.ubatch;
    ko.save_base = f.save_base;
    ko.base = f.base;
    KldSums running;
    if (!f.json) std::cout << "chunk         PPL(B)          ln(PPL(B)/PPL(A))            KLD                 Δp RMS          same top\n";
    std::vector<std::string> inputs;
    if (!f.text_file.empty()) inputs.push_back(f.text_file);
    auto result = session.run<KldOp>({f.base.empty() ? f.b : std::string(), text, "", ko, inputs}, nullptr, [&](const KldChunk& c) {
        if (!f.json) print_chunk_line(c, running);
    });
    if (f.log) print_llama_log(session.log());
    if (!result) return fail_kld(result.error(), f);
    if (f.json)
        print_json(f, result->result);
    else
        print_summary(result->result);
    if (!f.save_base.empty() && !f.json) std::cout << "A's log-probabilities saved to " << escape_for_display(f.save_base) << "\n";
    return kExitOk;
}

}  // namespace

void add_kld_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("kld", "KL divergence of B against A over a text, as llama-perplexity measures it");
    auto f = std::make_shared<KldFlags>();
    cmd->add_option("A", f->a, "Reference GGUF (leave out with --base)");
    cmd->add_option("B", f->b, "GGUF compared with A");
    cmd->add_option("--text", f->text_file, "The text to score (a regular file, at most 256 MiB)");
    cmd->add_option("--ctx", f->ctx, "Tokens per chunk (default 512); the second half of each is scored")->check(CLI::Range(4u, 1u << 20));
    cmd->add_option("--chunks", f->chunks, "Score at most K chunks (default: all)")->check(CLI::Range(1, 1 << 30));
    add_batch_options(cmd, f->batch, f->ubatch);
    cmd->add_option("--save-base", f->save_base, "Write A's log-probabilities to FILE (llama-perplexity's format)");
    cmd->add_option("--base", f->base, "Read A's log-probabilities from FILE (ours or llama-perplexity's) instead of running A");
    cmd->add_option("--threads", f->threads, "Threads for llama.cpp and the scoring (>= 1; default: the idle cores)")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_flag("--json", f->json, "Print JSON");
    cmd->add_flag("--log", f->log, "Print llama.cpp's log lines to stderr");
    cmd->add_flag("--as-is", f->as_is, "Hand the files to llama.cpp unmodified, even an Ollama-made GGUF");
    add_worker_timeout(cmd, f->worker_timeout);
    cmd->callback([f, &exit_code] {
        // With --base the only model given is B.
        if (!f->base.empty() && f->b.empty()) std::swap(f->a, f->b);
        if (f->b.empty()) throw CLI::ValidationError("kld", "needs A and B, or --base FILE and B");
        if (!f->base.empty() && !f->a.empty()) throw CLI::ValidationError("kld", "--base replaces A: give only B");
        if (!f->base.empty() && !f->save_base.empty()) throw CLI::ValidationError("kld", "--save-base needs A, not --base");
        if (f->base.empty() && f->text_file.empty()) throw CLI::RequiredError("--text");
        exit_code = run_kld(*f);
    });
}

}  // namespace mlens::cli
