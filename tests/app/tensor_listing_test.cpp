#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "build_paths.h"
#include "gui_fixture.h"
#include "headless.h"
#include "mlens/analysis/tensor_listing.h"
#include "mlens/open/target.h"
#include "state/array_search.h"
#include "state/document.h"

using namespace mlens;

namespace {

struct Fixture {
    test::TempDir dir;
    Model model;
    DocumentIndex index;
    Fixture() {
        REQUIRE(test::write_gui_fixture(dir.file("f.gguf")));
        auto m = open_model(dir.file("f.gguf"));
        REQUIRE(m.ok());
        model = std::move(m).value();
        index = build_document_index(model);
    }
    // The listing of a query that must list (no invalid pattern).
    TensorListing listed(const TensorQuery& q) const {
        Result<TensorListing> l = list_tensors(model, index, q);
        REQUIRE(l);
        return std::move(l).value();
    }
    std::vector<std::string> names(const TensorListing& l) const {
        std::vector<std::string> out;
        for (const TensorRow& r : l.rows) out.push_back(r.layer_row ? "#layer" : model.tensors[r.index].name);
        return out;
    }
};

}  // namespace

TEST_CASE("tensors filter by text, regex and layer") {
    Fixture f;
    TensorQuery q;
    CHECK(f.listed(q).rows.size() == f.model.tensors.size());
    q.text = "ATTN_Q";
    CHECK(f.names(f.listed(q)) == std::vector<std::string>{"blk.0.attn_q.weight", "blk.1.attn_q.weight"});
    q.text = "blk\\.1\\..*attn";
    q.regex = true;
    TensorListing l = f.listed(q);
    CHECK(l.rows.size() == 4);
    q.text = "blk[";
    Result<TensorListing> invalid = list_tensors(f.model, f.index, q);
    REQUIRE_FALSE(invalid);
    CHECK(invalid.error().code == ErrorCode::E_ARGS);
    CHECK(!invalid.error().message.empty());
    q = TensorQuery{};
    q.layer = 0;
    l = f.listed(q);
    CHECK(l.rows.size() == 6);
    CHECK(l.totals.count == 6);
}

TEST_CASE("tensors sort by any column, stably, and group by layer") {
    Fixture f;
    TensorQuery q;
    q.sort = TensorColumn::size;
    q.descending = true;
    TensorListing l = f.listed(q);
    REQUIRE(l.rows.size() == f.model.tensors.size());
    for (size_t i = 1; i < l.rows.size(); ++i)
        CHECK(f.model.tensors[l.rows[i - 1].index].n_bytes.value_or(0) >= f.model.tensors[l.rows[i].index].n_bytes.value_or(0));
    q.sort = TensorColumn::name;
    q.descending = false;
    l = f.listed(q);
    CHECK(f.model.tensors[l.rows.front().index].name == "blk.0.attn_k.weight");
    q = TensorQuery{};
    q.by_layer = true;
    l = f.listed(q);
    REQUIRE(l.rows.size() == f.model.tensors.size() + f.index.layers.size());
    CHECK(l.rows.front().layer_row);
    q.collapsed = {0};
    CHECK(f.listed(q).rows.size() == l.rows.size() - 6);
    CHECK(l.layer_totals[0].count == 6);
}

TEST_CASE("array search finds pieces by raw and visible text, and ids") {
    Fixture f;
    const ArrayIndex& tokens = *f.index.tokenizer.tokens;
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "WORLD", PieceEncoding::plain) == std::vector<uint64_t>{7, 8});
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "\xC2\xB7world", PieceEncoding::plain) == std::vector<uint64_t>{7});
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "\\n", PieceEncoding::plain) == std::vector<uint64_t>{10});
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "14", PieceEncoding::plain).front() == 14);
    CHECK(search_array(*f.index.tokenizer.types, "tokenizer.ggml.token_type", "control", PieceEncoding::plain) == std::vector<uint64_t>{1, 2});
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "", PieceEncoding::plain).empty());
}

