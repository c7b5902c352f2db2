// mlens layer-divergence A B (-p TEXT|--prompt-file FILE) [--names attn_out,ffn_out,l_out] [--threads N] [--json]
//                        [--worker-timeout SECONDS]
// Where B's activations leave A's (layer_divergence.h): per captured node, cosine, relative error
// and SQNR pooled over the prompt's positions (--json: also per position), and the layer where the
// relative error of l_out rises most.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/worker_session.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"
#include "prompt_input.h"

namespace mlens::cli {

namespace {

struct DivergenceFlags {
    std::string a, b, prompt, prompt_file;
    LayerDivergenceOptions options;
    int threads = 0;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
    bool json = false, as_is = false;
};

int run_divergence(const DivergenceFlags& f) {
    auto prompt = resolve_prompt(f.prompt, f.prompt_file);
    if (!prompt) return fail(f.prompt_file, prompt.error());
    SessionOptions so;
    so.n_threads = f.threads;
    so.n_ctx = 16;  // the divergence decodes on contexts of its own
    so.as_is = f.as_is;
    so.worker_timeout_s = f.worker_timeout;
    auto a = WorkerSession::load(f.a, so);
    if (!a) return fail(f.a, a.error());
    auto divergence = (*a)->run<DivergenceOp>({f.b, *prompt, f.options});
    if (!divergence) return fail_comparison(divergence.error(), f.a, f.b);
    const LayerDivergenceResult* r = &divergence->result;
    if (r->rows.empty()) return names_match_nothing(f.options.names);
    if (f.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const LayerDivergenceRow& row : r->rows) {
            nlohmann::json rel = nlohmann::json::array(), cos = nlohmann::json::array(), sqnr = nlohmann::json::array();
            for (size_t p = 0; p < row.rel_error_at.size(); ++p) {
                rel.push_back(json_number(row.rel_error_at[p]));
                cos.push_back(json_number(row.cosine_at[p]));
                sqnr.push_back(json_number(row.sqnr_db_at[p]));
            }
            rows.push_back({{"tensor", row.tensor},
                            {"base", row.base},
                            {"layer", row.layer},
                            {"cosine", json_number(row.cosine)},
                            {"rel_error", json_number(row.rel_error)},
                            {"sqnr_db", json_number(row.sqnr_db)},
                            {"cosine_at", cos},
                            {"rel_error_at", rel},
                            {"sqnr_db_at", sqnr}});
        }
        print_json_result({{"a", f.a},
                           {"b", f.b},
                           {"tokens", r->tokens},
                           {"rows", rows},
                           {"jump_layer", r->jump_layer < 0 ? nlohmann::json(nullptr) : nlohmann::json(r->jump_layer)}});
        return kExitOk;
    }
    std::vector<std::vector<std::string>> table{{"tensor", "layer", "cosine", "rel. error", "SQNR dB", "worst position"}};
    for (const LayerDivergenceRow& row : r->rows) {
        size_t worst = 0;
        for (size_t p = 1; p < row.rel_error_at.size(); ++p)
            if (row.rel_error_at[p] > row.rel_error_at[worst]) worst = p;
        table.push_back(
            {row.tensor, std::to_string(row.layer), number_text(row.cosine, "%.8f"), number_text(row.rel_error, "%.6g"),
             number_text(row.sqnr_db, "%.2f"),
             row.rel_error_at.empty() ? "-" : std::to_string(worst) + " (" + number_text(row.rel_error_at[worst], "%.4g") + ")"});
    }
    print_table(table);
    std::cout << r->tokens.size() << " tokens; the relative error of l_out rises most at layer "
              << (r->jump_layer < 0 ? std::string("none (A and B agree exactly)") : std::to_string(r->jump_layer)) << "\n";
    return kExitOk;
}

}  // namespace

void add_divergence_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("layer-divergence", "Compare each layer's output of B with A's on the same tokens");
    auto f = std::make_shared<DivergenceFlags>();
    cmd->add_option("A", f->a, "Reference GGUF")->required();
    cmd->add_option("B", f->b, "GGUF compared with A (the same architecture)")->required();
    auto* p = cmd->add_option("-p,--prompt", f->prompt, "Prompt (\"-\": read it from standard input)");
    auto* pf = cmd->add_option("--prompt-file", f->prompt_file, "Read the prompt from FILE (at most 1 MiB)");
    p->excludes(pf);
    pf->excludes(p);
    cmd->add_option("--names", f->options.names, "Graph tensor names to compare (default attn_out,ffn_out,l_out)")->delimiter(',');
    cmd->add_option("--threads", f->threads, "Threads for llama.cpp (>= 1; default: the idle cores)")->check(CLI::Range(1, 1 << 20));
    cmd->add_flag("--json", f->json, "Print JSON");
    cmd->add_flag("--as-is", f->as_is, "Hand the files to llama.cpp unmodified, even an Ollama-made GGUF");
    add_worker_timeout(cmd, f->worker_timeout);
    cmd->callback([f, &exit_code] {
        if (f->prompt.empty() && f->prompt_file.empty()) throw CLI::RequiredError("-p,--prompt or --prompt-file");
        exit_code = run_divergence(*f);
    });
}

}  // namespace mlens::cli
