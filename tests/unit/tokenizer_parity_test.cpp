// tokenizer-parity: the GGUF vocabulary against a tokenizer.json, read by Hugging Face's
// tokenizers. The matching pair is Llama 3's vocabulary from the pinned llama.cpp
// (models/ggml-vocab-llama-bpe.gguf) and the tokenizer.json written from it with Llama 3's
// pre-tokenizer; the planted differences are made in copies of either side.
#include <catch2/catch.hpp>

#include <filesystem>

#include "mlens/analysis/hf_tokenizer.h"
#include "mlens/analysis/tokenizer_json.h"
#include "mlens/analysis/tokenizer_parity.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/infer/text_token_parity.h"
#include "cli_runner.h"
#include "test_paths.h"
#include "tokenizer_json_fixture.h"

using namespace mlens;

namespace {

std::string llama3_vocab() { return test::llama_source_dir() + "/models/ggml-vocab-llama-bpe.gguf"; }

Model open(const std::string& path) {
    auto m = open_gguf(path);
    REQUIRE(m.ok());
    return std::move(m).value();
}

uint64_t total(const TokenizerParity& p, ParityKind k) { return p.total[static_cast<size_t>(k)]; }

const ParityDifference& only(const TokenizerParity& p, ParityKind k) {
    for (const ParityDifference& d : p.differences)
        if (d.kind == k) return d;
    FAIL("no difference of kind " << parity_kind_name(k));
    throw;
}

// A copy of the GGUF with tokenizer.ggml.pre set to `pre` and, when `add_bos` is given,
// tokenizer.ggml.add_bos_token stated (the project's GGUF writer).
std::string with_pre(const Model& m, const std::string& pre, const std::string& out, std::optional<bool> add_bos = std::nullopt) {
    Model copy = m;
    for (MetadataEntry& e : copy.metadata)
        if (e.key == "tokenizer.ggml.pre") e.value = Value::of_string(pre);
    if (add_bos) {
        MetadataEntry e;
        e.key = "tokenizer.ggml.add_bos_token";
        e.value = Value::of_scalar(Scalar{ValueType::boolean, *add_bos ? 1u : 0u});
        copy.metadata.push_back(std::move(e));
    }
    const Status written = write_gguf(copy, out);
    INFO((written ? std::string() : written.error().to_string()));
    REQUIRE(written.ok());
    return out;
}

std::unique_ptr<WorkerSession> vocab_worker(const std::string& path) {
    SessionOptions o;
    o.vocab_only = true;
    auto w = WorkerSession::load(path, o);
    INFO((w ? std::string() : w.error().to_string()));
    REQUIRE(w.ok());
    return std::move(w).value();
}

}  // namespace

TEST_CASE("tokenizer.json: both merge forms, Unigram vocabularies, added tokens and the post-processor are read", "[tokenizer-parity]") {
    test::TempDir dir;
    test::write_json_file(dir.file("bpe.json"),
                          {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b", {"ab", "b"}}}}},
                           {"added_tokens", {{{"id", 3}, {"content", "<s>"}, {"special", true}}}},
                           {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "\\s+"}}}}, {{"type", "ByteLevel"}}}}}},
                           {"post_processor",
                            {{"type", "TemplateProcessing"},
                             {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                             {"special_tokens", {{"<s>", {{"ids", {3}}}}}}}}});
    auto bpe = read_tokenizer_json(dir.file("bpe.json"));
    REQUIRE(bpe.ok());
    CHECK(bpe->model_type == "BPE");
    REQUIRE(bpe->tokens.size() == 4);
    CHECK(*bpe->tokens[3] == "<s>");
    REQUIRE(bpe->merges.size() == 2);
    CHECK(bpe->merges[0] == std::pair<std::string, std::string>("a", "b"));
    CHECK(bpe->merges[1] == std::pair<std::string, std::string>("ab", "b"));
    CHECK(bpe->pre_tokenizer == std::vector<std::string>{"Split", "ByteLevel"});
    CHECK(bpe->split_patterns == std::vector<std::string>{"\\s+"});
    REQUIRE(bpe->post_prefix.size() == 1);
    CHECK(bpe->post_prefix[0].id == 3);
    CHECK(bpe->post_suffix.empty());

    test::write_json_file(dir.file("uni.json"), {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", nlohmann::json::array({nlohmann::json::array({"<unk>", 0.0}), nlohmann::json::array({"▁a", -1.5})})}}}});
    auto uni = read_tokenizer_json(dir.file("uni.json"));
    INFO((uni ? std::string() : uni.error().to_string()));
    REQUIRE(uni.ok());
    CHECK(uni->model_type == "Unigram");
    CHECK(uni->scores == std::vector<double>{0.0, -1.5});
    CHECK(uni->unk_token == "<unk>");
}

TEST_CASE("tokenizer.json: malformed files are refused with the field, and ids cannot outgrow the file", "[tokenizer-parity]") {
    test::TempDir dir;
    const std::string path = dir.file("t.json");
    auto refused = [&](const std::string& text) {
        test::write_whole_file(path, std::vector<uint8_t>(text.begin(), text.end()));
        auto r = read_tokenizer_json(path);
        REQUIRE_FALSE(r.ok());
        return r.error();
    };
    CHECK(refused("{not json").code == ErrorCode::E_INVALID);
    CHECK(refused("{\"version\": \"1.0\"}").field == "model");
    const Error huge = refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 4000000000}}}");
    CHECK(huge.code == ErrorCode::E_INVALID);
    CHECK(huge.field == "model.vocab.a");
    CHECK(refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -1}}}").code == ErrorCode::E_INVALID);
    CHECK(refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": [\"ab\"]}}").field == "model.merges[0]");
    CHECK(refused("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\"]]}}").field == "model.vocab[0]");
    CHECK(refused("{\"model\": {\"vocab\": {}}, \"added_tokens\": [{\"id\": \"x\"}]}").field == "added_tokens[0]");
    std::filesystem::create_directory(dir.file("folder"));
    CHECK(read_tokenizer_json(dir.file("folder")).error().code == ErrorCode::E_NOT_REGULAR);
}

