// model/truncation.h through open_model: a file cut inside its tensor data gets one summary first,
// and every tensor whose bytes are gone is marked.
#include <catch2/catch.hpp>

#include "gguf_builder.h"
#include "mlens/model/model_json.h"
#include "mlens/model/truncation.h"
#include "mlens/open/target.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

// Three F32[16] tensors a, b, c (64 bytes each) at data offsets 0, 64, 128; data from byte 128 to 320.
// One [16] tensor of a three-tensor GGUF: its name, ggml type and data offset.
struct Placed {
    std::string name;
    uint32_t type = 0;
    uint64_t offset = 0;
};

// A GGUF of three [16] tensors placed as given (by default F32 a, b, c packed at 0, 64, 128: a
// 128-byte header), followed by `floats` F32 values of data.
std::vector<uint8_t> placed_gguf(const std::vector<Placed>& t, uint64_t floats = 48) {
    GgufBuilder b;
    b.header(3, 0);
    for (const Placed& p : t) b.tensor_info(p.name, {16}, p.type, p.offset);
    b.pad_to(32);
    b.f32_run(floats);
    return b.bytes;
}

std::vector<uint8_t> three_tensor_gguf(const std::vector<std::string>& names = {"a", "b", "c"}) {
    std::vector<uint8_t> bytes = placed_gguf({{names[0], 0, 0}, {names[1], 0, 64}, {names[2], 0, 128}});
    REQUIRE(bytes.size() == (names[0] == "a" ? 128u + 192u : bytes.size()));
    return bytes;
}

// The model's first diagnostic is its truncation summary.
bool is_summary_first(const Model& m) {
    return !m.diagnostics.empty() && m.diagnostics[0].code == ErrorCode::E_TRUNCATED_DATA && m.diagnostics[0].field == "data";
}

}  // namespace

TEST_CASE("a GGUF cut inside its tensor data is summarized once, first", "[truncation]") {
    TempDir dir;
    std::vector<uint8_t> bytes = three_tensor_gguf();
    bytes.resize(224);  // inside b; c is gone
    write_whole_file(dir.file("cut.gguf"), bytes);
    auto m = open_model(dir.file("cut.gguf"));
    REQUIRE(m.ok());
    REQUIRE(m->diagnostics.size() == 3);
    const Diagnostic& summary = m->diagnostics[0];
    CHECK(summary.to_line() ==
          "error: GGUF E_TRUNCATED_DATA data offset=224: file ends at 224 of 320 bytes: "
          "96 bytes of tensor data missing; 2 of 3 tensors affected");
    CHECK(m->diagnostics[1].code == ErrorCode::E_TENSOR_OUT_OF_BOUNDS);
    CHECK(m->diagnostics[2].code == ErrorCode::E_TENSOR_OUT_OF_BOUNDS);
    CHECK(m->tensors[0].presence == DataPresence::complete);
    CHECK(m->tensors[1].presence == DataPresence::partial);
    CHECK(m->tensors[2].presence == DataPresence::missing);
    CHECK(tensor_to_json(m->tensors[1], m->format)["data"] == "partial");
    CHECK(tensor_to_json(m->tensors[0], m->format)["data"] == "complete");

    Model again = *m;
    mark_missing_data(again);
    CHECK(again.diagnostics.size() == 3);
}

