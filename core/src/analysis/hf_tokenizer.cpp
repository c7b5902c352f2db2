#include "mlens/analysis/hf_tokenizer.h"

#include <nlohmann/json.hpp>

#include "mlens/text/utf8.h"
#include "mlens/util/helper_process.h"
#include "mlens/util/program_files.h"

namespace mlens {

namespace {

constexpr int kTimeoutMs = 120000;
constexpr size_t kOutputCap = 1024u << 20;

Result<HfEncoding> read_encoding(const nlohmann::json& e, size_t text_bytes) {
    HfEncoding out;
    if (!e.is_object() || !e.contains("ids") || !e["ids"].is_array() || !e.contains("offsets") || !e["offsets"].is_array() ||
        e["ids"].size() != e["offsets"].size())
        return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "mlens-tokenizer-json answered without ids and offsets"};
    out.ids.reserve(e["ids"].size());
    out.offsets.reserve(e["ids"].size());
    for (size_t i = 0; i < e["ids"].size(); ++i) {
        const nlohmann::json& id = e["ids"][i];
        const nlohmann::json& o = e["offsets"][i];
        if (!id.is_number_unsigned() || !o.is_array() || o.size() != 2 || !o[0].is_number_unsigned() || !o[1].is_number_unsigned())
            return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "mlens-tokenizer-json answered a malformed token"};
        const uint64_t start = o[0].get<uint64_t>(), end = o[1].get<uint64_t>();
        if (start > end || end > text_bytes) return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "mlens-tokenizer-json answered an offset outside the text"};
        out.ids.push_back(id.get<int32_t>());
        out.offsets.emplace_back(start, end);
    }
    return out;
}

}  // namespace

std::string hf_tokenizer_helper() {
    return helper_program("MLENS_TOKENIZER_JSON", "mlens-tokenizer-json", MLENS_TOKENIZER_JSON_INSTALLED, MLENS_TOKENIZER_JSON_BUILD_TREE);
}

Result<HfEncodings> hf_encode(const std::string& tokenizer_json, const std::vector<std::string>& texts, bool add_special_tokens) {
    for (const std::string& text : texts)
        if (!utf8_valid(text)) {
            const size_t bad = utf8_first_invalid(text);
            return Error{ErrorCode::E_INVALID_UTF8, "", bad,
                         "the text is not valid UTF-8 at byte " + std::to_string(bad) + " (Hugging Face's tokenizers takes only text)"};
        }
    const std::string helper = hf_tokenizer_helper();
    if (helper.empty())
        return Error{ErrorCode::E_NO_WORKER, "", std::nullopt,
                     "mlens-tokenizer-json, which reads tokenizer.json with Hugging Face's tokenizers, was not found next to this program"};
    const nlohmann::json request = {{"tokenizer", tokenizer_json}, {"texts", texts}, {"add_special_tokens", add_special_tokens}};
    auto run = run_helper_process(helper, {}, request.dump(), kTimeoutMs, kOutputCap);
    if (!run) return run.error();
    if (run->timed_out) return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "Hugging Face's tokenizers did not finish in 120 s"};
    if (run->too_large) return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "Hugging Face's tokenizers answered more than 1 GiB"};
    nlohmann::json reply;
    try {
        reply = nlohmann::json::parse(run->out);
    } catch (const nlohmann::json::exception&) {
        std::string err = run->err;
        while (!err.empty() && err.back() == '\n') err.pop_back();
        return Error{ErrorCode::E_NO_WORKER, "", std::nullopt, "mlens-tokenizer-json failed: " + (err.empty() ? "no answer" : err)};
    }
    if (reply.contains("error")) return Error{ErrorCode::E_INVALID, "", std::nullopt, reply["error"].is_string() ? reply["error"].get<std::string>() : "error"};
    if (run->exit_code != 0 || !reply.contains("encodings") || !reply["encodings"].is_array() || reply["encodings"].size() != texts.size())
        return Error{ErrorCode::E_NO_WORKER, "", std::nullopt, "mlens-tokenizer-json answered without one encoding per text"};
    HfEncodings out;
    out.library = reply.value("library", std::string());
    out.vocab_size = reply.value("vocab_size", uint64_t{0});
    for (size_t t = 0; t < texts.size(); ++t) {
        auto e = read_encoding(reply["encodings"][t], texts[t].size());
        if (!e) return e.error();
        out.encodings.push_back(std::move(*e));
    }
    return out;
}

}  // namespace mlens
