// mlens tokenize PATH [TEXT|-] [--prompt-file FILE] (no TEXT and no FILE: standard input) [--no-special] [--no-bos] [--chat] [--json]
// mlens run PATH (-p TEXT|-p -|--prompt-file FILE) [-n N] [--top-k K] [--temp T --seed S] [--sample-top-k K] [--top-p P] [--json]
// mlens ab A B (-p ...|--prompt-file FILE) [-n N] [--top-k K] [--json]
// mlens layers PATH (-p ...|--prompt-file FILE) [--names a,b,...] [--json]
// Test inference through llama.cpp, which runs in a worker process (worker_session.h): when
// llama.cpp aborts, crashes or is killed, the command exits 1 with "llama.cpp stopped: REASON".
// A file llama.cpp cannot load exits 1 with llama.cpp's own error text, escaped; --log prints
// every llama.cpp log line to stderr, escaped. A GGUF that is Ollama-made on evidence is loaded
// through the upstream export (model_loader.h), and a "note:" line on stderr says so; --as-is
// hands every file to llama.cpp unmodified. --threads must be >= 1; a count above the online
// cores is capped with a note; without it the default of threads.h applies. --worker-timeout
// SECONDS (default 120) stops a worker that sends nothing for that long.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_common.h"
#include "mlens/infer/ab_compare.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/model_loader.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/infer/worker_session.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/open/target.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "prompt_input.h"

