// malformed-inputs.md B1 "Semantic metadata the GUI reads": hostile tokenizer metadata (G57),
// split metadata and chat templates (G58), and split shard discovery from the file name.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>

#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/io/byte_source.h"
#include "mlens/model/value_format.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

using KvWriter = std::function<void(GgufBuilder&)>;

constexpr int kVocab = 100;

std::vector<std::string> vocab_tokens() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "<0x0A>", "<0xff>"};
    while (tokens.size() < kVocab) tokens.push_back("tok" + std::to_string(tokens.size()));
    return tokens;
}

// The pieces of a consistent 100-token llama vocabulary, by key; a case replaces one of them.
struct Vocab {
    KvWriter tokens = [](GgufBuilder& b) { b.kv_strings("tokenizer.ggml.tokens", vocab_tokens()); };
    KvWriter scores = [](GgufBuilder& b) { b.kv_array("tokenizer.ggml.scores", ValueType::f32, kVocab).f32_run(kVocab); };
    KvWriter types = [](GgufBuilder& b) {
        b.kv_array("tokenizer.ggml.token_type", ValueType::i32, kVocab);
        for (int i = 0; i < kVocab; ++i) b.u32(1);
    };
    KvWriter bos = [](GgufBuilder& b) { b.kv_u32("tokenizer.ggml.bos_token_id", 1); };
    KvWriter eos = [](GgufBuilder& b) { b.kv_u32("tokenizer.ggml.eos_token_id", 2); };
    KvWriter extra;

    std::vector<uint8_t> bytes() const {
        std::vector<KvWriter> kvs = {tokens, scores, types, bos, eos};
        if (extra) kvs.push_back(extra);
        return t1_plus_kvs(1 + kvs.size(), [&](GgufBuilder& b) {
            b.kv_string("tokenizer.ggml.model", "llama");
            for (const KvWriter& kv : kvs) kv(b);
        });
    }
};

// Accepted, with only W_TOKENIZER_METADATA warnings, each on one of `keys` at that key's offset.
void require_tokenizer_warnings(const Model& m, const std::vector<std::string>& keys) {
    require_accepted(m, std::vector<std::string>(keys.size(), "W_TOKENIZER_METADATA"));
    for (const std::string& key : keys) {
        INFO(key);
        REQUIRE(m.find(key) != nullptr);
        require_warning(m, "W_TOKENIZER_METADATA", key, m.find(key)->key_range.offset);
    }
}

Model with_split_kvs(const std::vector<KvWriter>& kvs) {
    return read_gguf_bytes(t1_plus_kvs(kvs.size(), [&](GgufBuilder& b) {
        for (const KvWriter& kv : kvs) kv(b);
    }));
}

KvWriter u16_kv(const std::string& key, uint16_t v) {
    return [=](GgufBuilder& b) { b.kv(key, ValueType::u16).u16(v); };
}
KvWriter i32_kv(const std::string& key, int32_t v) {
    return [=](GgufBuilder& b) { b.kv(key, ValueType::i32).u32(static_cast<uint32_t>(v)); };
}

}  // namespace

TEST_CASE("G57 a consistent vocabulary has no warning", "[gguf][malformed]") { require_accepted(read_gguf_bytes(Vocab{}.bytes())); }

