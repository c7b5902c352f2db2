// core/infer tokenizer: llama.cpp's upstream tokenizer test data, BOS/special handling, pieces,
// detokenize and the chat template.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "mlens/infer/tokenizer.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::unique_ptr<Session> vocab_session(const std::string& path) {
    SessionOptions o;
    o.vocab_only = true;
    auto s = Session::load(path, o);
    REQUIRE(s.ok());
    return std::move(s).value();
}

std::string vocab_file(const char* name) { return test::llama_source_dir() + "/models/ggml-vocab-" + name + ".gguf"; }

// The .inp format of llama.cpp's test-tokenizer-0: prompts separated by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_prompts(const std::string& path) {
    std::vector<uint8_t> raw = test::read_whole_file(path);
    std::string text(raw.begin(), raw.end());
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t next = text.find(sep, pos);
        if (next == std::string::npos) {
            out.push_back(text.substr(pos));
            break;
        }
        out.push_back(text.substr(pos, next - pos));
        pos = next + sep.size();
    }
    return out;
}

// The .out format: one line of space-separated ids per prompt.
std::vector<std::vector<int32_t>> read_ids(const std::string& path) {
    std::vector<uint8_t> raw = test::read_whole_file(path);
    std::istringstream in(std::string(raw.begin(), raw.end()));
    std::vector<std::vector<int32_t>> out;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ids(line);
        std::vector<int32_t> row;
        for (int32_t id; ids >> id;) row.push_back(id);
        out.push_back(row);
    }
    return out;
}

}  // namespace

TEST_CASE("tokenizing llama.cpp's test prompts gives the ids of its .out files", "[infer][tokenizer-data]") {
    size_t files = 0, prompts = 0;
    for (const std::string& vocab : test::upstream_vocab_files()) {
        if (!std::filesystem::exists(vocab + ".inp") || !std::filesystem::exists(vocab + ".out")) continue;
        INFO(vocab);
        auto inputs = read_prompts(vocab + ".inp");
        auto expected = read_ids(vocab + ".out");
        REQUIRE(inputs.size() == expected.size());
        REQUIRE(inputs.size() >= 40);
        auto session = vocab_session(vocab);
        TokenizeOptions options;  // as test-tokenizer-0: no BOS/EOS, special text stays text
        options.add_special = false;
        options.parse_special = false;
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO("prompt " << i << ": " << inputs[i]);
            auto ids = tokenize_ids(*session, inputs[i], options);
            REQUIRE(ids.ok());
            CHECK(*ids == expected[i]);
            ++prompts;
        }
        ++files;
    }
    CHECK(files == 15);
    CHECK(prompts >= 15 * 40);
}

TEST_CASE("BOS and special-token parsing follow the options", "[infer]") {
    auto s = vocab_session(vocab_file("llama-spm"));
    auto with_bos = tokenize_ids(*s, "Hello world", {true, true});
    REQUIRE(with_bos.ok());
    CHECK(*with_bos == std::vector<int32_t>{1, 15043, 3186});
    auto without = tokenize_ids(*s, "Hello world", {false, true});
    REQUIRE(without.ok());
    CHECK(*without == std::vector<int32_t>{15043, 3186});

    auto special = tokenize_ids(*s, "<s>", {false, true});
    REQUIRE(special.ok());
    CHECK(*special == std::vector<int32_t>{1});
    auto plain = tokenize_ids(*s, "<s>", {false, false});
    REQUIRE(plain.ok());
    CHECK(plain->size() > 1);
    CHECK(std::find(plain->begin(), plain->end(), 1) == plain->end());

    auto pieces = tokenize(*s, "Hello world", {true, true});
    REQUIRE(pieces.ok());
    REQUIRE(pieces->size() == 3);
    CHECK((*pieces)[0].piece == "<s>");
    CHECK((*pieces)[0].control);
    CHECK((*pieces)[1].piece == " Hello");
    CHECK_FALSE((*pieces)[1].control);
    CHECK((*pieces)[2].piece == " world");

    auto text = detokenize(*s, *with_bos, true, false);
    REQUIRE(text.ok());
    CHECK(*text == " Hello world");  // SentencePiece keeps the prefix space
    auto rendered = detokenize(*s, *with_bos, false, true);
    REQUIRE(rendered.ok());
    CHECK(*rendered == "<s> Hello world");

    auto bad = token_piece(*s, 32000);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == ErrorCode::E_TOKEN_ID);
    const int32_t out_of_range[] = {5, -1};
    CHECK(detokenize(*s, out_of_range).error().code == ErrorCode::E_TOKEN_ID);
}

TEST_CASE("a byte-fallback piece is the raw byte", "[infer]") {
    auto s = vocab_session(vocab_file("llama-spm"));
    // <0x0A> is id 13 in the llama SentencePiece vocabulary.
    auto nl = token_piece(*s, 13);
    REQUIRE(nl.ok());
    CHECK(nl->piece == "\n");
}

TEST_CASE("the file's chat template renders a conversation and its tokens", "[infer]") {
    auto s = vocab_session(vocab_file("qwen2"));
    CHECK(s->facts().has_chat_template);
    auto render = apply_chat_template(*s, sample_conversation());
    REQUIRE(render.ok());
    CHECK(render->prompt ==
          "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
          "<|im_start|>user\nHello!<|im_end|>\n"
          "<|im_start|>assistant\nHi! How can I help?<|im_end|>\n"
          "<|im_start|>user\nWhat is in a GGUF file?<|im_end|>\n"
          "<|im_start|>assistant\n");
    CHECK_THAT(render->template_source, Catch::Contains("<|im_start|>"));
    REQUIRE_FALSE(render->tokens.empty());
    CHECK(render->tokens[0].id == 151644);
    CHECK(render->tokens[0].piece == "<|im_start|>");
    auto count = [&](int32_t id) {
        return std::count_if(render->tokens.begin(), render->tokens.end(), [&](const TokenPiece& t) { return t.id == id; });
    };
    CHECK(count(151644) == 5);
    CHECK(count(151645) == 4);
    std::vector<int32_t> ids;
    for (const TokenPiece& t : render->tokens) ids.push_back(t.id);
    auto back = detokenize(*s, ids, false, true);
    REQUIRE(back.ok());
    CHECK(*back == render->prompt);

    auto spm = vocab_session(vocab_file("llama-spm"));
    auto none = apply_chat_template(*spm, sample_conversation());
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().code == ErrorCode::E_NO_TEMPLATE);
}
