#include "tokenizer_json_fixture.h"

#include <fstream>
#include <random>
#include <stdexcept>

namespace mlens::test {

namespace {

const MetadataEntry& entry(const Model& m, const char* key) {
    const MetadataEntry* e = m.find(key);
    if (!e) throw std::runtime_error(std::string("the vocabulary has no ") + key);
    return *e;
}

}  // namespace

const char* const kLlama3PreTokenizerRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

nlohmann::json byte_level_tokenizer_json(const Model& gguf, const std::string& split_regex) {
    const ArrayIndex& tokens = *entry(gguf, "tokenizer.ggml.tokens").value.array;
    const ArrayIndex& types = *entry(gguf, "tokenizer.ggml.token_type").value.array;
    const ArrayIndex& merges = *entry(gguf, "tokenizer.ggml.merges").value.array;
    nlohmann::json vocab = nlohmann::json::object();
    nlohmann::json added = nlohmann::json::array();
    tokens.for_each_string(0, UINT64_MAX, [&](uint64_t id, std::string_view token) {
        const int64_t type = types.scalar_at(id).as_int();
        if (type == 3 || type == 4)
            added.push_back({{"id", id}, {"content", std::string(token)}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                             {"normalized", type == 4}, {"special", type == 3}});
        else
            vocab[std::string(token)] = id;
        return true;
    });
    nlohmann::json merge_list = nlohmann::json::array();
    merges.for_each_string(0, UINT64_MAX, [&](uint64_t, std::string_view m) {
        merge_list.push_back(std::string(m));
        return true;
    });
    nlohmann::json j = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", split_regex}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}}},
        {"post_processor", nullptr},
        {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", true},
          {"vocab", vocab},
          {"merges", merge_list}}}};
    const MetadataEntry* add_bos = gguf.find("tokenizer.ggml.add_bos_token");
    if ((!add_bos || add_bos->value.scalar.as_int() != 0) && gguf.find("tokenizer.ggml.bos_token_id")) {
        const int64_t bos = entry(gguf, "tokenizer.ggml.bos_token_id").value.scalar.as_int();
        const std::string bos_text = tokens.string_at(static_cast<uint64_t>(bos));
        j["post_processor"] = {{"type", "TemplateProcessing"},
                               {"single", {{{"SpecialToken", {{"id", bos_text}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                               {"pair", nlohmann::json::array()},
                               {"special_tokens", {{bos_text, {{"id", bos_text}, {"ids", {bos}}, {"tokens", {bos_text}}}}}}};
    }
    return j;
}

PlantedDifferences plant_differences(nlohmann::json& j) {
    PlantedDifferences planted;
    nlohmann::json& vocab = j["model"]["vocab"];
    std::string token_300;
    for (auto& [token, id] : vocab.items()) {
        if (id == 1000) planted.token_1000 = token;
        if (id == 1001) planted.token_1001 = token;
        if (id == 300) token_300 = token;
    }
    if (planted.token_1000.empty() || planted.token_1001.empty() || token_300.empty())
        throw std::runtime_error("the vocabulary has no ids 300, 1000 and 1001");
    vocab[planted.token_1000] = 1001;
    vocab[planted.token_1001] = 1000;
    planted.dropped = j["model"]["merges"][5].get<std::string>();
    j["model"]["merges"].erase(5);
    j["added_tokens"].push_back({{"id", 300}, {"content", token_300}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                                 {"normalized", false}, {"special", true}});
    j["post_processor"] = nullptr;
    return planted;
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
    std::ofstream out(path, std::ios::binary);
    out << j.dump();
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string mixed_script_text(size_t bytes, uint64_t seed) {
    static const char* const kPieces[] = {
        "The quick brown fox jumps over the lazy dog.",
        "I've been told he's there, 'RE you sure? We'Ve a'lL",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
        "def f(x):\n    return x ** 2 + 3.14159",
        "3 33 333 3333 33333 1,234,567.89 0x1F 2024-12-02",
        "    \n\n\t\t  \n   ",
        "人工智能正在改变世界，我们在北京工作。",
        "東京は日本の首都です。ひらがなとカタカナ。",
        "안녕하세요, 세계! 한국어 텍스트입니다.",
        "Привет, мир! Это текст на русском языке.",
        "Γειά σου Κόσμε, αυτό είναι ελληνικά.",
        "مرحبا بالعالم، هذا نص عربي.",
        "नमस्ते दुनिया, यह हिंदी पाठ है।",
        "สวัสดีชาวโลก นี่คือภาษาไทย",
        "🚀 (normal) 😶‍🌫️ emoji ✅ 🦙🦙 👩‍👩‍👧‍👦",
        "------======= ......!!!!!!?????? \"\"\"\"```````",
        "Ünïcödé façade naïve café résumé Straße",
    };
    constexpr size_t kCount = sizeof kPieces / sizeof kPieces[0];
    static const char* const kJoins[] = {" ", "\n", "  ", "\n\n", " \t", ""};
    std::mt19937_64 rng(seed);
    std::string out;
    out.reserve(bytes + 256);
    while (out.size() < bytes) {
        out += kPieces[rng() % kCount];
        out += kJoins[rng() % (sizeof kJoins / sizeof kJoins[0])];
    }
    size_t cut = bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    return out;
}

}  // namespace mlens::test