TEST_CASE("G57 hostile tokenizer metadata: accepted, warning naming the key", "[gguf][malformed]") {
    SECTION("scores with 10 entries") {
        Vocab v;
        v.scores = [](GgufBuilder& b) { b.kv_array("tokenizer.ggml.scores", ValueType::f32, 10).f32_run(10); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.scores"});
    }
    SECTION("scores typed INT8") {
        Vocab v;
        v.scores = [](GgufBuilder& b) { b.kv_array("tokenizer.ggml.scores", ValueType::i8, kVocab).zeros(kVocab); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.scores"});
    }
    SECTION("scores a scalar INT8") {
        Vocab v;
        v.scores = [](GgufBuilder& b) { b.kv("tokenizer.ggml.scores", ValueType::i8).u8(0); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.scores"});
    }
    SECTION("scores a STRING array") {
        Vocab v;
        v.scores = [](GgufBuilder& b) { b.kv_strings("tokenizer.ggml.scores", vocab_tokens()); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.scores"});
    }
    SECTION("token_type typed UINT8") {
        Vocab v;
        v.types = [](GgufBuilder& b) { b.kv_array("tokenizer.ggml.token_type", ValueType::u8, kVocab).zeros(kVocab); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.token_type"});
    }
    SECTION("bos 0xFFFFFFFF and eos 1000, both out of range") {
        Vocab v;
        v.bos = [](GgufBuilder& b) { b.kv_u32("tokenizer.ggml.bos_token_id", 0xFFFFFFFF); };
        v.eos = [](GgufBuilder& b) { b.kv_u32("tokenizer.ggml.eos_token_id", 1000); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"});
    }
    SECTION("bos -1 typed INT32") {
        Vocab v;
        v.bos = [](GgufBuilder& b) { b.kv("tokenizer.ggml.bos_token_id", ValueType::i32).u32(0xFFFFFFFF); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.bos_token_id"});
    }
    SECTION("bos typed STRING") {
        Vocab v;
        v.bos = [](GgufBuilder& b) { b.kv_string("tokenizer.ggml.bos_token_id", "1"); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.bos_token_id"});
    }
    SECTION("merges without a space") {
        Vocab v;
        v.extra = [](GgufBuilder& b) { b.kv_strings("tokenizer.ggml.merges", {"t o", "tok"}); };
        require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.merges"});
    }
    for (const char* piece : {"<0x-1>", "<0xZZ>", "<0x100>"}) {
        DYNAMIC_SECTION("byte token " << piece) {
            Vocab v;
            v.tokens = [piece](GgufBuilder& b) {
                auto tokens = vocab_tokens();
                tokens[50] = piece;
                b.kv_strings("tokenizer.ggml.tokens", tokens);
            };
            require_tokenizer_warnings(read_gguf_bytes(v.bytes()), {"tokenizer.ggml.tokens"});
        }
    }
}

TEST_CASE("G58 split metadata out of range: W_SPLIT_METADATA", "[gguf][malformed]") {
    SECTION("(a) split.count = 65535") {
        Model m = with_split_kvs({u16_kv("split.no", 0), u16_kv("split.count", 65535)});
        require_accepted(m, {"W_SPLIT_METADATA"});
        require_warning(m, "W_SPLIT_METADATA", "split.count", m.find("split.count")->key_range.offset);
        CHECK(m.files.size() == 1);
    }
    SECTION("(b) split.no = 5 >= split.count = 2") {
        Model m = with_split_kvs({u16_kv("split.no", 5), u16_kv("split.count", 2)});
        require_accepted(m, {"W_SPLIT_METADATA"});
        require_warning(m, "W_SPLIT_METADATA", "split.no", m.find("split.no")->key_range.offset);
    }
    SECTION("(c) split.tensors.count = 7 for 1 tensor") {
        Model m = with_split_kvs({u16_kv("split.no", 0), u16_kv("split.count", 1), i32_kv("split.tensors.count", 7)});
        require_accepted(m, {"W_SPLIT_METADATA"});
        require_warning(m, "W_SPLIT_METADATA", "split.tensors.count", m.find("split.tensors.count")->key_range.offset);
    }
    SECTION("(c) split.tensors.count alone") {
        Model m = with_split_kvs({i32_kv("split.tensors.count", 7)});
        require_accepted(m, {"W_SPLIT_METADATA"});
    }
    SECTION("split keys of the wrong type or negative") {
        Model m = with_split_kvs({[](GgufBuilder& b) { b.kv_string("split.count", "3"); }, i32_kv("split.tensors.count", -1)});
        require_accepted(m, {"W_SPLIT_METADATA", "W_SPLIT_METADATA"});
    }
    SECTION("consistent single-file split metadata") {
        require_accepted(with_split_kvs({u16_kv("split.no", 0), u16_kv("split.count", 1), i32_kv("split.tensors.count", 1)}));
    }
}

TEST_CASE("G58 shard paths come from the opened file's name, never from metadata", "[gguf][malformed]") {
    TempDir dir;
    auto bytes = t1_plus_kvs(2, [](GgufBuilder& b) {
        b.kv("split.no", ValueType::u16).u16(0);
        b.kv("split.count", ValueType::u16).u16(3);
    });
    write_whole_file(dir.file("model.gguf"), bytes);
    auto m = open_gguf(dir.file("model.gguf"));
    REQUIRE(m.ok());
    CHECK(m->files.size() == 1);
    CHECK(find_diagnostic(*m, "E_SPLIT_MISSING") == nullptr);

    write_whole_file(dir.file("x-00001-of-02000.gguf"), t1_plus_kvs(2, [](GgufBuilder& b) {
                         b.kv("split.no", ValueType::u16).u16(0);
                         b.kv("split.count", ValueType::u16).u16(2000);
                     }));
    m = open_gguf(dir.file("x-00001-of-02000.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_LIMIT", "split", std::nullopt);
    CHECK(first_error(*m)->message.find("max_split_count=1024") != std::string::npos);
}

TEST_CASE("G58 a file named as the first shard whose keys say it is no split model is read alone, as llama.cpp reads it",
          "[gguf][malformed]") {
    TempDir dir;
    // Shard 2 is beside it, yet not joined: llama.cpp's loader reads split.count from the file.
    write_whole_file(dir.file("x-00002-of-00002.gguf"), t1_bytes());
    for (const std::optional<uint16_t> count : {std::optional<uint16_t>{}, std::optional<uint16_t>{1}, std::optional<uint16_t>{0}}) {
        write_whole_file(dir.file("x-00001-of-00002.gguf"), t1_plus_kvs(count ? 1 : 0, [&](GgufBuilder& b) {
                             if (count) b.kv("split.count", ValueType::u16).u16(*count);
                         }));
        auto m = open_gguf(dir.file("x-00001-of-00002.gguf"));
        REQUIRE(m.ok());
        CHECK(m->files.size() == 1);
        CHECK(find_diagnostic(*m, "E_SPLIT_MISSING") == nullptr);
        // A split.count of 0 is also outside 1..1024 (G58 a).
        require_accepted(
            *m,
            count == 0 ? std::vector<std::string>{"W_SPLIT_METADATA", "W_SPLIT_METADATA"} : std::vector<std::string>{"W_SPLIT_METADATA"});
        const Diagnostic* said = find_diagnostic(*m, "W_SPLIT_METADATA");
        CHECK(said->message ==
              std::string("named as part 1 of 2 but ") +
                  (count ? "its split.count is " + std::to_string(*count) : std::string("has no split.count")) +
                  ": read alone, as llama.cpp reads it; the files named beside it are not joined");
    }
    // Named as the second part, or as the first of 2000 (past the shard-count cap), it is read
    // alone as well: the opened file's keys decide, and neither edit verification nor the cap
    // takes it for a part.
    write_whole_file(dir.file("y-00001-of-02000.gguf"), t1_bytes());
    for (const char* name : {"x-00002-of-00002.gguf", "y-00001-of-02000.gguf"}) {
        INFO(name);
        auto m = open_gguf(dir.file(name));
        REQUIRE(m.ok());
        CHECK(m->files.size() == 1);
        require_accepted(*m, {"W_SPLIT_METADATA"});
        auto source = open_file(dir.file(name));
        REQUIRE(source.ok());
        CHECK_FALSE(read_split_model_with_part(*source, dir.file(name)));
    }
    CHECK(find_diagnostic(*open_gguf(dir.file("x-00002-of-00002.gguf")), "W_SPLIT_METADATA")->message ==
          "named as part 2 of 2 but has no split.count: read alone, as llama.cpp reads it; the files named beside it are not joined");
    // A split.count of 2 joins the shard beside it.
    write_whole_file(dir.file("x-00001-of-00002.gguf"), t1_plus_kvs(2, [](GgufBuilder& b) {
                         b.kv("split.no", ValueType::u16).u16(0);
                         b.kv("split.count", ValueType::u16).u16(2);
                     }));
    auto joined = open_gguf(dir.file("x-00001-of-00002.gguf"));
    REQUIRE(joined.ok());
    CHECK(joined->files.size() == 2);
}

TEST_CASE("G58 (d) a Jinja payload in the chat template is inert text", "[gguf][malformed]") {
    const std::string payload =
        "{% for c in ().__class__.__base__.__subclasses__() %}{% if c.__name__ == 'catch_warnings' %}"
        "{{ c()._module.__builtins__['open']('pwned.txt', 'w').write('x') }}{% endif %}{% endfor %}"
        "{{ self.__init__.__globals__.__builtins__.__import__('os').popen('touch pwned2').read() }}";
    TempDir dir;
    write_whole_file(dir.file("model.gguf"), t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_string("tokenizer.chat_template", payload); }));
    auto m = open_gguf(dir.file("model.gguf"));
    REQUIRE(m.ok());
    require_accepted(*m);
    CHECK(m->get_string("tokenizer.chat_template") == payload);
    CHECK(!format_value(m->find("tokenizer.chat_template")->value).empty());
    size_t entries = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        CHECK(entry.path().filename() == "model.gguf");
        ++entries;
    }
    CHECK(entries == 1);
}

TEST_CASE("G58 (e) a 1 GiB chat template is refused by its length, never copied", "[gguf][malformed]") {
    TempDir dir;
    const uint64_t length = 1ull << 30;
    GgufBuilder b;
    b.header(0, 2).kv_string("general.architecture", "llama").kv("tokenizer.chat_template", ValueType::string).u64(length);
    const uint64_t length_at = b.size() - 8;
    write_whole_file(dir.file("big.gguf"), b.bytes);
    REQUIRE(::truncate(dir.file("big.gguf").c_str(), static_cast<off_t>(b.size() + length)) == 0);
    auto start = std::chrono::steady_clock::now();
    auto m = open_gguf(dir.file("big.gguf"));
    REQUIRE(m.ok());
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 30.0);
    require_error(*m, "E_LIMIT", "kv[1].value", length_at);
    CHECK(first_error(*m)->message.find("max_string_bytes") != std::string::npos);
}

namespace {

// Shard `no` (0-based) of a 3-shard split model with two F32[8] tensors per shard; tensor k of
// the whole model holds the values 100·k + i.
void write_shard(const std::string& path, uint16_t no) {
    Model m;
    m.format = Format::gguf;
    auto add = [&](std::string key, Value value) {
        MetadataEntry e;
        e.key = std::move(key);
        e.value = std::move(value);
        m.metadata.push_back(std::move(e));
    };
    if (no == 0) add("general.architecture", Value::of_string("llama"));
    add("split.no", Value::of_scalar(Scalar{ValueType::u16, no}));
    add("split.count", Value::of_scalar(Scalar{ValueType::u16, 3}));
    add("split.tensors.count", Value::of_scalar(Scalar{ValueType::i32, 6}));
    for (int k = 0; k < 2; ++k) {
        TensorInfo t;
        t.name = "blk." + std::to_string(2 * no + k) + ".weight";
        t.type = describe_ggml_type(0);
        t.ne = {8};
        t.n_elements = 8;
        t.n_bytes = 32;
        m.tensors.push_back(t);
    }
    auto provider = [no](size_t index, uint64_t offset, uint64_t length, void* dst) -> Status {
        std::vector<float> values(8);
        for (int i = 0; i < 8; ++i) values[i] = static_cast<float>(100 * (2 * no + index) + i);
        std::memcpy(dst, reinterpret_cast<const uint8_t*>(values.data()) + offset, length);
        return ok_status();
    };
    REQUIRE(write_gguf(m, path, nullptr, provider).ok());
}

}  // namespace

TEST_CASE("G58 a 3-shard split model opens as one Model from any shard", "[gguf][malformed][split]") {
    TempDir dir;
    for (uint16_t no = 0; no < 3; ++no) write_shard(dir.file("name-0000" + std::to_string(no + 1) + "-of-00003.gguf"), no);
    for (const char* opened : {"name-00001-of-00003.gguf", "name-00002-of-00003.gguf", "name-00003-of-00003.gguf"}) {
        INFO(opened);
        auto m = open_gguf(dir.file(opened));
        REQUIRE(m.ok());
        require_accepted(*m);
        REQUIRE(m->files.size() == 3);
        CHECK(m->files[2].path == dir.file("name-00003-of-00003.gguf"));
        CHECK(m->get_string("general.architecture") == "llama");
        CHECK(m->get_uint("split.no") == 0u);
        REQUIRE(m->tensors.size() == 6);
        for (size_t k = 0; k < 6; ++k) {
            CHECK(m->tensors[k].name == "blk." + std::to_string(k) + ".weight");
            CHECK(m->tensors[k].file == k / 2);
            float v[8];
            REQUIRE(m->read_tensor_bytes(k, 0, sizeof v, v).ok());
            CHECK(v[7] == static_cast<float>(100 * k + 7));
        }
    }
}

TEST_CASE("G58 a missing shard is E_SPLIT_MISSING - the other shards stay readable", "[gguf][malformed][split]") {
    TempDir dir;
    for (uint16_t no = 0; no < 3; ++no) write_shard(dir.file("name-0000" + std::to_string(no + 1) + "-of-00003.gguf"), no);
    std::filesystem::remove(dir.file("name-00003-of-00003.gguf"));
    auto m = open_gguf(dir.file("name-00001-of-00003.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_SPLIT_MISSING", "split", std::nullopt);
    CHECK(first_error(*m)->message.find("shard 3 of 3") != std::string::npos);
    CHECK(first_error(*m)->file == 2);
    CHECK(m->partial);
    REQUIRE(m->files.size() == 3);
    CHECK(m->files[2].source == nullptr);
    REQUIRE(m->tensors.size() == 4);
    float v[8];
    CHECK(m->read_tensor_bytes(3, 0, sizeof v, v).ok());

    std::filesystem::remove(dir.file("name-00001-of-00003.gguf"));
    m = open_gguf(dir.file("name-00002-of-00003.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_SPLIT_MISSING", "split", std::nullopt);
    CHECK(m->metadata.empty());
    CHECK(m->tensors.size() == 2);
}
