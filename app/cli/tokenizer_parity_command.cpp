// mlens tokenizer-parity MODEL TOKENIZER.json [--text FILE] [--json]: the GGUF vocabulary against
// a Hugging Face tokenizer.json (tokenizer_parity.h) — model, pre-tokenizer, tokens, token types,
// merges, scores, BOS/EOS — each difference with its id; with --text, the file tokenized by
// llama.cpp and by Hugging Face's tokenizers, with the first differing token and byte
// (text_token_parity.h). Exit status 0 when nothing differs, 1 when something does or on an error
// (2 for a usage error). --json prints one object (assets/schemas/mlens-tokenizer-parity.schema.json).
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/analysis/tokenizer_parity.h"
#include "mlens/infer/text_token_parity.h"
#include "mlens/io/text_file.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

struct ParityArguments {
    std::string model, tokenizer_json, text_file;
    bool json = false;
    uint32_t worker_timeout = 120;
};

nlohmann::json differences_json(const TokenizerParity& p) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParityDifference& d : p.differences) {
        nlohmann::json j = {{"kind", parity_kind_name(d.kind)}, {"gguf", d.gguf}, {"tokenizer_json", d.json}, {"message", d.message}};
        j["id"] = d.id ? nlohmann::json(*d.id) : nlohmann::json(nullptr);
        list.push_back(std::move(j));
    }
    return list;
}

nlohmann::json totals_json(const TokenizerParity& p) {
    nlohmann::json t = nlohmann::json::object();
    for (size_t k = 0; k < kParityKinds; ++k) t[parity_kind_name(static_cast<ParityKind>(k))] = p.total[k];
    return t;
}

nlohmann::json tokens_json(const std::vector<ParityToken>& tokens) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParityToken& t : tokens) list.push_back({{"id", t.id}, {"piece", t.piece}, {"bytes", hex_bytes(t.piece)}});
    return list;
}

nlohmann::json text_json(const TextTokenParity& t) {
    nlohmann::json j = {{"bytes", t.text_bytes}, {"llama_tokens", t.llama_count}, {"tokenizers_tokens", t.hf_count}, {"equal", t.equal}};
    j["first_token"] = t.first_token ? nlohmann::json(*t.first_token) : nlohmann::json(nullptr);
    j["first_byte"] = t.first_byte ? nlohmann::json(*t.first_byte) : nlohmann::json(nullptr);
    j["context_start"] = t.context_start;
    j["llama_context"] = tokens_json(t.llama_context);
    j["tokenizers_context"] = tokens_json(t.hf_context);
    return j;
}

nlohmann::json report_json(const ParityArguments& a, const TokenizerParityCheck& c, const std::optional<TextTokenParity>& text) {
    const TokenizerParity& p = c.parity;
    nlohmann::json j = {{"path", shown_path(a.model)},
                        {"tokenizer_json", a.tokenizer_json},
                        {"library", c.library},
                        {"gguf", {{"model", p.gguf_model}, {"pre", p.gguf_pre}, {"tokens", p.gguf_tokens}, {"merges", p.gguf_merges}}},
                        {"json", {{"model", p.json_model}, {"implies_model", p.expected_model}, {"tokens", p.json_tokens},
                                  {"added", p.json_added}, {"merges", p.json_merges}}},
                        {"pre_tokenizer", {{"checked", p.pre_checked}, {"hash", p.pre_hash}, {"names", p.pre_names}, {"note", c.pre_note}}},
                        {"differences_total", p.difference_count()},
                        {"totals", totals_json(p)},
                        {"differences", differences_json(p)}};
    j["text"] = text ? text_json(*text) : nlohmann::json(nullptr);
    return j;
}

std::string shown_piece(const std::string& piece) { return "'" + escape_for_display(piece, 40) + "'"; }

void print_context(const char* who, const std::vector<ParityToken>& tokens) {
    std::string line = std::string(who) + ":";
    for (const ParityToken& t : tokens) line += " " + std::to_string(t.id) + "=" + shown_piece(t.piece);
    std::cout << line << '\n';
}