TEST_CASE("tokenizer parity: Llama 3's vocabulary and its tokenizer.json match, pre-tokenizer included", "[tokenizer-parity]") {
    REQUIRE_FALSE(hf_tokenizer_helper().empty());
    test::TempDir dir;
    const Model gguf = open(llama3_vocab());
    test::write_json_file(dir.file("tokenizer.json"), test::byte_level_tokenizer_json(gguf, test::kLlama3PreTokenizerRegex));
    auto check = check_tokenizer_parity(gguf, dir.file("tokenizer.json"));
    REQUIRE(check.ok());
    const TokenizerParity& p = check->parity;
    INFO(check->pre_note);
    for (const ParityDifference& d : p.differences) INFO(parity_kind_name(d.kind) << " " << d.id.value_or(-1) << " " << d.message);
    CHECK(p.difference_count() == 0);
    CHECK(p.gguf_model == "gpt2");
    CHECK(p.expected_model == "gpt2");
    CHECK(p.gguf_pre == "llama-bpe");
    REQUIRE(p.pre_checked);
    // The converter's own fingerprint of Llama 3 (conversion/base.py): the written tokenizer.json
    // tokenizes its check text exactly as Meta's does.
    CHECK(p.pre_hash == "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5");
    CHECK(p.pre_names == std::vector<std::string>{"llama-bpe"});
    CHECK(p.gguf_tokens == 128256);
    CHECK(p.json_tokens == 128256);
    CHECK(p.gguf_merges == p.json_merges);
    CHECK(check->library.starts_with("tokenizers "));
}

TEST_CASE("tokenizer parity: every planted difference is found, with its id", "[tokenizer-parity]") {
    REQUIRE_FALSE(hf_tokenizer_helper().empty());
    test::TempDir dir;
    const Model original = open(llama3_vocab());
    nlohmann::json j = test::byte_level_tokenizer_json(original, test::kLlama3PreTokenizerRegex);
    const test::PlantedDifferences planted = test::plant_differences(j);
    test::write_json_file(dir.file("tokenizer.json"), j);
    // The GGUF side: a vocabulary whose pre-tokenizer name was changed, and which says it adds BOS.
    const Model gguf = open(with_pre(original, "qwen2", dir.file("renamed-pre.gguf"), true));

    auto check = check_tokenizer_parity(gguf, dir.file("tokenizer.json"));
    REQUIRE(check.ok());
    const TokenizerParity& p = check->parity;
    INFO(check->pre_note);
    CHECK(p.difference_count() == 6);
    CHECK(total(p, ParityKind::token) == 2);
    CHECK(only(p, ParityKind::token).id == 1000);
    CHECK(only(p, ParityKind::token).gguf == planted.token_1000);
    CHECK(only(p, ParityKind::token).json == planted.token_1001);
    CHECK(total(p, ParityKind::merge) == 1);
    CHECK(only(p, ParityKind::merge).id == 5);
    CHECK(only(p, ParityKind::merge).gguf == planted.dropped);
    CHECK(total(p, ParityKind::token_type) == 1);
    CHECK(only(p, ParityKind::token_type).id == 300);
    CHECK(only(p, ParityKind::token_type).gguf == "NORMAL");
    CHECK(total(p, ParityKind::special) == 1);
    CHECK(only(p, ParityKind::special).gguf == "adds BOS");
    CHECK(total(p, ParityKind::pre_tokenizer) == 1);
    CHECK(only(p, ParityKind::pre_tokenizer).gguf == "qwen2");
    // Without the BOS the check text's ids are Smaug's, a Llama 3 tokenizer that adds none.
    CHECK(only(p, ParityKind::pre_tokenizer).json == "smaug-bpe");
}