TEST_CASE("a whole file whose offsets place a tensor past its end is said to be no cut file", "[truncation]") {
    TempDir dir;
    // a, b, c of 64 bytes each, c placed at 192 instead of 128: the file holds the 192 bytes the
    // three need as ggml packs them, and c's offset reaches 64 bytes past its end.
    write_whole_file(dir.file("offsets.gguf"), placed_gguf({{"a", 0, 0}, {"b", 0, 64}, {"c", 0, 192}}));
    auto m = open_model(dir.file("offsets.gguf"));
    REQUIRE(m.ok());
    CHECK(m->diagnostics[0].to_line() ==
          "error: GGUF E_TRUNCATED_DATA data offset=320: file ends at 320 of 384 bytes: 64 bytes of tensor data missing; 1 of 3 tensors "
          "affected (not a cut file: the 320 bytes its header and tensors need, as ggml packs them, are all there; the header's "
          "offsets place tensors past its end)");
    // A file cut short says nothing more.
    std::vector<uint8_t> cut = three_tensor_gguf();
    cut.resize(224);
    write_whole_file(dir.file("cut.gguf"), cut);
    auto c = open_model(dir.file("cut.gguf"));
    REQUIRE(c.ok());
    CHECK(c->diagnostics[0].message.find("not a cut file") == std::string::npos);
    // The one answer the views take.
    CHECK(offsets_past_end(*m, 0));
    CHECK_FALSE(offsets_past_end(*c, 0));
    CHECK_FALSE(offsets_past_end(*c, 1));  // no such file
}

TEST_CASE("a tensor the summary does not cover keeps its out-of-bounds row in lists and in the error count", "[truncation]") {
    TempDir dir;
    // a and b F32[16] at 0 and 64; u of a type ggml does not know (size unknown) placed at 4096,
    // far past the end; the file cut inside b. The summary covers b, not u.
    std::vector<uint8_t> bytes = placed_gguf({{"a", 0, 0}, {"u", 99, 4096}, {"b", 0, 64}}, 32);
    bytes.resize(bytes.size() - 32);
    write_whole_file(dir.file("unknown.gguf"), bytes);
    auto m = open_model(dir.file("unknown.gguf"));
    REQUIRE(m.ok());
    REQUIRE(is_summary_first(*m));
    CHECK(m->tensors[1].presence == DataPresence::complete);  // its size, and so its end, is unknown
    CHECK(m->tensors[2].presence == DataPresence::partial);
    std::vector<std::string> listed;
    for (const ListedDiagnostic& l : listed_diagnostics(*m))
        if (m->diagnostics[l.diagnostic].severity == Severity::error)
            listed.push_back(std::string(code_name(m->diagnostics[l.diagnostic].code)) + " " + m->diagnostics[l.diagnostic].field);
    CHECK(listed == std::vector<std::string>{"E_TRUNCATED_DATA data", "E_TENSOR_OUT_OF_BOUNDS tensors[1]"});
    CHECK(listed_error_count(*m) == 2);
    CHECK(m->error_count() == 3);  // b's own out-of-bounds row, which the summary stands for
    CHECK(listed_count(*m) == listed_diagnostics(*m).size());
}

TEST_CASE("a cut file is listed as its summary with the cut tensors under it, by name in natural order", "[truncation]") {
    TempDir dir;
    std::vector<uint8_t> bytes = three_tensor_gguf({"blk.1.w", "blk.10.w", "blk.9.w"});
    bytes.resize(bytes.size() - 96);  // inside blk.10.w; blk.9.w is gone
    write_whole_file(dir.file("cut.gguf"), bytes);
    auto m = open_model(dir.file("cut.gguf"));
    REQUIRE(m.ok());
    REQUIRE(m->diagnostics.size() == 3);
    const std::vector<ListedDiagnostic> listed = listed_diagnostics(*m);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].diagnostic == 0);
    CHECK(listed[0].cut == std::vector<size_t>{2, 1});
    CHECK(cut_tensor_text(*m, 1) == "32 of 64 bytes present");
    CHECK(cut_tensor_text(*m, 2) == "0 of 64 bytes present");

    write_whole_file(dir.file("whole.gguf"), three_tensor_gguf());
    auto whole = open_model(dir.file("whole.gguf"));
    REQUIRE(whole.ok());
    CHECK(listed_diagnostics(*whole).empty());
}

