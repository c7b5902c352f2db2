// mlens kld against llama-perplexity of the pinned llama.cpp (built by third_party/setup.sh):
// the same demo models, text, context and threads; every figure llama-perplexity prints must
// agree, and the base-logits files both write must be the same bytes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "corpus_text.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr int kCtx = 128;
constexpr int kChunks = 10;

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// The figures of llama-perplexity's final statistics, keyed by their label, as printed.
std::map<std::string, std::string> perplexity_figures(const std::string& output) {
    static const std::vector<std::pair<std::string, std::string>> labels = {
        {"ppl_b", "Mean PPL(Q)"},    {"ppl_a", "Mean PPL(base)"}, {"ln_ratio", "Mean ln(PPL(Q)/PPL(base))"},
        {"kld_mean", "Mean    KLD"}, {"kld_max", "Maximum KLD"},  {"kld_p999", "99.9%   KLD"},
        {"kld_p99", "99.0%   KLD"},  {"kld_p90", "90.0%   KLD"},  {"kld_median", "Median  KLD"},
        {"p_rms", "RMS Δp    "},     {"same_top", "Same top p"}};
    std::map<std::string, std::string> out;
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line))
        for (const auto& [key, label] : labels)
            if (line.starts_with(label)) {
                std::smatch m;
                const std::string rest = line.substr(label.size());
                // "Mean PPL(Q)" also begins "Mean PPL(Q)/PPL(base)": the label must end at the colon.
                if (rest.find_first_not_of(' ') == std::string::npos || rest[rest.find_first_not_of(' ')] != ':') continue;
                if (std::regex_search(rest, m, std::regex(R"(-?[0-9]+\.[0-9]+)"))) out[key] = m.str();
            }
    return out;
}

// `ours` agrees with llama-perplexity's printed `text` within 1e-4 relative, or within the
// rounding of the digits it prints when those are fewer.
void check_figure(const std::string& name, double ours, const std::string& text) {
    const double theirs = std::stod(text);
    const size_t dot = text.find('.');
    const int decimals = static_cast<int>(text.size() - dot - 1);
    const double print_step = std::pow(10.0, -decimals);
    INFO(name << ": ours " << ours << ", llama-perplexity " << text);
    CHECK(std::fabs(ours - theirs) <= std::max(1e-4 * std::fabs(theirs), 0.5 * print_step * 1.0001));
}

// How both tools are run: a context, llama-perplexity's batch flags (empty: its defaults, -b 2048
// -ub 512) and the same as mlens flags, and a chunk limit (-1: every chunk of the text).
struct Setting {
    int ctx = kCtx;
    std::vector<std::string> batch;  // e.g. {"-b", "128"}
    int chunks = kChunks;

    std::string perplexity_flags() const {
        std::string out = " -c " + std::to_string(ctx) + (chunks > 0 ? " --chunks " + std::to_string(chunks) : std::string());
        for (const std::string& b : batch) out += " " + b;
        return out;
    }
    // The batch flags as mlens spells them.
    std::vector<std::string> mlens_batch() const {
        std::vector<std::string> out;
        for (const std::string& b : batch) out.push_back(b == "-b" ? "--batch" : b == "-ub" ? "--ubatch" : b);
        return out;
    }
    std::vector<std::string> mlens_flags() const {
        std::vector<std::string> out = {"--ctx", std::to_string(ctx)};
        if (chunks > 0) out.insert(out.end(), {"--chunks", std::to_string(chunks)});
        const std::vector<std::string> b = mlens_batch();
        out.insert(out.end(), b.begin(), b.end());
        return out;
    }
};

void check_against(const nlohmann::json& ours, const std::map<std::string, std::string>& theirs, const Setting& setting) {
    REQUIRE(theirs.size() == 11);
    const nlohmann::json& o = ours["overall"];
    check_figure("PPL(B)", o["ppl_b"].get<double>(), theirs.at("ppl_b"));
    check_figure("PPL(A)", o["ppl_a"].get<double>(), theirs.at("ppl_a"));
    check_figure("ln ratio", o["ln_ppl_ratio"].get<double>(), theirs.at("ln_ratio"));
    check_figure("mean KLD", o["kld_mean"].get<double>(), theirs.at("kld_mean"));
    check_figure("max KLD", ours["kld"]["max"].get<double>(), theirs.at("kld_max"));
    check_figure("99.9% KLD", ours["kld"]["p99_9"].get<double>(), theirs.at("kld_p999"));
    check_figure("99% KLD", ours["kld"]["p99"].get<double>(), theirs.at("kld_p99"));
    check_figure("90% KLD", ours["kld"]["p90"].get<double>(), theirs.at("kld_p90"));
    check_figure("median KLD", ours["kld"]["median"].get<double>(), theirs.at("kld_median"));
    check_figure("RMS dp %", 100 * o["p_diff_rms"].get<double>(), theirs.at("p_rms"));
    // The count of positions with the same top token, exactly: with N < 10^5 positions the
    // printed share (3 decimals of a percent) names one count only.
    const auto n = o["positions"].get<uint64_t>();
    REQUIRE(n == ours["n_chunk"].get<uint64_t>() * static_cast<uint64_t>(setting.ctx - 1 - setting.ctx / 2));
    if (setting.chunks > 0) REQUIRE(ours["n_chunk"].get<int>() == setting.chunks);
    const double share = std::stod(theirs.at("same_top")) / 100.0;
    CHECK(o["same_top_count"].get<uint64_t>() == static_cast<uint64_t>(std::llround(share * static_cast<double>(n))));
}