namespace mlens::cli {

namespace {

struct CommonFlags {
    bool json = false;
    bool log = false;
    bool as_is = false;
    int threads = 0;  // 0: the default (threads.h)
    uint32_t ctx = 2048;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
};

void add_common(CLI::App* cmd, CommonFlags& f) {
    cmd->add_flag("--json", f.json, "Print JSON");
    cmd->add_flag("--log", f.log, "Print llama.cpp's log lines to stderr");
    cmd->add_flag("--as-is", f.as_is, "Hand the file to llama.cpp unmodified, even an Ollama-made GGUF");
    cmd->add_option("--threads", f.threads, "Threads for llama.cpp (>= 1; default: the idle cores)")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--ctx", f.ctx, "Context size (capped at the model's training context)")->check(CLI::Range(16u, 1u << 24));
    add_worker_timeout(cmd, f.worker_timeout);
}

// Spaces as '·', everything invisible escaped (see escape.h).
std::string shown(const std::string& piece) {
    std::string spaced;
    for (char c : piece) {
        if (c == ' ')
            spaced += "\xC2\xB7";
        else
            spaced += c;
    }
    return "'" + escape_for_display(spaced, 60) + "'";
}

// "llama · 4.19 M parameters · F32" of the file at `path`, counted by our reader (summary.h);
// llama.cpp's own description says "?B" for models below its size classes.
std::string model_line_of(const std::string& path) {
    auto model = open_model(path);
    if (!model) return escape_for_display(shown_path(path));
    return model_line(summarize(*model));
}

void print_log(const LogCapture& log) {
    for (const LlamaLogLine& line : log.lines())
        std::cerr << "llama.cpp " << llama_log_level_name(line.level) << ": " << escape_for_display(line.text, 400) << "\n";
}

// A loaded session, or null with the failure reported and its exit status in `status`.
std::unique_ptr<WorkerSession> load_or_report(const std::string& path, const CommonFlags& f, bool vocab_only, int& status) {
    SessionOptions options;
    options.vocab_only = vocab_only;
    options.n_threads = f.threads;
    options.n_ctx = f.ctx;
    options.as_is = f.as_is;
    options.worker_timeout_s = f.worker_timeout;
    auto log = std::make_shared<LogCapture>();
    auto loaded = WorkerSession::load(path, options, nullptr, log);
    if (!loaded) {
        if (f.log) print_log(*log);
        status = fail(path, loaded.error());
        return nullptr;
    }
    WorkerSession& session = **loaded;
    if (!session.thread_note().empty() && (f.threads > 0 || f.log)) std::cerr << "note: " << session.thread_note() << "\n";
    if (session.route().through_export)
        std::cerr << "note: " << escape_for_display(shown_path(path)) << ": " << escape_for_display(session.route().banner, 400) << "\n";
    return std::move(loaded).value();
}

// The prompt of -p TEXT, -p - (stdin) or --prompt-file FILE; nullopt after printing why not.
std::optional<std::string> prompt_or_report(const std::string& text, const std::string& file) {
    auto prompt = resolve_prompt(text, file);
    if (!prompt) {
        fail(file, prompt.error());
        return std::nullopt;
    }
    return std::move(prompt).value();
}

// -p and --prompt-file: one of them, not both.
void add_prompt_options(CLI::App* cmd, std::string& text, std::string& file) {
    auto* p = cmd->add_option("-p,--prompt", text, "Prompt (\"-\": read it from standard input)");
    auto* pf = cmd->add_option("--prompt-file", file, "Read the prompt from FILE (at most 1 MiB)");
    p->excludes(pf);
    pf->excludes(p);
}

void require_prompt(const std::string& text, const std::string& file) {
    if (text.empty() && file.empty()) throw CLI::RequiredError("-p,--prompt or --prompt-file");
}

nlohmann::json piece_json(const TokenPiece& t) {
    return {{"id", t.id}, {"piece", t.piece}, {"bytes", hex_bytes(t.piece)}, {"control", t.control}};
}

void print_pieces(const std::vector<TokenPiece>& tokens) {
    std::vector<std::vector<std::string>> rows{{"#", "id", "piece", "bytes"}};
    for (size_t i = 0; i < tokens.size(); ++i)
        rows.push_back({std::to_string(i), std::to_string(tokens[i].id), shown(tokens[i].piece), hex_bytes(tokens[i].piece)});
    print_table(rows);
}

int run_tokenize(const std::string& path, const std::string& text, bool no_special, bool no_bos, bool chat, const CommonFlags& f) {
    int status = kExitBroken;
    auto session = load_or_report(path, f, true, status);
    if (!session) return status;
    if (chat) {
        ChatTemplateOp::Options options;
        options.messages = sample_conversation();
        auto render = session->run<ChatTemplateOp>(options);
        if (f.log) print_log(session->log());
        if (!render) return fail(path, render.error());
        if (f.json) {
            nlohmann::json toks = nlohmann::json::array();
            for (const TokenPiece& t : render->tokens) toks.push_back(piece_json(t));
            print_json_result({{"template", render->template_source}, {"prompt", render->prompt}, {"tokens", toks}});
        } else {
            std::cout << "prompt: " << escape_for_display(render->prompt, 4000) << "\n";
            print_pieces(render->tokens);
        }
        return kExitOk;
    }
    TokenizeOptions options;
    options.parse_special = !no_special;
    options.add_special = !no_bos;
    auto tokens = session->run<TokenizeOp>({text, options});
    if (f.log) print_log(session->log());
    if (!tokens) return fail(path, tokens.error());
    std::vector<int32_t> ids;
    for (const TokenPiece& t : *tokens) ids.push_back(t.id);
    auto round_trip = session->run<DetokenizeOp>({ids, false, true});
    if (!round_trip) return fail(path, round_trip.error());
    if (f.json) {
        nlohmann::json toks = nlohmann::json::array();
        for (const TokenPiece& t : *tokens) toks.push_back(piece_json(t));
        print_json_result({{"path", shown_path(path)}, {"count", tokens->size()}, {"tokens", toks}, {"detokenized", *round_trip}});
    } else {
        print_pieces(*tokens);
        std::cout << tokens->size() << " tokens; detokenized: " << escape_for_display(*round_trip, 4000) << "\n";
    }
    return kExitOk;
}

nlohmann::json step_json(const GenerationStep& s) {
    nlohmann::json c = nlohmann::json::array();
    for (const TokenCandidate& t : s.candidates) c.push_back({{"id", t.id}, {"piece", t.piece}, {"logit", t.logit}, {"prob", t.prob}});
    return {{"id", s.token}, {"piece", s.piece}, {"prob", s.prob}, {"candidates", c}};
}

int run_generate(const std::string& path, const std::string& prompt, const GenerateOptions& options, const CommonFlags& f) {
    int status = kExitBroken;
    auto session = load_or_report(path, f, false, status);
    if (!session) return status;
    // MLENS_RUN_PAUSE_MS=N (for the signal tests): wait N milliseconds between loading and
    // generating, so that a signal arrives while the worker holds the model.
    if (const char* pause = std::getenv("MLENS_RUN_PAUSE_MS")) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(pause)));
    if (!f.json) std::cout << "model: " << model_line_of(path) << "\n";
    size_t shown_steps = 0;
    auto print_step = [&](const GenerationStep& s) {
        std::string line = "#" + std::to_string(shown_steps++) + "  " + std::to_string(s.token) + "  " + shown(s.piece) +
            "  p=" + probability_text(s.prob) + "  top:";
        for (const TokenCandidate& c : s.candidates)
            line += " " + std::to_string(c.id) + " " + shown(c.piece) + " " + probability_text(c.prob) + ",";
        if (!s.candidates.empty()) line.pop_back();
        std::cout << line << "\n" << std::flush;
    };
    auto on_step = [&](const GenerationStream& batch) {
        if (!f.json)
            for (const GenerationStep& s : batch.steps) print_step(s);
    };
    auto result = session->run<GenerateOp>({prompt, options}, nullptr, on_step);
    if (f.log) print_log(session->log());
    if (!result) return fail(path, result.error());
    const GenerationResult& r = result->result;
    if (f.json) {
        nlohmann::json steps = nlohmann::json::array();
        for (const GenerationStep& s : r.steps) steps.push_back(step_json(s));
        const ModelFacts& m = session->facts();
        nlohmann::json model = {{"description", m.description}, {"n_params", m.n_params}, {"n_vocab", m.n_vocab},
                                {"n_layer", m.n_layer},         {"n_embd", m.n_embd},     {"n_ctx_train", m.n_ctx_train}};
        print_json_result({{"path", shown_path(path)},
                           {"model", model},
                           {"prompt_tokens", r.prompt_tokens},
                           {"steps", steps},
                           {"text", r.text},
                           {"stop", stop_reason_name(r.stop)},
                           {"prompt_ms", r.prompt_ms},
                           {"generation_ms", r.generation_ms},
                           {"prompt_tokens_per_s", r.prompt_tokens_per_s},
                           {"generation_tokens_per_s", r.generation_tokens_per_s}});
    } else {
        std::cout << "text: " << escape_for_display(r.text, 4000) << "\n";
        std::cout << "prompt: " << r.prompt_tokens.size() << " tokens, " << number_text(r.prompt_tokens_per_s, "%.1f")
                  << " tokens/s; generation: " << r.steps.size() << " tokens, " << number_text(r.generation_tokens_per_s, "%.1f")
                  << " tokens/s; stop: " << stop_reason_name(r.stop) << "\n";
    }
    return kExitOk;
}

int run_ab(const std::string& path_a, const std::string& path_b, const std::string& prompt, const AbOptions& options,
           const CommonFlags& f) {
    int status = kExitBroken;
    auto a = load_or_report(path_a, f, false, status);
    if (!a) return status;
    auto result = a->run<AbOp>({path_b, prompt, options});
    if (f.log) print_log(a->log());
    if (!result) return fail_comparison(result.error(), path_a, path_b);
    if (result->b_route.through_export)
        std::cerr << "note: " << escape_for_display(path_b) << ": " << escape_for_display(result->b_route.banner, 400) << "\n";
    const AbResult& r = result->result;
    const AbSummary& s = r.summary;
    if (f.json) {
        nlohmann::json positions = nlohmann::json::array();
        for (const AbPosition& p : r.positions)
            positions.push_back({{"index", p.index},
                                 {"token", p.token},
                                 {"generated", p.generated},
                                 {"kld", p.kld},
                                 {"top_a", p.top_a},
                                 {"top_b", p.top_b},
                                 {"prob_top_a", p.prob_top_a},
                                 {"prob_top_b", p.prob_top_b},
                                 {"topk_overlap", p.topk_overlap}});
        nlohmann::json summary = {{"positions", s.positions},
                                  {"mean_kld", s.mean_kld},
                                  {"median_kld", s.median_kld},
                                  {"p99_kld", s.p99_kld},
                                  {"max_kld", s.max_kld},
                                  {"same_top_share", s.same_top_share},
                                  {"mean_topk_overlap", s.mean_topk_overlap},
                                  {"first_divergence", s.first_divergence}};
        print_json_result({{"a", path_a},
                           {"b", path_b},
                           {"tokens", r.tokens},
                           {"n_prompt", r.n_prompt},
                           {"continuation", r.continuation},
                           {"positions", positions},
                           {"summary", summary}});
        return kExitOk;
    }
    std::vector<std::vector<std::string>> rows{{"pos", "token", "kld", "top A", "top B", "p(A)", "p(B)", "top-k overlap"}};
    for (size_t i = 0; i < r.positions.size(); ++i) {
        const AbPosition& p = r.positions[i];
        const std::string token = i < result->tokens.size() ? shown(result->tokens[i].piece) : std::string("?");
        rows.push_back({std::to_string(p.index) + (p.generated ? "*" : ""), token, significant(p.kld), shown(result->top_a[i]),
                        shown(result->top_b[i]), probability_text(p.prob_top_a), probability_text(p.prob_top_b),
                        number_text(p.topk_overlap, "%.2f")});
    }
    std::cout << "A: " << model_line_of(path_a) << "\nB: " << model_line_of(path_b) << "\n";
    print_table(rows);
    std::cout << "continuation of A: " << escape_for_display(r.continuation, 4000) << "\n";
    std::cout << "KLD mean " << significant(s.mean_kld) << ", median " << significant(s.median_kld) << ", p99 " << significant(s.p99_kld)
              << ", max " << significant(s.max_kld) << "; same top token " << percent_text(s.same_top_share) << " of "
              << s.positions << " positions; first divergence "
              << (s.first_divergence < 0 ? std::string("none") : std::to_string(s.first_divergence)) << "\n";
    return kExitOk;
}

int run_layers(const std::string& path, const std::string& prompt, const LayerCaptureOptions& options, const CommonFlags& f) {
    int status = kExitBroken;
    auto session = load_or_report(path, f, false, status);
    if (!session) return status;
    auto result = session->run<LayersOp>({prompt, options});
    if (f.log) print_log(session->log());
    if (!result) return fail(path, result.error());
    if (result->activations.empty()) return names_match_nothing(options.names);
    const LayerCaptureResult& r = *result;
    if (f.json) {
        nlohmann::json acts = nlohmann::json::array();
        for (const ActivationStats& s : r.activations)
            acts.push_back({{"tensor", s.tensor},
                            {"base", s.base},
                            {"layer", s.layer},
                            {"shape", s.shape},
                            {"count", s.count},
                            {"l2", s.l2},
                            {"min", s.min},
                            {"max", s.max},
                            {"mean", s.mean},
                            {"std", s.std}});
        print_json_result(
            {{"path", shown_path(path)}, {"tokens", r.tokens}, {"activations", acts}, {"capture_ms", r.capture_ms}, {"plain_ms", r.plain_ms}});
        return kExitOk;
    }
    std::vector<std::vector<std::string>> rows{{"tensor", "layer", "count", "l2", "min", "max", "mean", "std"}};
    for (const ActivationStats& s : r.activations)
        rows.push_back({s.tensor, std::to_string(s.layer), std::to_string(s.count), number_text(s.l2, "%.6g"), number_text(s.min, "%.6g"),
                        number_text(s.max, "%.6g"), number_text(s.mean, "%.6g"), number_text(s.std, "%.6g")});
    print_table(rows);
    std::cout << r.tokens.size() << " prompt tokens; decode with capture " << number_text(r.capture_ms, "%.2f") << " ms, without "
              << number_text(r.plain_ms, "%.2f") << " ms\n";
    return kExitOk;
}

}  // namespace

