// Folders: one model.safetensors, or an index with shards, plus the *.json files beside them.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "mlens/formats/safetensors_reader.h"
#include "mlens/open/target.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using test::safetensors_bytes;
using test::st_entry;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A shard holding the named U8[2] tensors, whose bytes are {k, k} for the k-th name.
std::vector<uint8_t> shard(const std::vector<std::string>& names, uint8_t first_value = 1) {
    test::SafetensorsBuilder b;
    b.metadata("format", "pt");
    for (size_t k = 0; k < names.size(); ++k)
        b.tensor(names[k], "U8", "[2]", std::vector<uint8_t>(2, static_cast<uint8_t>(first_value + k)));
    return b.bytes();
}

std::string index_json(const std::vector<std::pair<std::string, std::string>>& weight_map) {
    std::string s = "{\"metadata\":{\"total_size\":8},\"weight_map\":{";
    for (size_t i = 0; i < weight_map.size(); ++i)
        s += (i ? "," : "") + std::string("\"") + weight_map[i].first + "\":\"" + weight_map[i].second + "\"";
    return s + "}}";
}

const Diagnostic* find_code(const Model& m, const std::string& code) {
    for (const Diagnostic& d : m.diagnostics)
        if (std::string(code_name(d.code)) == code) return &d;
    return nullptr;
}

Model open_dir(const test::TempDir& dir) {
    auto m = open_model(dir.path());
    REQUIRE(m.ok());
    return std::move(m).value();
}

}  // namespace

TEST_CASE("a folder with model.safetensors and its json files", "[safetensors][folder]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("model.safetensors"), shard({"a", "b"}));
    test::write_whole_file(dir.file("config.json"), bytes_of("{\"model_type\":\"llama\"}"));
    test::write_whole_file(dir.file("tokenizer_config.json"), bytes_of("{\"chat_template\":\"{{ x }}\"}"));
    test::write_whole_file(dir.file("notes.txt"), bytes_of("not kept"));
    std::filesystem::create_directory(dir.file("sub.json"));
    Model m = open_dir(dir);
    for (const Diagnostic& d : m.diagnostics) UNSCOPED_INFO(d.to_line());
    // A *.json entry that is no file is named, never opened.
    REQUIRE(m.diagnostics.size() == 1);
    CHECK(m.diagnostics[0].code == ErrorCode::W_SIDE_FILE_SKIPPED);
    CHECK(m.diagnostics[0].field == "file:sub.json");
    CHECK(m.diagnostics[0].message == "cannot be read: a directory, not a file");
    CHECK(m.format == Format::safetensors);
    REQUIRE(m.files.size() == 3);
    CHECK(m.files[0].path == dir.file("model.safetensors"));
    CHECK(m.files[1].path == dir.file("config.json"));
    CHECK(m.files[2].path == dir.file("tokenizer_config.json"));
    REQUIRE(m.tensors.size() == 2);
    CHECK(m.tensors[1].name == "b");
    REQUIRE(m.metadata.size() == 3);
    CHECK(m.metadata[0].key == "format");
    CHECK(m.metadata[1].key == "file:config.json");
    CHECK(m.metadata[1].file == 1);
    CHECK(m.metadata[1].value.text == "{\"model_type\":\"llama\"}");
    CHECK(m.metadata[1].value_range.offset == 0);
    CHECK(m.metadata[1].value_range.length == m.files[1].source->size());
    CHECK(m.get_string("file:tokenizer_config.json") == "{\"chat_template\":\"{{ x }}\"}");
    uint8_t v[2];
    REQUIRE(m.read_tensor_bytes(1, 0, 2, v).ok());
    CHECK(v[0] == 2);
}