TEST_CASE("a byte-level vocabulary is searched in its stored and its decoded form") {
    auto model = open_model(std::string(MLENS_LLAMA_SOURCE) + "/models/ggml-vocab-qwen2.gguf");
    REQUIRE(model.ok());
    DocumentIndex index = build_document_index(*model);
    REQUIRE(index.tokenizer.encoding == PieceEncoding::byte_level);
    const ArrayIndex& tokens = *index.tokenizer.tokens;
    std::optional<uint64_t> the;  // "Ġthe"
    for (uint64_t i = 0; i < tokens.count && !the; ++i)
        if (tokens.string_at(i, 64) == "\xC4\xA0the") the = i;
    REQUIRE(the);
    const auto finds_the = [&](std::string_view query) {
        std::vector<uint64_t> m = search_array(tokens, "tokenizer.ggml.tokens", query, PieceEncoding::byte_level);
        return std::find(m.begin(), m.end(), *the) != m.end();
    };
    CHECK(finds_the("\xC4\xA0the"));  // as stored
    CHECK(finds_the(" the"));  // decoded
    CHECK(finds_the("\xC2\xB7the"));  // as shown
    CHECK_FALSE(finds_the("\xC2\xB7tha"));
    // 法 (E6 B3 95) is stored as "æ³ķ": the decoded query finds the same tokens as the stored one.
    std::vector<uint64_t> decoded = search_array(tokens, "tokenizer.ggml.tokens", "\xE6\xB3\x95", PieceEncoding::byte_level);
    CHECK(!decoded.empty());
    CHECK(decoded == search_array(tokens, "tokenizer.ggml.tokens", "\xC3\xA6\xC2\xB3\xC4\xB7", PieceEncoding::byte_level));
    // A plain search knows only the stored form.
    CHECK(search_array(tokens, "tokenizer.ggml.tokens", "\xE6\xB3\x95", PieceEncoding::plain).empty());
}

TEST_CASE("the tokens using given characters are found in the text their pieces stand for") {
    auto model = open_model(std::string(MLENS_LLAMA_SOURCE) + "/models/ggml-vocab-qwen2.gguf");
    REQUIRE(model.ok());
    DocumentIndex index = build_document_index(*model);
    const ArrayIndex& tokens = *index.tokenizer.tokens;
    const std::vector<uint32_t> fa = {0x6CD5};  // 法
    std::vector<uint64_t> found = strings_with_code_points(tokens, fa, PieceEncoding::byte_level);
    CHECK(found == search_array(tokens, "tokenizer.ggml.tokens", "\xE6\xB3\x95", PieceEncoding::byte_level));
    CHECK(strings_with_code_points(tokens, fa, PieceEncoding::plain).empty());  // stored as "æ³ķ"
    // The document's code points include the decoded text, so fonts are asked for 法.
    CHECK(std::binary_search(index.code_points.begin(), index.code_points.end(), 0x6CD5u));
}

TEST_CASE("array search hands over matches while it runs, each once and in order") {
    auto model = open_model(std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf");
    REQUIRE(model.ok());
    DocumentIndex index = build_document_index(*model);
    const ArrayIndex& tokens = *index.tokenizer.tokens;
    REQUIRE(tokens.count == 32000);
    std::vector<uint64_t> handed;
    int hand_overs = 0;
    auto all = search_array(tokens, "tokenizer.ggml.tokens", "er", PieceEncoding::plain, nullptr, [&](std::span<const uint64_t> more) {
        CHECK(!more.empty());
        handed.insert(handed.end(), more.begin(), more.end());
        ++hand_overs;
    });
    CHECK(all.size() > 1000);
    CHECK(handed == all);
    CHECK(hand_overs >= 2);  // every 16,384 tokens (when something was found) and at the end

    JobRunner jobs;
    ArraySearch search;
    search.start(jobs, index.tokenizer.tokens, "tokenizer.ggml.tokens", "er");
    size_t seen = 0;
    while (!search.poll()) {
        CHECK(search.matches().size() >= seen);  // rows only ever grow while it runs
        seen = search.matches().size();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    CHECK(search.matches() == all);
}

TEST_CASE("the document index groups metadata and finds the tokenizer") {
    Fixture f;
    std::vector<std::string> labels;
    for (const MetadataGroup& g : f.index.metadata_groups) labels.push_back(g.label);
    CHECK(labels == std::vector<std::string>{"general.*", "llama.*", "tokenizer.*", "other"});
    CHECK(f.index.metadata_groups.back().entries.size() == 1);
    const TokenizerInfo& t = f.index.tokenizer;
    REQUIRE(t.special.size() == 4);
    CHECK(t.special[0].role == "bos");
    CHECK(t.special[1].role == "eos");
    CHECK(t.special[2].role == "pad");
    CHECK(t.special[2].id == 999);
    CHECK(t.special[3].role == "unk");
    CHECK(t.model == "llama");
    CHECK(f.index.layers.size() == 3);
}
