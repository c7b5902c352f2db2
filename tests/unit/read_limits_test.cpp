// Counts and offsets a file states are proved before they are used: a kld base file whose
// header claims more than it holds, or holds (sparsely) more tokens than are read, is refused
// with the field and offset; a GGUF cut inside its tensor-info list never has tensor data read
// from offsets that were not parsed (fsck and stats say why the tensors are not readable); a
// buffer for a whole companion tensor is made only once its bytes are known to be in the file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_builder.h"
#include "mlens/analysis/fsck.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/open/target.h"
#include "mlens/quant/tensor_view.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// The header of a logits file: "_logits_", n_ctx, n_vocab, n_chunk.
std::vector<uint8_t> base_header(uint32_t n_ctx, int32_t n_vocab, int32_t n_chunk) {
    test::GgufBuilder b;
    b.text("_logits_").u32(n_ctx).u32(static_cast<uint32_t>(n_vocab)).u32(static_cast<uint32_t>(n_chunk));
    return b.bytes;
}

int32_t vocab_of(const std::string& path) {
    auto model = open_model(path);
    REQUIRE(model.ok());
    const MetadataEntry* tokens = model->find("tokenizer.ggml.tokens");
    REQUIRE(tokens);
    return static_cast<int32_t>(tokens->value.array->count);
}

// A GGUF of one F32 tensor "a" whose second tensor info is cut after its name.
std::vector<uint8_t> cut_tensor_infos() {
    test::GgufBuilder b;
    b.header(2, 1).kv_string("general.architecture", "llama");
    b.tensor_info("a", {64}, 0, 0);
    b.str("b");
    return b.bytes;
}

constexpr uint64_t kFirstInfoAt = 24 + (8 + 20) + 4 + (8 + 5);  // after the header and its one key

}  // namespace

TEST_CASE("a kld base file that claims more than it holds, or more tokens than are read, is refused", "[kld][limits][cli]") {
    test::TempDir dir;
    const std::string model = demo("tiny-llama-f32.gguf");
    const int32_t n_vocab = vocab_of(model);

    // 1000 chunks of 512 tokens in a file of 20 bytes.
    const std::string lying = dir.file("lying.kld");
    test::write_whole_file(lying, base_header(512, n_vocab, 1000));
    test::CliRun small = test::run_mlens({"kld", "--base", lying, model});
    CHECK(small.exit_status == 1);
    CHECK(small.err.find("E_KLD_BASE n_chunk offset=16: " + lying + ": 20 bytes where n_ctx 512, n_vocab " + std::to_string(n_vocab) +
                         " and 1000 chunks need ") != std::string::npos);

    // 17 chunks of 2^20 tokens, every byte there (sparse): more tokens than a base file is read with.
    const std::string sparse = dir.file("sparse.kld");
    const uint32_t n_ctx = 1u << 20;
    const uint64_t tokens = 17ull * n_ctx;
    const uint64_t size = 20 + tokens * 4 + 17ull * kld_scored_per_chunk(n_ctx) * kld_base_row_size(n_vocab) * 2;
    test::write_whole_file(sparse, base_header(n_ctx, n_vocab, 17));
    REQUIRE(::truncate(sparse.c_str(), static_cast<off_t>(size)) == 0);
    test::CliLimits limits;
    limits.seconds = 60;
    test::CliRun huge = test::run_mlens({"kld", "--base", sparse, model}, limits);
    CHECK(huge.exit_status == 1);
    CHECK(huge.err.find("E_LIMIT n_chunk offset=16: " + sparse + ": 17 chunks of 1048576 tokens are 17825792 tokens, more than the "
                        "16777216 a base file is read with") != std::string::npos);
}

TEST_CASE("a GGUF cut inside its tensor infos: no tensor data is read from offsets never parsed", "[gguf][limits][fsck][stats]") {
    test::TempDir dir;
    const std::string path = dir.file("cut.gguf");
    test::write_whole_file(path, cut_tensor_infos());
    const std::string expected =
        "a is not readable: the tensor-info list is cut before its end, so where the tensor's data lies is not known";

    auto model = open_model(path);
    REQUIRE(model.ok());
    REQUIRE(model->tensors.size() == 1);
    CHECK(model->tensors[0].presence == DataPresence::unknown);
    auto view = TensorView::open(*model, 0);
    REQUIRE_FALSE(view.ok());
    CHECK(view.error().code == ErrorCode::E_TRUNCATED);
    CHECK(view.error().field == "tensors");
    CHECK(view.error().offset == kFirstInfoAt);
    CHECK(view.error().message == expected);
    float value = 0;
    CHECK(model->read_tensor_bytes(0, 0, 4, &value).error().message == expected);

    auto report = fsck_model(*model);
    REQUIRE(report.ok());
    CHECK(report->tensors_scanned == 0);
    bool refused = false;
    for (const Finding& f : report->findings) {
        INFO(f.code << ": " << f.message);
        CHECK(f.code != ErrorCode::F_NAN);
        CHECK(f.code != ErrorCode::F_INF);
        if (f.code == ErrorCode::F_NOT_SCANNED && f.tensor == "a") refused = f.message == "not scanned: " + expected;
    }
    CHECK(refused);

    test::CliRun fsck = test::run_mlens({"fsck", path});
    CHECK(fsck.exit_status == 1);
    CHECK(fsck.out.find("not scanned: " + expected) != std::string::npos);
    CHECK(fsck.out.find("NaN") == std::string::npos);
    test::CliRun stats = test::run_mlens({"stats", path, "a"});
    CHECK(stats.exit_status == 1);
    CHECK(stats.out.empty());
    CHECK(stats.err.find(expected) != std::string::npos);
    CHECK(stats.err.find("-523776") == std::string::npos);
    auto tensors = test::run_mlens({"tensors", path, "--json"});
    CHECK(tensors.out.find("\"unknown\"") != std::string::npos);
}

TEST_CASE("an MLX global scale whose bytes are not in the file is refused before it is read", "[mlx][limits]") {
    test::SafetensorsBuilder sb;
    sb.metadata("quant_type", "nvfp4")
        .tensor("w", "U32", "[2,2]", std::vector<uint8_t>(16, 0x11))
        .tensor("w.scale", "U8", "[2,1]", {0x38, 0x38})
        .tensor("w.global_scale", "F32", "[2]", std::vector<uint8_t>(8, 0));
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m);
    REQUIRE(TensorView::open(m, "w").ok());
    TensorInfo* global = nullptr;
    for (TensorInfo& t : m.tensors)
        if (t.name == "w.global_scale") global = &t;
    REQUIRE(global);
    // As a header that places the scale past the end would, had the reader let it through.
    global->data_offset = m.files[0].source->size() - 4;
    auto view = TensorView::open(m, "w");
    REQUIRE_FALSE(view.ok());
    CHECK(view.error().code == ErrorCode::E_TRUNCATED_DATA);
    CHECK(view.error().field == "tensors");
    CHECK(view.error().offset == global->data_offset);
    CHECK(view.error().message ==
          "w.global_scale: its data (8 bytes at offset " + std::to_string(global->data_offset) + ") is not all in the file");
}
