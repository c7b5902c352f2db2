#include "mlens/analysis/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "mlens/io/text_file.h"

namespace mlens {

namespace {

using nlohmann::json;

Error bad(const std::string& field, std::string message) {
    return Error{ErrorCode::E_INVALID, field, std::nullopt, std::move(message)};
}

// Files the library reads have "type" on every component; a Sequence nests its parts under one
// of these keys.
void flatten_types(const json& component, std::vector<std::string>& types, std::vector<std::string>* patterns) {
    if (!component.is_object()) return;
    const std::string type = component.value("type", std::string());
    for (const char* key : {"pretokenizers", "normalizers", "processors"})
        if (component.contains(key) && component[key].is_array()) {
            for (const json& part : component[key]) flatten_types(part, types, patterns);
            return;
        }
    if (!type.empty()) types.push_back(type);
    if (patterns && type == "Split" && component.contains("pattern") && component["pattern"].is_object()) {
        const json& p = component["pattern"];
        if (p.contains("Regex") && p["Regex"].is_string()) patterns->push_back(p["Regex"].get<std::string>());
        else if (p.contains("String") && p["String"].is_string()) patterns->push_back(p["String"].get<std::string>());
    }
}

const json* find_processor(const json& post, const char* type) {
    if (!post.is_object()) return nullptr;
    if (post.value("type", std::string()) == type) return &post;
    if (post.contains("processors") && post["processors"].is_array())
        for (const json& p : post["processors"])
            if (const json* found = find_processor(p, type)) return found;
    return nullptr;
}

// The special tokens around sequence A of a TemplateProcessing "single" template, with ids from
// its "special_tokens" table.
void read_post_processor(const json& post, TokenizerJson& t) {
    if (const json* tp = find_processor(post, "TemplateProcessing"); tp && tp->contains("single") && (*tp)["single"].is_array()) {
        bool after = false;
        for (const json& piece : (*tp)["single"]) {
            if (piece.contains("Sequence")) {
                after = true;
                continue;
            }
            if (!piece.contains("SpecialToken") || !piece["SpecialToken"].is_object()) continue;
            const std::string content = piece["SpecialToken"].value("id", std::string());
            int64_t id = -1;
            if (tp->contains("special_tokens") && (*tp)["special_tokens"].contains(content)) {
                const json& entry = (*tp)["special_tokens"][content];
                if (entry.contains("ids") && entry["ids"].is_array() && !entry["ids"].empty() && entry["ids"][0].is_number_integer())
                    id = entry["ids"][0].get<int64_t>();
            }
            (after ? t.post_suffix : t.post_prefix).push_back({content, id});
        }
        return;
    }
    for (const char* type : {"RobertaProcessing", "BertProcessing"})
        if (const json* p = find_processor(post, type)) {
            auto pair_of = [&](const char* key, std::vector<TokenizerJsonSpecial>& out) {
                const json& v = (*p)[key];
                if (v.is_array() && v.size() == 2 && v[0].is_string() && v[1].is_number_integer())
                    out.push_back({v[0].get<std::string>(), v[1].get<int64_t>()});
            };
            if (p->contains("cls")) pair_of("cls", t.post_prefix);
            if (p->contains("sep")) pair_of("sep", t.post_suffix);
            return;
        }
}

}  // namespace

uint64_t TokenizerJson::vocab_count() const {
    uint64_t n = 0;
    for (const auto& token : tokens) n += token.has_value();
    return n;
}

const TokenizerJsonAdded* TokenizerJson::added_token(int64_t id) const {
    for (const TokenizerJsonAdded& a : added)
        if (a.id == id) return &a;
    return nullptr;
}

Result<TokenizerJson> read_tokenizer_json(const std::string& path) {
    auto text = read_text_file(path, kMaxTokenizerJsonBytes);
    if (!text) return text.error();
    json doc;
    try {
        doc = json::parse(*text);
    } catch (const json::exception& e) {
        return bad("", path + " is not JSON: " + e.what());
    }
    if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object()) return bad("model", "tokenizer.json has no \"model\" object");
    const json& model = doc["model"];
    TokenizerJson t;
    t.path = path;
    t.model_type = model.value("type", std::string());
    const uint64_t id_limit = text->size();
    auto place = [&](int64_t id, std::string token, const std::string& field) -> Status {
        if (id < 0 || static_cast<uint64_t>(id) >= id_limit)
            return bad(field, "id " + std::to_string(id) + " is outside what a file of " + std::to_string(id_limit) + " bytes can number");
        if (static_cast<uint64_t>(id) >= t.tokens.size()) t.tokens.resize(static_cast<size_t>(id) + 1);
        t.tokens[static_cast<size_t>(id)] = std::move(token);
        return ok_status();
    };
    if (!model.contains("vocab")) return bad("model.vocab", "the model has no vocab");
    const json& vocab = model["vocab"];
    if (t.model_type.empty()) t.model_type = vocab.is_array() ? "Unigram" : "BPE";
    if (vocab.is_object()) {
        for (const auto& [token, id] : vocab.items()) {
            if (!id.is_number_integer()) return bad("model.vocab." + token, "the id of \"" + token + "\" is not an integer");
            if (Status s = place(id.get<int64_t>(), token, "model.vocab." + token); !s) return s.error();
        }
    } else if (vocab.is_array()) {
        t.tokens.reserve(vocab.size());
        for (size_t i = 0; i < vocab.size(); ++i) {
            const json& entry = vocab[i];
            if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
                return bad("model.vocab[" + std::to_string(i) + "]", "a Unigram entry is not [piece, score]");
            t.tokens.emplace_back(entry[0].get<std::string>());
            t.scores.push_back(entry[1].get<double>());
        }
    } else {
        return bad("model.vocab", "model.vocab is neither an object nor an array");
    }
    if (model.contains("merges") && model["merges"].is_array()) {
        t.merges.reserve(model["merges"].size());
        for (size_t i = 0; i < model["merges"].size(); ++i) {
            const json& m = model["merges"][i];
            if (m.is_string()) {
                const std::string s = m.get<std::string>();
                const size_t space = s.find(' ');
                if (space == std::string::npos) return bad("model.merges[" + std::to_string(i) + "]", "a merge \"" + s + "\" has no space");
                t.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                t.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
            } else {
                return bad("model.merges[" + std::to_string(i) + "]", "a merge is neither \"a b\" nor [\"a\", \"b\"]");
            }
        }
    }
    t.byte_fallback = model.value("byte_fallback", false);
    if (model.contains("unk_token") && model["unk_token"].is_string()) t.unk_token = model["unk_token"].get<std::string>();
    if (model.contains("unk_id") && model["unk_id"].is_number_integer()) {
        const int64_t unk = model["unk_id"].get<int64_t>();
        if (unk >= 0 && static_cast<uint64_t>(unk) < t.tokens.size() && t.tokens[static_cast<size_t>(unk)]) t.unk_token = *t.tokens[static_cast<size_t>(unk)];
    }
    if (doc.contains("added_tokens") && doc["added_tokens"].is_array()) {
        for (size_t i = 0; i < doc["added_tokens"].size(); ++i) {
            const json& a = doc["added_tokens"][i];
            const std::string field = "added_tokens[" + std::to_string(i) + "]";
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") || !a["content"].is_string())
                return bad(field, "an added token needs an integer \"id\" and a string \"content\"");
            TokenizerJsonAdded added{a["id"].get<int64_t>(), a["content"].get<std::string>(), a.value("special", false), a.value("normalized", false)};
            if (Status s = place(added.id, added.content, field); !s) return s.error();
            t.added.push_back(std::move(added));
        }
    }
    if (t.model_type == "Unigram") t.scores.resize(t.tokens.size(), 0.0);
    if (doc.contains("pre_tokenizer")) flatten_types(doc["pre_tokenizer"], t.pre_tokenizer, &t.split_patterns);
    if (doc.contains("normalizer")) flatten_types(doc["normalizer"], t.normalizer, nullptr);
    if (doc.contains("post_processor")) read_post_processor(doc["post_processor"], t);
    return t;
}

}  // namespace mlens
