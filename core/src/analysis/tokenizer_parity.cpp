#include "mlens/analysis/tokenizer_parity.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "analysis/llama_pre_hashes.h"
#include "mlens/analysis/hf_tokenizer.h"
#include "mlens/ollama/blob_hash.h"

namespace mlens {

namespace {

// llama_token_type as the converter writes it.
constexpr int64_t kUnused = 5, kControl = 3, kUserDefined = 4;

const char* type_name(int64_t t) {
    switch (t) {
        case 1: return "NORMAL";
        case 2: return "UNKNOWN";
        case kControl: return "CONTROL";
        case kUserDefined: return "USER_DEFINED";
        case kUnused: return "UNUSED";
        case 6: return "BYTE";
        default: return "UNDEFINED";
    }
}

struct GgufVocab {
    std::vector<std::string> tokens, merges;
    std::vector<int64_t> types;
    std::vector<double> scores;
};

std::string string_of(const Model& m, std::string_view key) {
    const MetadataEntry* e = m.find(key);
    return e && e->value.is_string() ? e->value.string_value() : std::string();
}

std::optional<int64_t> int_of(const Model& m, std::string_view key) {
    const MetadataEntry* e = m.find(key);
    if (!e || e->value.is_array() || e->value.is_string()) return std::nullopt;
    return e->value.scalar.as_int();
}

std::vector<std::string> strings_of(const Model& m, std::string_view key) {
    std::vector<std::string> out;
    const MetadataEntry* e = m.find(key);
    if (!e || !e->value.array || e->value.array->element_type != ValueType::string) return out;
    out.reserve(static_cast<size_t>(e->value.array->count));
    e->value.array->for_each_string(0, UINT64_MAX, [&](uint64_t, std::string_view s) {
        out.emplace_back(s);
        return true;
    });
    return out;
}

template <typename T, typename Get>
std::vector<T> numbers_of(const Model& m, std::string_view key, Get get) {
    std::vector<T> out;
    const MetadataEntry* e = m.find(key);
    if (!e || !e->value.array || e->value.array->element_type == ValueType::string || e->value.array->element_type == ValueType::array) return out;
    out.reserve(static_cast<size_t>(e->value.array->count));
    for (uint64_t i = 0; i < e->value.array->count; ++i) out.push_back(get(e->value.array->scalar_at(i)));
    return out;
}

GgufVocab read_vocab(const Model& m) {
    GgufVocab v;
    v.tokens = strings_of(m, "tokenizer.ggml.tokens");
    v.merges = strings_of(m, "tokenizer.ggml.merges");
    v.types = numbers_of<int64_t>(m, "tokenizer.ggml.token_type", [](const Scalar& s) { return s.as_int(); });
    v.scores = numbers_of<double>(m, "tokenizer.ggml.scores", [](const Scalar& s) { return s.as_double(); });
    return v;
}

bool looks_special(std::string_view t) {
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || (t.size() >= 4 && t.starts_with("<|") && t.ends_with("|>"));
}

// A score as the float both files mean, with the digits that round-trip it.
std::string float_text(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(static_cast<float>(v)));
    return buffer;
}

bool has(const std::vector<std::string>& list, std::string_view s) { return std::find(list.begin(), list.end(), s) != list.end(); }

std::string implied_model(const TokenizerJson& j) {
    if (j.model_type == "BPE") {
        if (has(j.pre_tokenizer, "ByteLevel")) return "gpt2";
        if (j.byte_fallback) return "llama";
        return "";
    }
    if (j.model_type == "Unigram") return "t5";
    if (j.model_type == "WordPiece") return "bert";
    return "";
}

std::string ids_text(const std::vector<int32_t>& ids) {
    std::string s = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(ids[i]);
    }
    return s + "]";
}

class Collector {
public:
    explicit Collector(TokenizerParity& p) : m_p(p) {}
    void add(ParityKind kind, std::optional<int64_t> id, std::string gguf, std::string json, std::string message) {
        const size_t k = static_cast<size_t>(kind);
        if (m_p.total[k]++ < kMaxListedPerKind) m_p.differences.push_back({kind, id, std::move(gguf), std::move(json), std::move(message)});
    }

private:
    TokenizerParity& m_p;
};

void compare_tokens(const GgufVocab& g, const TokenizerJson& j, Collector& c) {
    const size_t n = std::max(g.tokens.size(), j.tokens.size());
    for (size_t id = 0; id < n; ++id) {
        const std::string* gt = id < g.tokens.size() ? &g.tokens[id] : nullptr;
        const std::string* jt = id < j.tokens.size() && j.tokens[id] ? &*j.tokens[id] : nullptr;
        const int64_t type = id < g.types.size() ? g.types[id] : 0;
        if (gt && !jt) {
            if (type == kUnused && *gt == "[PAD" + std::to_string(id) + "]") continue;
            c.add(ParityKind::token_missing, static_cast<int64_t>(id), *gt, "", "only the GGUF has this id");
        } else if (!gt && jt) {
            c.add(ParityKind::token_missing, static_cast<int64_t>(id), "", *jt, "only tokenizer.json has this id");
        } else if (gt && jt && *gt != *jt) {
            c.add(ParityKind::token, static_cast<int64_t>(id), *gt, *jt, "the token strings differ");
        }
    }
}

