#include "mlens/infer/text_token_parity.h"

#include <algorithm>

#include "mlens/analysis/hf_tokenizer.h"

namespace mlens {

namespace {

constexpr uint64_t kContextBefore = 4;

}  // namespace

Result<TextTokenParity> compare_text_tokenization(WorkerSession& session, const TokenizerJson& json, const std::string& text, JobContext* job) {
    auto hf = hf_encode(json.path, {text}, false);
    if (!hf) return hf.error();
    if (job && job->cancelled()) return cancelled_error("tokenizer parity");
    TokenizeOptions options;
    options.add_special = false;
    options.parse_special = true;
    auto llama = session.run<TokenizeOp>({text, options}, job);
    if (!llama) return llama.error();
    const HfEncoding& h = hf->encodings.front();
    TextTokenParity p;
    p.text_bytes = text.size();
    p.library = hf->library;
    p.llama_count = llama->size();
    p.hf_count = h.ids.size();
    const size_t common = std::min(llama->size(), h.ids.size());
    size_t k = 0;
    while (k < common && (*llama)[k].id == h.ids[k]) ++k;
    p.equal = k == llama->size() && k == h.ids.size();
    if (p.equal) return p;
    p.first_token = k;
    p.first_byte = k < h.ids.size() ? h.offsets[k].first : text.size();
    p.context_start = k > kContextBefore ? k - kContextBefore : 0;
    for (size_t i = p.context_start; i < llama->size() && p.llama_context.size() < kParityContextTokens; ++i)
        p.llama_context.push_back({(*llama)[i].id, (*llama)[i].piece});
    for (size_t i = p.context_start; i < h.ids.size() && p.hf_context.size() < kParityContextTokens; ++i) {
        const int32_t id = h.ids[i];
        const bool known = id >= 0 && static_cast<size_t>(id) < json.tokens.size() && json.tokens[static_cast<size_t>(id)];
        p.hf_context.push_back({id, known ? *json.tokens[static_cast<size_t>(id)] : std::string()});
    }
    return p;
}

Result<TextTokenParity> compare_text_tokenization_of(const std::string& model_path, const TokenizerJson& json, const std::string& text,
                                                     uint32_t worker_timeout_s, JobContext* job) {
    SessionOptions options;
    options.vocab_only = true;
    options.worker_timeout_s = worker_timeout_s;
    auto session = WorkerSession::load(model_path, options, job);
    if (!session) return session.error();
    return compare_text_tokenization(**session, json, text, job);
}

}  // namespace mlens