std::string perplexity_command(const std::string& model, const Setting& setting, const std::string& rest) {
    return test::llama_perplexity_path() + " -m " + model + setting.perplexity_flags() + " -t 2 " + rest;
}

// A corpus text of `words` words written to `name` in `dir`; returns its path.
std::string corpus_file(const test::TempDir& dir, const std::string& name, size_t words) {
    const std::string path = dir.file(name);
    const std::string body = test::corpus_text(words);
    test::write_whole_file(path, std::vector<uint8_t>(body.begin(), body.end()));
    return path;
}

// llama-perplexity --kl-divergence of `model` against `base`, run again when its statistics were
// lost at exit (run_llama_tool).
test::ShellRun run_kl_divergence(const std::string& model, const std::string& base, const Setting& setting) {
    return test::run_llama_tool(perplexity_command(model, setting, "--kl-divergence-base " + base + " --kl-divergence"), "Same top p");
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Both ways round on one setting: mlens kld A B --save-base against llama-perplexity's two passes
// (the base files the same bytes, every figure equal), then mlens kld --base on llama-perplexity's
// base file against its --kl-divergence pass.
void check_setting(const Setting& setting) {
    test::TempDir dir;
    const std::string text = corpus_file(dir, "text.txt", 1800);
    const std::string base = dir.file("perplexity-base.bin");
    test::ShellRun base_run =
        test::run_shell(perplexity_command(demo("tiny-llama-f32.gguf"), setting, "-f " + text + " --kl-divergence-base " + base));
    INFO(base_run.output);
    REQUIRE(base_run.exit_status == 0);

    const std::string ours_base = dir.file("mlens-base.bin");
    nlohmann::json ours = test::run_mlens_json(with({"kld", demo("tiny-llama-f32.gguf"), demo("tiny-llama-q4_0.gguf"), "--text", text,
                                                     "--threads", "2", "--save-base", ours_base, "--json"},
                                                    setting.mlens_flags()));
    test::ShellRun theirs = run_kl_divergence(demo("tiny-llama-q4_0.gguf"), base, setting);
    INFO(theirs.output);
    REQUIRE(theirs.exit_status == 0);
    check_against(ours, perplexity_figures(theirs.output), setting);
    // The same logits quantized the same way: the two base files are the same bytes.
    CHECK(test::first_difference(test::read_whole_file(ours_base), test::read_whole_file(base)) == -1);
    CHECK(ours["positions"]["kld"].size() == ours["overall"]["positions"].get<size_t>());
    CHECK(ours["chunks"].size() == ours["n_chunk"].get<size_t>());

    // B against llama-perplexity's own base file: Q8_0 against F32.
    // The base file holds the context and the chunks: only the batch flags are repeated.
    nlohmann::json from_base = test::run_mlens_json(
        with({"kld", "--base", base, demo("tiny-llama-q8_0.gguf"), "--threads", "2", "--json"}, setting.mlens_batch()));
    test::ShellRun theirs_q8 = run_kl_divergence(demo("tiny-llama-q8_0.gguf"), base, setting);
    INFO(theirs_q8.output);
    REQUIRE(theirs_q8.exit_status == 0);
    check_against(from_base, perplexity_figures(theirs_q8.output), setting);
    // Q8_0 stays closer to F32 than Q4_0 does.
    CHECK(from_base["overall"]["kld_mean"].get<double>() < ours["overall"]["kld_mean"].get<double>());
}

}  // namespace

TEST_CASE("mlens kld agrees with llama-perplexity --kl-divergence on the demo models", "[kld][infer][cli]") {
    // llama-perplexity's default batch of 2048 tokens: 16 chunks of 128 decoded together (10 here).
    SECTION("-c 128, default batches, 10 chunks") { check_setting({}); }
    // Every chunk of the text: a group of 16 chunks and a shorter last group.
    SECTION("-c 128, default batches, every chunk") { check_setting({kCtx, {}, -1}); }
    // One chunk per batch, as llama-perplexity -b 128.
    SECTION("-c 128 -b 128") { check_setting({kCtx, {"-b", "128"}, kChunks}); }
    // A chunk longer than the batch: two passes per chunk, with a micro-batch of 64.
    SECTION("-c 256 -b 128 -ub 64") { check_setting({256, {"-b", "128", "-ub", "64"}, 5}); }
    // -c 256 with the default batch of 2048 tokens: 8 chunks decoded together.
    SECTION("-c 256, default batches") { check_setting({256, {}, 5}); }
}