void compare_types(const GgufVocab& g, const TokenizerJson& j, Collector& c) {
    std::vector<const TokenizerJsonAdded*> added_by_id(g.types.size(), nullptr);
    for (const TokenizerJsonAdded& a : j.added) {
        if (a.id < 0 || static_cast<size_t>(a.id) >= g.types.size()) continue;
        added_by_id[static_cast<size_t>(a.id)] = &a;
        const int64_t expected = a.special || looks_special(a.content) ? kControl : kUserDefined;
        const int64_t actual = g.types[static_cast<size_t>(a.id)];
        if (actual != expected)
            c.add(ParityKind::token_type, a.id, type_name(actual), std::string(type_name(expected)) + (a.special ? " (special)" : " (added)"),
                  "tokenizer.json adds \"" + a.content + "\"" + (a.special ? " as special" : " as not special") + ": the converter writes " +
                      type_name(expected) + ", the GGUF has " + type_name(actual));
    }
    for (size_t id = 0; id < g.types.size(); ++id) {
        const int64_t t = g.types[id];
        if ((t == kControl || t == kUserDefined) && !added_by_id[id] && id < j.tokens.size() && j.tokens[id])
            c.add(ParityKind::token_type, static_cast<int64_t>(id), type_name(t), "not added",
                  std::string("the GGUF marks it ") + type_name(t) + "; tokenizer.json does not list it among added_tokens");
    }
}

void compare_merges(const GgufVocab& g, const TokenizerJson& j, Collector& c) {
    std::vector<std::string> json_merges;
    json_merges.reserve(j.merges.size());
    for (const auto& [a, b] : j.merges) json_merges.push_back(a + " " + b);
    std::unordered_map<std::string_view, size_t> gguf_rank, json_rank;
    for (size_t i = 0; i < g.merges.size(); ++i) gguf_rank.emplace(g.merges[i], i);
    for (size_t i = 0; i < json_merges.size(); ++i) json_rank.emplace(json_merges[i], i);
    bool same_set = true;
    for (size_t i = 0; i < g.merges.size(); ++i)
        if (!json_rank.contains(g.merges[i])) {
            same_set = false;
            c.add(ParityKind::merge, static_cast<int64_t>(i), g.merges[i], "", "only the GGUF has this merge (rank " + std::to_string(i) + ")");
        }
    for (size_t i = 0; i < json_merges.size(); ++i)
        if (!gguf_rank.contains(json_merges[i])) {
            same_set = false;
            c.add(ParityKind::merge, static_cast<int64_t>(i), "", json_merges[i], "only tokenizer.json has this merge (rank " + std::to_string(i) + ")");
        }
    if (!same_set) return;
    for (size_t i = 0; i < g.merges.size(); ++i)
        if (g.merges[i] != json_merges[i]) {
            c.add(ParityKind::merge, static_cast<int64_t>(i), g.merges[i], json_merges[i],
                  "the same merges in another order: from rank " + std::to_string(i) + " on, they apply in a different order");
            return;
        }
}

void compare_scores(const GgufVocab& g, const TokenizerJson& j, Collector& c) {
    if (j.model_type != "Unigram") return;
    const size_t n = std::min(g.scores.size(), j.scores.size());
    for (size_t id = 0; id < n; ++id)
        if (static_cast<float>(g.scores[id]) != static_cast<float>(j.scores[id]))
            c.add(ParityKind::score, static_cast<int64_t>(id), float_text(g.scores[id]), float_text(j.scores[id]), "the Unigram scores differ");
}

