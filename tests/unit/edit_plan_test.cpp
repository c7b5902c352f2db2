// Metadata edits: typed values from text, the plan of a GGUF header, hostile edits refused with
// their code, and the written file verified (edit/edit_plan.h, edit_write.h).
#include <catch2/catch.hpp>

#include <cstring>

#include "gguf_builder.h"
#include "safetensors_builder.h"
#include "mlens/edit/edit_plan.h"
#include "mlens/edit/edit_write.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/value_format.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr uint32_t kUnknownType = 99;

// Three tensors: a F32 [8] at 0, one of a type ggml does not know at 32 (64 bytes), b F32 [8] at
// 96; every data byte is its index in the data section.
std::vector<uint8_t> fixture_bytes(const std::string& chat_template = "{{ messages }}") {
    test::GgufBuilder b;
    b.header(3, 5);
    b.kv_string("general.architecture", "llama");
    b.kv_string("general.name", "tiny");
    b.kv_u32("tokenizer.ggml.eos_token_id", 2);
    b.kv_string("tokenizer.chat_template", chat_template);
    b.kv_strings("general.tags", {"a", "b"});
    b.tensor_info("a", {8}, 0, 0);
    b.tensor_info("u", {16}, kUnknownType, 32);
    b.tensor_info("b", {8}, 0, 96);
    b.pad_to(32);
    for (int i = 0; i < 128; ++i) b.u8(static_cast<uint8_t>(i));
    return b.bytes;
}

Model open_fixture(const test::TempDir& dir, const std::vector<uint8_t>& bytes, const std::string& name = "in.gguf") {
    test::write_whole_file(dir.file(name), bytes);
    auto model = open_gguf(dir.file(name));
    REQUIRE(model);
    return std::move(*model);
}

EditList edits_of(std::vector<Edit> e) { return EditList{std::move(e)}; }

ErrorCode plan_code(const Model& m, std::vector<Edit> e) {
    auto plan = plan_edit(m, edits_of(std::move(e)));
    REQUIRE_FALSE(plan);
    return plan.error().code;
}

WriteEditOptions forcing(DataPath path) {
    WriteEditOptions options;
    options.force_path = path;
    return options;
}

}  // namespace

TEST_CASE("values from text are read as their type and range-checked", "[edit]") {
    auto u8 = value_from_text("255", {ValueType::u8, std::nullopt});
    REQUIRE(u8);
    CHECK(u8->scalar.bits == 255);
    CHECK(value_from_text("256", {ValueType::u8, std::nullopt}).error().code == ErrorCode::E_RANGE);
    CHECK(value_from_text("-1", {ValueType::u32, std::nullopt}).error().code == ErrorCode::E_RANGE);
    auto i8 = value_from_text("-128", {ValueType::i8, std::nullopt});
    REQUIRE(i8);
    CHECK(i8->scalar.bits == 0x80);
    CHECK(value_from_text("-129", {ValueType::i8, std::nullopt}).error().code == ErrorCode::E_RANGE);
    CHECK(value_from_text("18446744073709551616", {ValueType::u64, std::nullopt}).error().code == ErrorCode::E_RANGE);
    CHECK(value_from_text("1e39", {ValueType::f32, std::nullopt}).error().code == ErrorCode::E_RANGE);
    CHECK(value_from_text("12x", {ValueType::u32, std::nullopt}).error().code == ErrorCode::E_VALUE_TYPE);
    auto f = value_from_text("0.5", {ValueType::f32, std::nullopt});
    REQUIRE(f);
    CHECK(f->scalar.as_double() == 0.5);
    CHECK(value_from_text("true", {ValueType::boolean, std::nullopt})->scalar.bits == 1);
    CHECK(value_from_text("\xff", {ValueType::string, std::nullopt}).error().code == ErrorCode::E_INVALID_UTF8);
    auto ids = value_from_text("[1, 2, 106]", {ValueType::array, ValueType::i32});
    REQUIRE(ids);
    CHECK(format_value(*ids) == "[INT32 × 3] 1, 2, 106");
    auto words = value_from_text("[\"a\", \"\\u00e9\"]", {ValueType::array, ValueType::string});
    REQUIRE(words);
    CHECK(words->array->string_at(1) == "\xc3\xa9");
    CHECK(value_from_text("[[1]]", {ValueType::array, ValueType::i32}).error().code == ErrorCode::E_NESTED_ARRAY);
    CHECK(value_from_text("[1, 300]", {ValueType::array, ValueType::u8}).error().code == ErrorCode::E_RANGE);
    CHECK(value_from_text("[1,]", {ValueType::array, ValueType::u8}).error().code == ErrorCode::E_JSON_SYNTAX);
}