void print_report(const ParityArguments& a, const TokenizerParityCheck& c, const std::optional<TextTokenParity>& text) {
    const TokenizerParity& p = c.parity;
    std::cout << "GGUF: " << escape_for_display(shown_path(a.model)) << '\n'
              << "  model " << (p.gguf_model.empty() ? "(none)" : p.gguf_model) << ", pre " << (p.gguf_pre.empty() ? "(none)" : p.gguf_pre) << ", "
              << plural(p.gguf_tokens, "token") << ", " << plural(p.gguf_merges, "merge") << '\n'
              << "tokenizer.json: " << escape_for_display(a.tokenizer_json) << '\n'
              << "  " << (p.json_model.empty() ? "no model type" : p.json_model) << ", " << plural(p.json_tokens, "token") << " ("
              << p.json_added << " added), " << plural(p.json_merges, "merge") << '\n';
    if (p.pre_checked)
        std::cout << "  pre-tokenizer: "
                  << (p.pre_names.empty() ? "unknown to the pinned converter" : "\"" + p.pre_names.back() + "\" by the converter's check text")
                  << " (" << c.library << ")\n";
    else if (!c.pre_note.empty())
        std::cout << "  " << escape_for_display(c.pre_note) << '\n';
    const uint64_t n = p.difference_count();
    std::string totals;
    for (size_t k = 0; k < kParityKinds; ++k)
        if (p.total[k]) totals += (totals.empty() ? "" : ", ") + std::to_string(p.total[k]) + " " + parity_kind_name(static_cast<ParityKind>(k));
    std::cout << (n == 0 ? std::string("no differences") : plural(n, "difference") + ": " + totals) << '\n';
    if (n) {
        std::vector<std::vector<std::string>> rows{{"KIND", "ID", "GGUF", "TOKENIZER.JSON", "WHY"}};
        for (const ParityDifference& d : p.differences)
            rows.push_back({parity_kind_name(d.kind), d.id ? std::to_string(*d.id) : "", escape_for_display(d.gguf, 40), escape_for_display(d.json, 40),
                            escape_for_display(d.message, 300)});
        print_table(rows);
        if (p.differences.size() < n) std::cout << "(" << p.differences.size() << " of " << n << " listed; at most " << kMaxListedPerKind << " per kind)\n";
    }
    if (!text) return;
    std::cout << "text: " << plural(text->text_bytes, "byte") << "; llama.cpp " << plural(text->llama_count, "token") << ", " << c.library << ' '
              << plural(text->hf_count, "token") << '\n';
    if (text->equal) {
        std::cout << "the same ids on both sides\n";
        return;
    }
    std::cout << "first difference at token " << *text->first_token << " (byte " << *text->first_byte << "), tokens from " << text->context_start
              << ":\n";
    print_context("  llama.cpp ", text->llama_context);
    print_context("  tokenizers", text->hf_context);
}

int run(const ParityArguments& a) {
    auto model = open_or_report(a.model);
    if (!model) return kExitBroken;
    auto check = check_tokenizer_parity(*model, a.tokenizer_json);
    if (!check) return fail(a.tokenizer_json, check.error());
    std::optional<TextTokenParity> text;
    if (!a.text_file.empty()) {
        auto content = read_text_file(a.text_file, kMaxCorpusTextBytes);
        if (!content) return fail(a.text_file, content.error());
        auto compared = compare_text_tokenization_of(a.model, check->json, *content, a.worker_timeout);
        if (!compared) {
            const ErrorCode code = compared.error().code;
            return fail(code == ErrorCode::E_INVALID_UTF8 ? a.text_file : code == ErrorCode::E_INVALID ? a.tokenizer_json : a.model,
                        compared.error());
        }
        text = std::move(*compared);
    }
    if (a.json)
        print_json_result(report_json(a, *check, text));
    else
        print_report(a, *check, text);
    return check->parity.difference_count() == 0 && (!text || text->equal) ? kExitOk : kExitBroken;
}

}  // namespace

void add_tokenizer_parity_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tokenizer-parity", "Compare a GGUF's vocabulary with a Hugging Face tokenizer.json, and how each tokenizes a text");
    auto a = std::make_shared<ParityArguments>();
    cmd->add_option("MODEL", a->model, "GGUF file or Ollama model")->required();
    cmd->add_option("TOKENIZER", a->tokenizer_json, "The Hugging Face tokenizer.json to compare with")->required();
    cmd->add_option("--text", a->text_file, "Also tokenize this UTF-8 file with llama.cpp and with Hugging Face's tokenizers and compare the ids");
    cmd->add_flag("--json", a->json, "Print JSON");
    add_worker_timeout(cmd, a->worker_timeout);
    cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace mlens::cli