TEST_CASE("a folder with an index opens every shard as one Model", "[safetensors][folder]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("model-00002-of-00002.safetensors"), shard({"c"}, 3));
    test::write_whole_file(dir.file("model-00001-of-00002.safetensors"), shard({"a", "b"}, 1));
    test::write_whole_file(dir.file("model.safetensors"), shard({"ignored"}));
    std::string index = index_json(
        {{"c", "model-00002-of-00002.safetensors"}, {"a", "model-00001-of-00002.safetensors"}, {"b", "model-00001-of-00002.safetensors"}});
    test::write_whole_file(dir.file("model.safetensors.index.json"), bytes_of(index));
    Model m = open_dir(dir);
    for (const Diagnostic& d : m.diagnostics) UNSCOPED_INFO(d.to_line());
    CHECK(m.diagnostics.empty());
    CHECK(!m.partial);
    REQUIRE(m.files.size() == 3);
    CHECK(m.files[0].path == dir.file("model-00001-of-00002.safetensors"));
    CHECK(m.files[1].path == dir.file("model-00002-of-00002.safetensors"));
    CHECK(m.files[2].path == dir.file("model.safetensors.index.json"));
    REQUIRE(m.tensors.size() == 3);
    CHECK(m.tensors[0].name == "a");
    CHECK(m.tensors[2].name == "c");
    CHECK(m.tensors[2].file == 1);
    uint8_t v[2];
    REQUIRE(m.read_tensor_bytes(2, 0, 2, v).ok());
    CHECK(v[1] == 3);
    REQUIRE(m.metadata.size() == 2);  // shard 1's __metadata__, then the index as a side file
    CHECK(m.metadata[0].key == "format");
    CHECK(m.metadata[1].key == "file:model.safetensors.index.json");
    CHECK(m.metadata[1].file == 2);
}

TEST_CASE("shard names that leave the folder are never opened", "[safetensors][folder]") {
    test::TempDir outside;
    std::filesystem::create_directory(outside.file("dir"));
    test::TempDir& root = outside;
    const std::string dir = root.file("dir");
    test::write_whole_file(root.file("evil.safetensors"), shard({"evil"}));  // where ../evil.safetensors lands
    test::write_whole_file(dir + "/ok.safetensors", shard({"a"}));
    std::string index = index_json({{"a", "ok.safetensors"},
                                    {"x", "../evil.safetensors"},
                                    {"y", root.file("evil.safetensors")},
                                    {"z", "sub\\\\evil.safetensors"},
                                    {"d", ".."}});
    test::write_whole_file(dir + "/model.safetensors.index.json", bytes_of(index));
    auto opened = open_model(dir);
    REQUIRE(opened.ok());
    const Model& m = *opened;
    CHECK(m.partial);
    size_t rejected = 0;
    for (const Diagnostic& d : m.diagnostics) {
        if (d.code != ErrorCode::E_SHARD_NAME) continue;
        ++rejected;
        CHECK(d.file == 1);  // the index, after the one shard
        CHECK(d.offset.has_value());
    }
    CHECK(rejected == 4);
    const Diagnostic* first = find_code(m, "E_SHARD_NAME");
    REQUIRE(first);
    CHECK(first->field == "weight_map.x");
    CHECK(first->offset == index.find("\"../evil"));
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].name == "a");
    for (const SourceFile& f : m.files) CHECK(f.path.find("evil") == std::string::npos);
}

TEST_CASE("a shard that is missing, and weight_map disagreements", "[safetensors][folder]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("s1.safetensors"), shard({"a", "extra"}));
    test::write_whole_file(dir.file("s2.safetensors"), shard({"b", "a"}));
    std::string index = index_json({{"a", "s1.safetensors"}, {"b", "s1.safetensors"}, {"c", "s3.safetensors"}, {"z", "s2.safetensors"}});
    test::write_whole_file(dir.file("model.safetensors.index.json"), bytes_of(index));
    Model m = open_dir(dir);
    CHECK(m.partial);
    REQUIRE(m.files.size() == 4);  // s1, s2, s3 (not opened), the index
    CHECK(m.files[2].source == nullptr);
    const Diagnostic* missing = find_code(m, "E_SHARD_MISSING");
    REQUIRE(missing);
    CHECK(missing->field == "weight_map");
    CHECK(missing->offset == index.find("\"s3.safetensors\""));
    CHECK(missing->file == 3);
    const Diagnostic* duplicate = find_code(m, "E_DUPLICATE_TENSOR");
    REQUIRE(duplicate);
    CHECK(duplicate->field == "a");
    CHECK(duplicate->file == 1);
    std::vector<std::string> mismatches;
    for (const Diagnostic& d : m.diagnostics)
        if (d.code == ErrorCode::W_INDEX_MISMATCH) mismatches.push_back(d.field);
    // "extra" is not listed; "b" is listed in s1 but lives in s2; "z" is listed in s2, which lacks it.
    CHECK(mismatches == std::vector<std::string>{"extra", "weight_map.b", "weight_map.z"});
}