void compare_special(const Model& m, const TokenizerJson& j, Collector& c) {
    struct Side {
        const char* what;
        const char* add_key;
        const char* id_key;
        const std::vector<TokenizerJsonSpecial>& json;
        const char* where;
    };
    for (const Side& s : {Side{"BOS", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id", j.post_prefix, "before"},
                          Side{"EOS", "tokenizer.ggml.add_eos_token", "tokenizer.ggml.eos_token_id", j.post_suffix, "after"}}) {
        const std::optional<int64_t> adds = int_of(m, s.add_key);
        const std::optional<int64_t> id = int_of(m, s.id_key);
        const bool json_adds = !s.json.empty();
        const std::string json_text = json_adds ? s.json.front().content + " (" + std::to_string(s.json.front().id) + ")" : "none";
        if (adds && (*adds != 0) != json_adds) {
            c.add(ParityKind::special, json_adds ? std::optional<int64_t>(s.json.front().id) : id, *adds ? "adds " + std::string(s.what) : "adds none",
                  json_adds ? "adds " + json_text : "adds none",
                  json_adds ? std::string("tokenizer.json's post-processor puts ") + json_text + " " + s.where + " the text; the GGUF's " + s.add_key +
                                  " is false, so llama.cpp adds no " + s.what
                            : std::string("the GGUF's ") + s.add_key + " is true, so llama.cpp adds " + s.what +
                                  "; tokenizer.json's post-processor adds none");
        } else if (adds && *adds && json_adds && id && *id != s.json.front().id) {
            c.add(ParityKind::special, *id, std::to_string(*id), json_text,
                  std::string("both add ") + s.what + ", but the GGUF's " + s.id_key + " is " + std::to_string(*id) + " and tokenizer.json's is " +
                      std::to_string(s.json.front().id));
        }
    }
}

void compare_pre(const std::vector<int32_t>& check_ids, TokenizerParity& p, Collector& c) {
    p.pre_checked = true;
    p.pre_hash = sha256_hex_digest(ids_text(check_ids));
    for (size_t i = 0; i < kLlamaPreHashCount; ++i)
        if (p.pre_hash == kLlamaPreHashes[i].sha256) p.pre_names.push_back(kLlamaPreHashes[i].name);
    if (p.pre_names.empty()) {
        c.add(ParityKind::pre_tokenizer, std::nullopt, p.gguf_pre, "unknown (chkhsh " + p.pre_hash + ")",
              "the pinned llama.cpp's converter does not know this pre-tokenizer: it would refuse to convert this tokenizer.json");
        return;
    }
    if (!has(p.pre_names, p.gguf_pre))
        c.add(ParityKind::pre_tokenizer, std::nullopt, p.gguf_pre.empty() ? "(none)" : p.gguf_pre, p.pre_names.back(),
              "tokenizer.json pre-tokenizes as \"" + p.pre_names.back() + "\" (chkhsh " + p.pre_hash.substr(0, 12) + "…); the GGUF's tokenizer.ggml.pre is " +
                  (p.gguf_pre.empty() ? std::string("missing") : "\"" + p.gguf_pre + "\""));
}

}  // namespace

const char* parity_kind_name(ParityKind k) {
    switch (k) {
        case ParityKind::model: return "model";
        case ParityKind::pre_tokenizer: return "pre_tokenizer";
        case ParityKind::token: return "token";
        case ParityKind::token_missing: return "token_missing";
        case ParityKind::token_type: return "token_type";
        case ParityKind::merge: return "merge";
        case ParityKind::score: return "score";
        case ParityKind::special: return "special";
    }
    return "token";
}

uint64_t TokenizerParity::difference_count() const {
    uint64_t n = 0;
    for (uint64_t t : total) n += t;
    return n;
}

std::string_view llama_pre_check_text() { return kLlamaPreCheckText; }

TokenizerParity compare_tokenizers(const Model& gguf, const TokenizerJson& json, const std::optional<std::vector<int32_t>>& check_ids) {
    TokenizerParity p;
    Collector c(p);
    const GgufVocab g = read_vocab(gguf);
    p.gguf_model = string_of(gguf, "tokenizer.ggml.model");
    p.gguf_pre = string_of(gguf, "tokenizer.ggml.pre");
    p.json_model = json.model_type;
    p.expected_model = implied_model(json);
    p.gguf_tokens = g.tokens.size();
    p.json_tokens = json.vocab_count();
    p.gguf_merges = g.merges.size();
    p.json_merges = json.merges.size();
    p.json_added = json.added.size();
    if (!p.expected_model.empty() && p.expected_model != p.gguf_model)
        c.add(ParityKind::model, std::nullopt, p.gguf_model, p.expected_model,
              "tokenizer.json's " + json.model_type + " model converts to tokenizer.ggml.model \"" + p.expected_model + "\"");
    if (check_ids && p.gguf_model == "gpt2") compare_pre(*check_ids, p, c);
    compare_tokens(g, json, c);
    compare_types(g, json, c);
    compare_merges(g, json, c);
    compare_scores(g, json, c);
    compare_special(gguf, json, c);
    std::stable_sort(p.differences.begin(), p.differences.end(), [](const ParityDifference& a, const ParityDifference& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        return a.id.value_or(-1) < b.id.value_or(-1);
    });
    return p;
}

Result<TokenizerParityCheck> check_tokenizer_parity(const Model& gguf, const std::string& tokenizer_json_path) {
    auto json = read_tokenizer_json(tokenizer_json_path);
    if (!json) return json.error();
    TokenizerParityCheck check;
    check.json = std::move(*json);
    std::optional<std::vector<int32_t>> check_ids;
    const MetadataEntry* model = gguf.find("tokenizer.ggml.model");
    if (model && model->value.is_string() && model->value.string_value() == "gpt2") {
        auto encoded = hf_encode(tokenizer_json_path, {std::string(llama_pre_check_text())}, true);
        if (encoded) {
            check.library = encoded->library;
            check_ids = std::move(encoded->encodings.front().ids);
        } else {
            check.pre_note = "pre-tokenizer not compared: " + encoded.error().message;
        }
    }
    check.parity = compare_tokenizers(gguf, check.json, check_ids);
    return check;
}

}  // namespace mlens