TEST_CASE("set arguments and edits files name their key and type", "[edit]") {
    auto typed = parse_set_argument("my.key:UINT16=7");
    REQUIRE(typed);
    CHECK(typed->key == "my.key");
    REQUIRE(typed->type);
    CHECK(typed->type->type == ValueType::u16);
    auto colon = parse_set_argument("a:b=1");
    REQUIRE(colon);
    CHECK(colon->key == "a:b");
    CHECK_FALSE(colon->type);
    CHECK(parse_set_argument("no-equals").error().code == ErrorCode::E_USAGE);
    auto file = parse_edits_json(R"({"set": {"general.name": "x", "n:ARRAY[INT32]": [1, 2], "t": 3}, "delete": ["d"], "rename": {"r": "s"}})");
    REQUIRE(file);
    REQUIRE(file->size() == 5);
    CHECK((*file)[0].text == "x");
    CHECK((*file)[1].text == "[1, 2]");
    CHECK((*file)[1].type->element == ValueType::i32);
    CHECK((*file)[2].text == "3");
    CHECK((*file)[3].kind == MetadataEditKind::remove);
    CHECK((*file)[4].new_key == "s");
    CHECK(parse_edits_json(R"({"set": {"k": "1", "k": "2"}})").error().code == ErrorCode::E_DUPLICATE_KEY);
    CHECK(parse_edits_json(R"({"sett": {}})").error().code == ErrorCode::E_INVALID);
}

TEST_CASE("known keys have their GGUF type, any architecture's hyperparameters too", "[edit]") {
    CHECK(known_key_type("tokenizer.ggml.eos_token_id")->type == ValueType::u32);
    CHECK(known_key_type("qwen2.context_length")->type == ValueType::u32);
    CHECK(known_key_type("llama.rope.freq_base")->type == ValueType::f32);
    CHECK(known_key_type("general.tags")->element == ValueType::string);
    CHECK_FALSE(known_key_type("my.own.key"));
    CHECK(key_type_from_name("array[float32]")->element == ValueType::f32);
    CHECK_FALSE(key_type_from_name("ARRAY[ARRAY]"));
}

TEST_CASE("an edit plan keeps every unchanged byte and the tensor offsets", "[edit]") {
    test::TempDir dir;
    const auto bytes = fixture_bytes();
    Model m = open_fixture(dir, bytes);
    SECTION("a value of the same size fits in place") {
        auto plan = plan_edit(m, edits_of({Edit::set("tokenizer.ggml.eos_token_id", "3")}));
        REQUIRE(plan);
        CHECK(plan->fits_in_place);
        CHECK(plan->data_path == PlannedDataPath::clone);
        CHECK(plan->new_data_start == m.files[0].data_start);
        CHECK(plan->end_changed - plan->first_changed == 1);
        CHECK(plan->header[plan->first_changed] == 3);
        REQUIRE(plan->changes.size() == 1);
        CHECK(plan->changes[0].value_before == "2");
        CHECK(plan->changes[0].value_after == "3");
        CHECK(plan->changes[0].bytes_before == plan->changes[0].bytes_after);
    }
    SECTION("a longer template moves the data by whole alignment units") {
        const std::string longer(3000, 'x');
        auto plan = plan_edit(m, edits_of({Edit::set("tokenizer.chat_template", longer)}));
        REQUIRE(plan);
        CHECK_FALSE(plan->fits_in_place);
        CHECK(plan->data_path == PlannedDataPath::stream);
        CHECK(plan->new_header_bytes == plan->old_header_bytes + 3000 - 14);
        CHECK(plan->new_data_start % 32 == 0);
        CHECK(plan->tensors[1].new_offset - plan->tensors[1].old_offset == static_cast<uint64_t>(plan->data_shift()));
    }
    SECTION("delete, rename and add list their changes in file order, new keys last") {
        auto plan = plan_edit(m, edits_of({Edit::set("llama.context_length", "4096"), Edit::remove("general.tags"),
                                            Edit::rename("general.name", "general.basename")}));
        REQUIRE(plan);
        REQUIRE(plan->changes.size() == 3);
        CHECK(plan->changes[0].kind == KeyChangeKind::renamed);
        CHECK(plan->changes[1].kind == KeyChangeKind::removed);
        CHECK(plan->changes[2].kind == KeyChangeKind::added);
        CHECK(plan->changes[2].type_after == "UINT32");
        CHECK(plan->key_count_after == 5);
    }
}