TEST_CASE("tokenizer parity: a changed pre-tokenizer name alone is one difference naming the right one", "[tokenizer-parity]") {
    REQUIRE_FALSE(hf_tokenizer_helper().empty());
    test::TempDir dir;
    const Model original = open(llama3_vocab());
    test::write_json_file(dir.file("tokenizer.json"), test::byte_level_tokenizer_json(original, test::kLlama3PreTokenizerRegex));
    const Model gguf = open(with_pre(original, "qwen2", dir.file("renamed-pre.gguf")));
    auto check = check_tokenizer_parity(gguf, dir.file("tokenizer.json"));
    REQUIRE(check.ok());
    CHECK(check->parity.difference_count() == 1);
    const ParityDifference& d = only(check->parity, ParityKind::pre_tokenizer);
    CHECK(d.gguf == "qwen2");
    CHECK(d.json == "llama-bpe");
}

TEST_CASE("tokenizer parity: Unigram scores are compared as float, and a wholly different pair stays readable", "[tokenizer-parity]") {
    test::TempDir dir;
    // Llama 2's SentencePiece vocabulary (tokens, scores, CONTROL <s> and </s>) as a Unigram
    // tokenizer.json, one score changed.
    const Model spm = open(test::llama_source_dir() + "/models/ggml-vocab-llama-spm.gguf");
    const ArrayIndex& tokens = *spm.find("tokenizer.ggml.tokens")->value.array;
    const ArrayIndex& scores = *spm.find("tokenizer.ggml.scores")->value.array;
    const ArrayIndex& types = *spm.find("tokenizer.ggml.token_type")->value.array;
    nlohmann::json vocab = nlohmann::json::array(), added = nlohmann::json::array();
    tokens.for_each_string(0, UINT64_MAX, [&](uint64_t id, std::string_view t) {
        vocab.push_back(nlohmann::json::array({std::string(t), id == 500 ? scores.scalar_at(id).as_double() + 0.5 : scores.scalar_at(id).as_double()}));
        if (types.scalar_at(id).as_int() == 3) added.push_back({{"id", id}, {"content", std::string(t)}, {"special", true}});
        return true;
    });
    nlohmann::json post = {{"type", "TemplateProcessing"},
                           {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                           {"special_tokens", {{"<s>", {{"ids", {1}}}}}}};
    test::write_json_file(dir.file("uni.json"), {{"model", {{"type", "Unigram"}, {"vocab", vocab}}}, {"added_tokens", added}, {"post_processor", post}});
    auto json = read_tokenizer_json(dir.file("uni.json"));
    REQUIRE(json.ok());
    const TokenizerParity p = compare_tokenizers(spm, *json, std::nullopt);
    for (const ParityDifference& d : p.differences) UNSCOPED_INFO(parity_kind_name(d.kind) << " " << d.id.value_or(-1) << " " << d.message);
    CHECK(p.difference_count() == 2);
    CHECK(only(p, ParityKind::model).gguf == "llama");
    CHECK(only(p, ParityKind::model).json == "t5");
    CHECK(only(p, ParityKind::score).id == 500);

    // Against Llama 3's vocabulary nearly every id differs: counted in full, listed up to the cap.
    const TokenizerParity far = compare_tokenizers(open(llama3_vocab()), *json, std::nullopt);
    CHECK(total(far, ParityKind::token_missing) == 128256 - 32000);
    CHECK(total(far, ParityKind::token) > kMaxListedPerKind);
    CHECK(far.differences.size() <= kParityKinds * kMaxListedPerKind);
    CHECK_FALSE(far.pre_checked);
}

TEST_CASE("tokenizer parity: 1 MiB of mixed-script text gives llama.cpp's ids from the tokenizer.json too", "[tokenizer-parity]") {
    REQUIRE_FALSE(hf_tokenizer_helper().empty());
    test::TempDir dir;
    const Model gguf = open(llama3_vocab());
    test::write_json_file(dir.file("tokenizer.json"), test::byte_level_tokenizer_json(gguf, test::kLlama3PreTokenizerRegex));
    auto json = read_tokenizer_json(dir.file("tokenizer.json"));
    REQUIRE(json.ok());
    const std::string text = test::mixed_script_text(1u << 20);
    auto session = vocab_worker(llama3_vocab());
    auto parity = compare_text_tokenization(*session, *json, text);
    INFO((parity ? std::string() : parity.error().to_string()));
    REQUIRE(parity.ok());
    INFO("first difference at token " << parity->first_token.value_or(0) << ", byte " << parity->first_byte.value_or(0));
    CHECK(parity->equal);
    CHECK(parity->text_bytes == text.size());
    CHECK(parity->llama_count == parity->hf_count);
    CHECK(parity->llama_count > 200000);
}

TEST_CASE("tokenizer parity: a different pre-tokenizer regex shows the first differing token and its byte", "[tokenizer-parity]") {
    REQUIRE_FALSE(hf_tokenizer_helper().empty());
    test::TempDir dir;
    const Model gguf = open(llama3_vocab());
    // Digits one at a time instead of in threes: "Year", " ", then "202" against "2", at byte 5.
    std::string regex = test::kLlama3PreTokenizerRegex;
    regex.replace(regex.find("\\p{N}{1,3}"), 10, "\\p{N}");
    test::write_json_file(dir.file("tokenizer.json"), test::byte_level_tokenizer_json(gguf, regex));
    auto json = read_tokenizer_json(dir.file("tokenizer.json"));
    REQUIRE(json.ok());
    auto session = vocab_worker(llama3_vocab());
    const std::string text = "Year 2024 was 12345 days";
    auto parity = compare_text_tokenization(*session, *json, text);
    REQUIRE(parity.ok());
    CHECK_FALSE(parity->equal);
    REQUIRE(parity->first_byte);
    CHECK(*parity->first_byte == 5);
    CHECK(*parity->first_token == 2);
    REQUIRE(parity->llama_context.size() >= 3);
    CHECK(parity->llama_context[2].piece == "202");
    REQUIRE(parity->hf_context.size() >= 2);
    CHECK(parity->hf_context[1].piece == "Ġ");
    auto invalid = compare_text_tokenization(*session, *json, std::string("ok \xff bad"));
    REQUIRE_FALSE(invalid.ok());
    CHECK(invalid.error().code == ErrorCode::E_INVALID_UTF8);
    CHECK(invalid.error().offset == 3);
}

TEST_CASE("mlens tokenizer-parity: text and JSON reports, exit status 1 when something differs", "[tokenizer-parity][cli]") {
    test::TempDir dir;
    const Model original = open(llama3_vocab());
    test::write_json_file(dir.file("tokenizer.json"), test::byte_level_tokenizer_json(original, test::kLlama3PreTokenizerRegex));
    const std::string text = "I've 12345 \xE4\xBA\xBA\xE5\xB7\xA5\xE6\x99\xBA\xE8\x83\xBD <|eot_id|> done";
    test::write_whole_file(dir.file("text.txt"), std::vector<uint8_t>(text.begin(), text.end()));

    nlohmann::json same = test::run_mlens_json({"tokenizer-parity", llama3_vocab(), dir.file("tokenizer.json"), "--text", dir.file("text.txt"), "--json"});
    CHECK(same["differences_total"] == 0);
    CHECK(same["pre_tokenizer"]["names"] == nlohmann::json::array({"llama-bpe"}));
    CHECK(same["text"]["equal"] == true);
    CHECK(same["text"]["llama_tokens"] == same["text"]["tokenizers_tokens"]);

    const std::string renamed = with_pre(original, "qwen2", dir.file("renamed-pre.gguf"));
    const test::CliRun differs = test::run_mlens({"tokenizer-parity", renamed, dir.file("tokenizer.json")});
    CHECK(differs.exit_status == 1);
    CHECK(differs.out.find("1 difference: 1 pre_tokenizer") != std::string::npos);
    CHECK(differs.out.find("llama-bpe") != std::string::npos);

    const test::CliRun missing = test::run_mlens({"tokenizer-parity", llama3_vocab(), dir.file("nope.json"), "--json"});
    CHECK(missing.exit_status == 1);
    CHECK(nlohmann::json::parse(missing.out)["error"]["path"] == dir.file("nope.json"));
}