TEST_CASE("a whole file has no summary and a file cut in its header has none either", "[truncation]") {
    TempDir dir;
    write_whole_file(dir.file("whole.gguf"), three_tensor_gguf());
    auto whole = open_model(dir.file("whole.gguf"));
    REQUIRE(whole.ok());
    CHECK(whole->diagnostics.empty());
    std::vector<uint8_t> head = three_tensor_gguf();
    head.resize(100);  // inside the third tensor info
    write_whole_file(dir.file("head.gguf"), head);
    auto cut = open_model(dir.file("head.gguf"));
    REQUIRE(cut.ok());
    REQUIRE(cut->error_count() == 1);
    CHECK(cut->diagnostics[0].code == ErrorCode::E_TRUNCATED);
}

TEST_CASE("a safetensors file cut short marks its tensors and keeps the reader's error after the summary", "[truncation]") {
    TempDir dir;
    std::vector<uint8_t> bytes = SafetensorsBuilder()
                                     .tensor("x", "F32", "[4]", std::vector<uint8_t>(16, 1))
                                     .tensor("y", "F32", "[4]", std::vector<uint8_t>(16, 2))
                                     .bytes();
    const uint64_t size = bytes.size();
    bytes.resize(size - 8);
    write_whole_file(dir.file("cut.safetensors"), bytes);
    auto m = open_model(dir.file("cut.safetensors"));
    REQUIRE(m.ok());
    REQUIRE(m->diagnostics.size() == 2);
    CHECK(m->diagnostics[0].to_line() ==
          "error: safetensors E_TRUNCATED_DATA data offset=" + std::to_string(size - 8) + ": file ends at " + std::to_string(size - 8) +
              " of " + std::to_string(size) + " bytes: 8 bytes of tensor data missing; 1 of 2 tensors affected");
    CHECK(m->diagnostics[1].code == ErrorCode::MetadataIncompleteBuffer);
    CHECK(m->tensors[0].presence == DataPresence::complete);
    CHECK(m->tensors[1].presence == DataPresence::partial);
}

TEST_CASE("a cut shard of a split GGUF is named in its summary", "[truncation]") {
    TempDir dir;
    write_whole_file(dir.file("m-00001-of-00002.gguf"), t1_plus_kvs(2, [](GgufBuilder& b) {
                         b.kv("split.no", ValueType::u16).u16(0);
                         b.kv("split.count", ValueType::u16).u16(2);
                     }));
    std::vector<uint8_t> second = three_tensor_gguf();
    second.resize(128);  // the header only: every tensor of shard 2 is gone
    write_whole_file(dir.file("m-00002-of-00002.gguf"), second);
    auto m = open_model(dir.file("m-00001-of-00002.gguf"));
    REQUIRE(m.ok());
    REQUIRE(!m->diagnostics.empty());
    CHECK(m->diagnostics[0].file == 1);
    CHECK(m->diagnostics[0].message ==
          "m-00002-of-00002.gguf: file ends at 128 of 320 bytes: 192 bytes of tensor data missing; 3 of 3 tensors affected");
    CHECK(m->tensors[0].presence == DataPresence::complete);
    CHECK(m->tensors[1].presence == DataPresence::missing);
    // Shard 2's out-of-bounds rows name each tensor by its place in the shard (tensors[0..2]) and
    // by its index in the model (1..3); the summary stands for all three.
    std::vector<uint64_t> named;
    for (const Diagnostic& d : m->diagnostics)
        if (d.code == ErrorCode::E_TENSOR_OUT_OF_BOUNDS) {
            REQUIRE(d.tensor);
            CHECK(d.field == "tensors[" + std::to_string(*d.tensor - 1) + "]");
            CHECK(m->tensors[*d.tensor].file == 1);
            named.push_back(*d.tensor);
        }
    CHECK(named == std::vector<uint64_t>{1, 2, 3});
    CHECK(listed_error_count(*m) == 1);
    REQUIRE(listed_diagnostics(*m).size() == 1);
    CHECK(listed_diagnostics(*m)[0].cut == std::vector<size_t>{1, 2, 3});
}