TEST_CASE("mlens ppl prints llama-perplexity's running and final perplexity", "[kld][ppl][infer][cli]") {
    test::TempDir dir;
    const std::string text = corpus_file(dir, "text.txt", 1800);
    for (const Setting& setting : {Setting{kCtx, {}, -1}, Setting{kCtx, {"-b", "128"}, -1}, Setting{256, {}, -1},
                                   Setting{256, {"-b", "128", "-ub", "64"}, -1}}) {
        INFO(setting.perplexity_flags());
        test::ShellRun theirs =
            test::run_llama_tool(perplexity_command(demo("tiny-llama-q4_0.gguf"), setting, "-f " + text), "Final estimate");
        INFO(theirs.output);
        REQUIRE(theirs.exit_status == 0);
        test::CliRun ours =
            test::run_mlens(with({"ppl", demo("tiny-llama-q4_0.gguf"), "--text", text, "--threads", "2"}, setting.mlens_flags()));
        INFO(ours.err);
        REQUIRE(ours.exit_status == 0);
        // The final estimate, digit for digit.
        const std::regex final_line(R"(Final estimate: PPL = [0-9.]+ \+/- [0-9.]+)");
        std::smatch theirs_final, ours_final;
        REQUIRE(std::regex_search(theirs.output, theirs_final, final_line));
        REQUIRE(std::regex_search(ours.out, ours_final, final_line));
        CHECK(ours_final.str() == theirs_final.str());
        // The running perplexity after each chunk: llama-perplexity's "[i]x," and ours "[i] x".
        std::vector<std::string> theirs_running, ours_running;
        const std::regex running(R"(\[([0-9]+)\] ?([0-9]+\.[0-9]{4}))");
        for (std::sregex_iterator it(theirs.output.begin(), theirs.output.end(), running), end; it != end; ++it)
            theirs_running.push_back((*it)[1].str() + " " + (*it)[2].str());
        for (std::sregex_iterator it(ours.out.begin(), ours.out.end(), running), end; it != end; ++it)
            ours_running.push_back((*it)[1].str() + " " + (*it)[2].str());
        CHECK(ours_running.size() > 4);
        CHECK(ours_running == theirs_running);
    }
}

TEST_CASE("mlens kld refuses a text shorter than two contexts and a base file that is not one", "[kld][infer][cli]") {
    test::TempDir dir;
    const std::string text = corpus_file(dir, "short.txt", 40);
    test::CliRun r = test::run_mlens({"kld", demo("tiny-llama-f32.gguf"), demo("tiny-llama-q8_0.gguf"), "--text", text, "--ctx", "128"});
    CHECK(r.exit_status == 1);
    CHECK(r.err.find("E_TEXT_TOO_SHORT") != std::string::npos);
    test::CliRun b = test::run_mlens({"kld", "--base", text, demo("tiny-llama-q8_0.gguf")});
    CHECK(b.exit_status == 1);
    CHECK(b.err.find("E_KLD_BASE") != std::string::npos);
}

TEST_CASE("mlens kld refuses a base file whose rows hold no finite value", "[kld][infer][cli]") {
    test::TempDir dir;
    const std::string text = corpus_file(dir, "text.txt", 40);
    const std::string base = dir.file("base.bin");
    test::CliRun saved = test::run_mlens({"kld", demo("tiny-llama-f32.gguf"), demo("tiny-llama-q8_0.gguf"), "--text", text, "--ctx", "16",
                                          "--chunks", "1", "--threads", "1", "--save-base", base});
    INFO(saved.err);
    REQUIRE(saved.exit_status == 0);
    // The first row's scale (header 20 bytes, then 16 tokens of 4 bytes) becomes a NaN.
    std::vector<uint8_t> bytes = test::read_whole_file(base);
    const size_t first_row = 20 + 16 * 4;
    const float nan = std::nanf("");
    std::memcpy(bytes.data() + first_row, &nan, sizeof nan);
    test::write_whole_file(base, bytes);
    for (bool json : {false, true}) {
        std::vector<std::string> args = {"kld", "--base", base, demo("tiny-llama-q8_0.gguf"), "--threads", "1"};
        if (json) args.push_back("--json");
        test::CliRun r = test::run_mlens(args);
        CHECK(r.exit_status == 1);
        CHECK(r.err.find("E_KLD_BASE") != std::string::npos);
        CHECK(r.err.find("chunk 0, row 0 holds no finite log-probabilities") != std::string::npos);
        if (json) {
            // One error object, no figures.
            const nlohmann::json out = nlohmann::json::parse(r.out);
            CHECK(out.size() == 1);
            CHECK(out.at("error").at("code") == "E_KLD_BASE");
        } else {
            CHECK(r.out.find("nan") == std::string::npos);
        }
    }
}