TEST_CASE("hostile edits are refused with their code before anything is planned", "[edit]") {
    test::TempDir dir;
    Model m = open_fixture(dir, fixture_bytes());
    CHECK(plan_code(m, {Edit::set("bad\xff.key:STRING", "x")}) == ErrorCode::E_INVALID_UTF8);
    CHECK(plan_code(m, {Edit::set("", "x", KeyType{})}) == ErrorCode::E_EMPTY_KEY);
    CHECK(plan_code(m, {Edit::set(std::string(70000, 'k'), "x", KeyType{})}) == ErrorCode::E_KEY_TOO_LONG);
    CHECK(plan_code(m, {Edit::set("tokenizer.ggml.eos_token_id", "4294967296")}) == ErrorCode::E_RANGE);
    CHECK(plan_code(m, {Edit::set("general.name", "a"), Edit::set("general.name", "b")}) == ErrorCode::E_EDIT_CONFLICT);
    CHECK(plan_code(m, {Edit::rename("general.name", "general.architecture")}) == ErrorCode::E_DUPLICATE_KEY);
    CHECK(plan_code(m, {Edit::remove("no.such.key")}) == ErrorCode::E_NOT_FOUND);
    CHECK(plan_code(m, {Edit::set("my.own.key", "1")}) == ErrorCode::E_VALUE_TYPE);
    CHECK(plan_code(m, {Edit::set("general.alignment", "64")}) == ErrorCode::E_EDIT_UNSUPPORTED);
}

TEST_CASE("an edit adds no key with a control character - llama.cpp would read another key - and may remove one", "[edit]") {
    test::TempDir dir;
    Model m = open_fixture(dir, fixture_bytes());
    const std::string nul_key("general.name\0hidden", 19);
    CHECK(plan_code(m, {Edit::set(nul_key + ":STRING", "spoofed")}) == ErrorCode::E_BAD_NAME);
    CHECK(plan_code(m, {Edit::set("my.key\nnext:STRING", "x")}) == ErrorCode::E_BAD_NAME);
    CHECK(plan_code(m, {Edit::rename("general.name", nul_key)}) == ErrorCode::E_BAD_NAME);

    // A file that has such a key: the reader says what llama.cpp reads, and the key can go.
    test::GgufBuilder b;
    b.header(1, 2);
    b.kv_string("general.architecture", "llama");
    b.kv_string(nul_key, "spoofed");
    b.tensor_info("a", {8}, 0, 0);
    b.pad_to(32);
    for (int i = 0; i < 32; ++i) b.u8(0);
    Model hostile = open_fixture(dir, b.bytes, "hostile.gguf");
    REQUIRE(hostile.diagnostics.size() == 1);
    CHECK(hostile.diagnostics[0].code == ErrorCode::W_KEY_CHARSET);
    CHECK(hostile.diagnostics[0].message == "key \"general.name\\x00hidden\" holds a NUL byte: llama.cpp reads it as \"general.name\"");
    auto removed = plan_edit(hostile, edits_of({Edit::remove(nul_key)}));
    INFO((removed ? std::string() : removed.error().to_string()));
    CHECK(removed);
}