TEST_CASE("a broken index is reported in the index file", "[safetensors][folder]") {
    test::TempDir dir;
    std::string index = "{\"weight_map\":{\"a\":\"s.safetensors\",}}";
    test::write_whole_file(dir.file("model.safetensors.index.json"), bytes_of(index));
    Model m = open_dir(dir);
    const Diagnostic* d = find_code(m, "E_INDEX_JSON");
    REQUIRE(d);
    CHECK(d->field == "weight_map");
    CHECK(d->offset == index.size() - 2);
    CHECK(d->file == 0);
    REQUIRE(m.files.size() == 1);
    CHECK(m.files[0].path == dir.file("model.safetensors.index.json"));
    SECTION("weight_map of the wrong type") {
        test::write_whole_file(dir.file("model.safetensors.index.json"), bytes_of("{\"weight_map\":{\"a\":1}}"));
        Model s = open_dir(dir);
        const Diagnostic* schema = find_code(s, "E_INDEX_SCHEMA");
        REQUIRE(schema);
        CHECK(schema->offset == 19u);
    }
}

TEST_CASE("symlinks inside the folder are followed", "[safetensors][folder]") {
    test::TempDir blobs, snapshot;
    test::write_whole_file(blobs.file("blob"), test::s1_bytes());
    REQUIRE(::symlink(blobs.file("blob").c_str(), snapshot.file("model.safetensors").c_str()) == 0);
    Model m = open_dir(snapshot);
    CHECK(m.diagnostics.empty());
    CHECK(m.tensors.size() == 1);
}

TEST_CASE("a folder without weights is not a model", "[safetensors][folder]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("config.json"), bytes_of("{}"));
    test::write_whole_file(dir.file("a.safetensors"), test::s1_bytes());
    test::write_whole_file(dir.file("b.safetensors"), test::s1_bytes());
    auto m = open_model(dir.path());
    REQUIRE(!m.ok());
    CHECK(m.error().code == ErrorCode::E_NOT_REGULAR_FILE);
    SECTION("a single *.safetensors of another name opens") {
        std::filesystem::remove(dir.file("b.safetensors"));
        Model one = open_dir(dir);
        CHECK(one.tensors.size() == 1);
        CHECK(one.files[0].path == dir.file("a.safetensors"));
    }
}

TEST_CASE("side files over the size cap are skipped with a warning", "[safetensors][folder]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("model.safetensors"), test::s1_bytes());
    test::write_whole_file(dir.file("big.json"), std::vector<uint8_t>(100, 'x'));
    test::write_whole_file(dir.file("bad.json"), {0xff, 0xfe});
    SafetensorsLimits limits;
    limits.max_side_file_bytes = 64;
    auto m = open_safetensors_folder(dir.path(), limits);
    REQUIRE(m.ok());
    const Diagnostic* skipped = find_code(*m, "W_SIDE_FILE_SKIPPED");
    REQUIRE(skipped);
    CHECK(skipped->field == "file:big.json");
    CHECK(find_code(*m, "W_INVALID_UTF8"));
    CHECK(m->find("file:big.json") == nullptr);
    CHECK(m->find("file:bad.json") != nullptr);
    CHECK(m->error_count() == 0);
}