void add_infer_commands(CLI::App& app, int& exit_code) {
    {
        auto* cmd = app.add_subcommand("tokenize", "Tokenize text with llama.cpp's tokenizer of a GGUF");
        auto path = std::make_shared<std::string>();
        auto text = std::make_shared<std::string>();
        auto no_special = std::make_shared<bool>(false), no_bos = std::make_shared<bool>(false);
        auto chat = std::make_shared<bool>(false);
        auto f = std::make_shared<CommonFlags>();
        cmd->add_option("PATH", *path, "GGUF file (only the vocabulary is loaded)")->required();
        auto file = std::make_shared<std::string>();
        auto* text_option = cmd->add_option("TEXT", *text, "Text to tokenize (\"-\" or left out: read it from standard input)");
        cmd->add_option("--prompt-file", *file, "Tokenize the text of FILE (at most 1 MiB)")->excludes(text_option);
        cmd->add_flag("--no-special", *no_special, "Treat special-token text as plain text");
        cmd->add_flag("--no-bos", *no_bos, "Do not add BOS/EOS");
        cmd->add_flag("--chat", *chat, "Render a small conversation with the file's chat template instead");
        add_common(cmd, *f);
        cmd->callback([=, &exit_code] {
            // Like other text filters, no TEXT (and no file, and no --chat) reads standard input.
            const bool from_stdin = text_option->count() == 0 && file->empty() && !*chat;
            auto input = prompt_or_report(from_stdin ? std::string("-") : *text, *file);
            exit_code = input ? run_tokenize(*path, *input, *no_special, *no_bos, *chat, *f) : kExitBroken;
        });
    }
    {
        auto* cmd = app.add_subcommand("run", "Generate tokens with llama.cpp, with the top candidates of each step");
        auto path = std::make_shared<std::string>();
        auto prompt = std::make_shared<std::string>(), prompt_file = std::make_shared<std::string>();
        auto options = std::make_shared<GenerateOptions>();
        options->max_tokens = 16;
        auto f = std::make_shared<CommonFlags>();
        cmd->add_option("PATH", *path, "GGUF file")->required();
        add_prompt_options(cmd, *prompt, *prompt_file);
        cmd->add_option("-n,--tokens", options->max_tokens, "Tokens to generate (default 16)")->check(CLI::Range(1, 100000));
        cmd->add_option("--top-k", options->n_candidates, "Candidates shown per step (default 5)")->check(CLI::Range(0, 1000));
        cmd->add_option("--temp", options->sampling.temperature, "Sampling temperature (default 0: greedy)")
            ->check(CLI::Range(0.0f, 100.0f));
        cmd->add_option("--seed", options->sampling.seed, "Sampling seed (default 0)");
        cmd->add_option("--sample-top-k", options->sampling.top_k, "Sample among the K most likely (default 40)")
            ->check(CLI::Range(0, 1 << 20));
        cmd->add_option("--top-p", options->sampling.top_p, "Sample within probability mass P (default 0.95)")
            ->check(CLI::Range(0.0f, 1.0f));
        add_common(cmd, *f);
        cmd->callback([=, &exit_code] {
            require_prompt(*prompt, *prompt_file);
            auto input = prompt_or_report(*prompt, *prompt_file);
            exit_code = input ? run_generate(*path, *input, *options, *f) : kExitBroken;
        });
    }
    {
        auto* cmd = app.add_subcommand("ab", "Compare two models on the same prompt (KL divergence per position)");
        auto a = std::make_shared<std::string>(), b = std::make_shared<std::string>();
        auto prompt = std::make_shared<std::string>(), prompt_file = std::make_shared<std::string>();
        auto options = std::make_shared<AbOptions>();
        auto f = std::make_shared<CommonFlags>();
        cmd->add_option("A", *a, "Reference GGUF")->required();
        cmd->add_option("B", *b, "GGUF compared with A")->required();
        add_prompt_options(cmd, *prompt, *prompt_file);
        cmd->add_option("-n,--tokens", options->max_tokens, "Tokens of A's greedy continuation (default 16)")->check(CLI::Range(0, 100000));
        cmd->add_option("--top-k", options->top_k, "k of the top-k overlap (default 5)")->check(CLI::Range(1, 1000));
        add_common(cmd, *f);
        cmd->callback([=, &exit_code] {
            require_prompt(*prompt, *prompt_file);
            auto input = prompt_or_report(*prompt, *prompt_file);
            exit_code = input ? run_ab(*a, *b, *input, *options, *f) : kExitBroken;
        });
    }
    {
        auto* cmd = app.add_subcommand("layers", "Per-layer activation statistics for the last prompt token");
        auto path = std::make_shared<std::string>();
        auto prompt = std::make_shared<std::string>(), prompt_file = std::make_shared<std::string>();
        auto options = std::make_shared<LayerCaptureOptions>();
        options->keep_values = false;
        auto f = std::make_shared<CommonFlags>();
        cmd->add_option("PATH", *path, "GGUF file")->required();
        add_prompt_options(cmd, *prompt, *prompt_file);
        cmd->add_option("--names", options->names, "Graph tensor names to capture (default attn_norm,attn_out,ffn_inp,ffn_out,l_out)")
            ->delimiter(',');
        add_common(cmd, *f);
        cmd->callback([=, &exit_code] {
            require_prompt(*prompt, *prompt_file);
            auto input = prompt_or_report(*prompt, *prompt_file);
            exit_code = input ? run_layers(*path, *input, *options, *f) : kExitBroken;
        });
    }
}

}  // namespace mlens::cli