TEST_CASE("a tensor of a type ggml does not know keeps its bytes and offset, with no overlap", "[edit]") {
    test::TempDir dir;
    Model m = open_fixture(dir, fixture_bytes());
    REQUIRE_FALSE(m.tensors[1].type.known);
    auto plan = plan_edit(m, edits_of({Edit::set("tokenizer.chat_template", std::string(500, 'y'))}));
    REQUIRE(plan);
    for (DataPath forced : {DataPath::stream, DataPath::copy_file_range}) {
        const std::string out = dir.file(std::string("out-") + data_path_name(forced) + ".gguf");
        auto written = write_edit(m, *plan, out, nullptr, forcing(forced));
        REQUIRE(written);
        CHECK(written->data_path == DataPath::stream);
        CHECK(written->verification.passed());
        CHECK(written->verification.tensors_equal == 3);
        auto again = open_gguf(out);
        REQUIRE(again);
        CHECK(again->error_count() == 0);
        const TensorInfo& u = again->tensors[1];
        CHECK(u.type.id == kUnknownType);
        CHECK(u.relative_offset == 32);
        CHECK(again->tensors[2].relative_offset == 96);
        const auto out_bytes = test::read_whole_file(out);
        REQUIRE(out_bytes.size() == again->files[0].data_start + 128);
        for (size_t i = 0; i < 128; ++i) CHECK(out_bytes[again->files[0].data_start + i] == i);
        CHECK(again->get_string("tokenizer.chat_template") == std::string(500, 'y'));
    }
}

TEST_CASE("an edit is never written onto its input", "[edit]") {
    test::TempDir dir;
    Model m = open_fixture(dir, fixture_bytes());
    auto plan = plan_edit(m, edits_of({Edit::set("general.name", "other")}));
    REQUIRE(plan);
    const auto before = test::read_whole_file(dir.file("in.gguf"));
    auto written = write_edit(m, *plan, dir.file("in.gguf"));
    REQUIRE_FALSE(written);
    CHECK(written.error().code == ErrorCode::E_OUTPUT_IS_INPUT);
    CHECK(test::read_whole_file(dir.file("in.gguf")) == before);
    CHECK(test::leftovers_in(dir.path()) == 0);
}

TEST_CASE("a safetensors file's __metadata__ is edited and every other header byte kept", "[edit][safetensors]") {
    test::TempDir dir;
    test::SafetensorsBuilder b;
    b.metadata("format", "pt").metadata("note", "old note");
    b.tensor("w", "F32", "[2]", {0, 0, 192, 63, 0, 0, 0, 192});
    const std::string in = dir.file("in.safetensors");
    test::write_whole_file(in, b.bytes());
    auto model = open_safetensors(in);
    REQUIRE(model);
    SECTION("a longer note moves the data, which keeps its bytes") {
        auto plan = plan_edit(*model, edits_of({Edit::set("note", "a much longer note than before"), Edit::rename("format", "fmt"),
                                                 Edit::set("added", "yes")}));
        REQUIRE(plan);
        CHECK_FALSE(plan->fits_in_place);
        CHECK(plan->new_data_start % 8 == 0);
        auto written = write_edit(*model, *plan, dir.file("out.safetensors"));
        REQUIRE(written);
        CHECK(written->verification.passed());
        const auto out = test::read_whole_file(dir.file("out.safetensors"));
        const std::string header(out.begin() + 8, out.begin() + static_cast<std::ptrdiff_t>(plan->new_data_start));
        CHECK(header.substr(0, header.find_last_not_of(' ') + 1) ==
              R"({"__metadata__":{"fmt":"pt","note":"a much longer note than before","added":"yes"},)" +
                  test::st_entry("w", "F32", "[2]", 0, 8) + "}");
        CHECK(std::vector<uint8_t>(out.end() - 8, out.end()) == std::vector<uint8_t>{0, 0, 192, 63, 0, 0, 0, 192});
    }
    SECTION("a shorter note fits in place, padded with spaces") {
        auto plan = plan_edit(*model, edits_of({Edit::set("note", "short")}));
        REQUIRE(plan);
        CHECK(plan->fits_in_place);
        CHECK(plan->new_data_start == model->files[0].data_start);
    }
    SECTION("a value that is not a string is refused") {
        CHECK(plan_code(*model, {Edit::set("n", "1", KeyType{ValueType::u32, std::nullopt})}) == ErrorCode::E_VALUE_TYPE);
    }
}
