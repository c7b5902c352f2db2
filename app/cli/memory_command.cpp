// mlens memory PATH [--ctx N] [--batch N] [--ubatch N] [--kv-type f16|q8_0|q4_0|...] [--threads N] [--json]
//              [--worker-timeout SECONDS]
// The memory plan of memory_plan.h: weights, KV cache and compute buffer estimated from the file;
// llama.cpp's own plan for those settings, made without loading a weight (a dry-run session: the
// pass llama.cpp's fitting uses, so it works on models larger than the machine's memory); and the
// same model loaded in llama.cpp (worker process) with what it allocated. The error column is the
// estimate's against the allocation.
#include <cmath>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/infer/dry_run.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/worker_session.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

struct MemoryFlags {
    std::string path;
    MemoryPlanOptions options;
    int threads = 0;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
    bool json = false, as_is = false;
};

double relative_error(uint64_t estimate, uint64_t actual) {
    if (actual == 0) return estimate == 0 ? 0.0 : INFINITY;
    return (static_cast<double>(estimate) - static_cast<double>(actual)) / static_cast<double>(actual);
}

int run_memory(const MemoryFlags& f) {
    auto model = open_or_report(f.path);
    if (!model) return kExitBroken;
    auto estimate = estimate_memory(*model, f.options, f.as_is);
    if (!estimate) return fail(f.path, estimate.error());
    SessionOptions so;
    so.n_threads = f.threads;
    so.n_ctx = 16;  // the session's own context is not measured: measure_memory makes its own
    so.as_is = f.as_is;
    so.worker_timeout_s = f.worker_timeout;
    auto session = WorkerSession::load(f.path, so);
    if (!session) return fail(f.path, session.error());
    auto measured = (*session)->run<MemoryOp>(f.options);
    if (!measured) return fail(f.path, measured.error());
    auto plan = dry_run_memory(f.path, f.options, so);
    if (!plan) return fail(f.path, plan.error());
    const MemoryTerms& est = estimate->terms;
    const MemoryTerms& pl = plan->terms;
    const MemoryTerms& act = measured->terms;
    struct Row {
        const char* name;
        uint64_t estimate, plan, actual;
    };
    const Row rows[] = {{"weights", est.weights, pl.weights, act.weights},
                        {"kv", est.kv, pl.kv, act.kv},
                        {"compute", est.compute, pl.compute, act.compute},
                        {"total", est.total(), pl.total(), act.total()}};
    auto buffers_json = [](const std::vector<MemoryBuffer>& list) {
        nlohmann::json out = nlohmann::json::array();
        for (const MemoryBuffer& b : list)
            out.push_back({{"name", b.name}, {"weights", b.terms.weights}, {"kv", b.terms.kv}, {"compute", b.terms.compute}});
        return out;
    };
    if (f.json) {
        nlohmann::json terms = nlohmann::json::object();
        for (const Row& r : rows)
            terms[r.name] = {{"estimate", r.estimate},
                             {"plan", r.plan},
                             {"llama_cpp", r.actual},
                             {"relative_error", json_number(relative_error(r.estimate, r.actual))}};
        print_json_result({{"path", shown_path(f.path)},
                           {"n_ctx", f.options.n_ctx},
                           {"n_ctx_padded", estimate->n_ctx_padded},
                           {"n_batch", f.options.n_batch},
                           {"n_ubatch", estimate->n_ubatch},
                           {"kv_type", f.options.kv_type},
                           {"terms", terms},
                           {"estimate_weights", {{"mapped", estimate->weights_mapped}, {"copied", estimate->weights_copied}}},
                           {"plan_buffers", buffers_json(plan->buffers)},
                           {"buffers", buffers_json(measured->buffers)},
                           {"note", estimate->note.empty() ? nlohmann::json(nullptr) : nlohmann::json(estimate->note)}});
        return kExitOk;
    }
    std::cout << "context " << f.options.n_ctx << " (" << estimate->n_ctx_padded << " cells), batch " << f.options.n_batch
              << ", micro-batch " << estimate->n_ubatch << ", KV cache " << f.options.kv_type << "; " << estimate->n_layer
              << " layers, K/V width " << estimate->n_embd_k_gqa << "/" << estimate->n_embd_v_gqa << "\n";
    std::vector<std::vector<std::string>> table{{"term", "estimate", "llama.cpp plan", "llama.cpp", "error"}};
    for (const Row& r : rows)
        table.push_back({r.name, mib_text(r.estimate), mib_text(r.plan), mib_text(r.actual) + " (" + std::to_string(r.actual) + ")",
                         number_text(100 * relative_error(r.estimate, r.actual), "%+.2f") + " %"});
    print_table(table);
    std::cout << "estimate: weights mapped " << mib_text(estimate->weights_mapped);
    for (const auto& [name, bytes] : estimate->weights_copied) std::cout << ", copied to " << name << " " << mib_text(bytes);
    std::cout << "\n";
    for (const MemoryBuffer& b : measured->buffers)
        std::cout << "llama.cpp buffer " << escape_for_display(b.name) << ": weights " << mib_text(b.terms.weights) << ", kv " << mib_text(b.terms.kv)
                  << ", compute " << mib_text(b.terms.compute) << "\n";
    if (!estimate->note.empty()) std::cout << "note: " << estimate->note << "\n";
    return kExitOk;
}

}  // namespace

void add_memory_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("memory", "Memory plan: weights, KV cache and compute estimated, and what llama.cpp allocates");
    auto f = std::make_shared<MemoryFlags>();
    cmd->add_option("PATH", f->path, "GGUF file")->required();
    cmd->add_option("--ctx", f->options.n_ctx, "Context length (default 4096)")->check(CLI::Range(1u, 1u << 24));
    cmd->add_option("--batch", f->options.n_batch, "Logical batch (default 2048)")->check(CLI::Range(1u, 1u << 24));
    cmd->add_option("--ubatch", f->options.n_ubatch, "Micro-batch (default 512)")->check(CLI::Range(1u, 1u << 24));
    cmd->add_option("--kv-type", f->options.kv_type, "KV cache type: f16 (default), q8_0, q4_0, f32, bf16, q4_1, q5_0, q5_1, iq4_nl");
    cmd->add_option("--threads", f->threads, "Threads for llama.cpp (>= 1; default: the idle cores)")->check(CLI::Range(1, 1 << 20));
    cmd->add_flag("--json", f->json, "Print JSON");
    cmd->add_flag("--as-is", f->as_is, "Hand the file to llama.cpp unmodified, even an Ollama-made GGUF");
    add_worker_timeout(cmd, f->worker_timeout);
    cmd->callback([f, &exit_code] { exit_code = run_memory(*f); });
}

}  // namespace mlens::cli
