// Read-then-write gives byte-identical files: upstream vocab GGUFs and files our tests write.
#include <catch2/catch.hpp>

#include <filesystem>

#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("upstream vocab GGUFs round-trip byte for byte", "[gguf][upstream][writer]") {
    test::TempDir dir;
    for (const std::string& path : test::upstream_vocab_files()) {
        INFO(path);
        auto model = open_gguf(path);
        REQUIRE(model.ok());
        std::string out = dir.file("copy.gguf");
        Status s = write_gguf(*model, out);
        REQUIRE(s.ok());
        REQUIRE(test::first_difference(test::read_whole_file(out), test::read_whole_file(path)) == -1);
    }
}

TEST_CASE("a written GGUF round-trips and keeps every value", "[gguf][writer]") {
    test::GgufBuilder b;
    b.header(2, 4).kv_string("general.architecture", "llama").kv_u32("general.alignment", 64);
    b.str("test.floats").u32(9).u32(6).u64(3).f32(1.5f).f32(-2.0f).f32(0.25f);
    b.str("test.names").u32(9).u32(8).u64(2).str("a").str("bc");
    b.tensor_info("a", {4, 2}, 0, 0).tensor_info("b", {3}, 0, 64).pad_to(64);
    for (int i = 0; i < 8; ++i) b.f32(static_cast<float>(i));
    b.pad_to(64);
    for (int i = 0; i < 3; ++i) b.f32(10.0f + i);
    b.pad_to(64);
    test::TempDir dir;
    std::string in = dir.file("in.gguf"), out = dir.file("out.gguf");
    test::write_whole_file(in, b.bytes);
    auto model = open_gguf(in);
    REQUIRE(model.ok());
    REQUIRE(model->diagnostics.empty());
    REQUIRE(write_gguf(*model, out).ok());
    CHECK(test::first_difference(test::read_whole_file(out), b.bytes) == -1);
    auto again = open_gguf(out);
    REQUIRE(again.ok());
    CHECK(again->metadata[2].value.array->scalar_at(1).as_double() == -2.0);
    CHECK(again->metadata[3].value.array->string_at(1) == "bc");
    CHECK(again->tensors[1].data_offset == b.bytes.size() - 64);
}

TEST_CASE("the writer never overwrites its input and leaves nothing behind on failure", "[gguf][writer]") {
    test::TempDir dir;
    std::string in = dir.file("in.gguf");
    test::write_whole_file(in, test::t1_bytes());
    auto model = open_gguf(in);
    REQUIRE(model.ok());
    Status s = write_gguf(*model, in);
    REQUIRE(!s.ok());
    CHECK(s.error().code == ErrorCode::E_OUTPUT_IS_INPUT);
    CHECK(test::read_whole_file(in) == test::t1_bytes());

    Status missing_dir = write_gguf(*model, dir.file("no/such/dir/out.gguf"));
    REQUIRE(!missing_dir.ok());
    CHECK(missing_dir.error().code == ErrorCode::E_IO);

    JobContext job;
    job.cancel();
    Status cancelled = write_gguf(*model, dir.file("cancelled.gguf"), &job);
    REQUIRE(!cancelled.ok());
    CHECK(cancelled.error().code == ErrorCode::E_CANCELLED);
    int leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) leftovers += e.path().filename() != "in.gguf";
    CHECK(leftovers == 0);
}
