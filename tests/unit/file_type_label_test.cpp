// general.file_type against the matrices (gguf_semantic_checks.h, W_FILE_TYPE_LABEL): a label no
// matrix can stand behind is a warning; llama-quantize's mixes and fallbacks never are.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <ggml.h>

#include "loadability_fixtures.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "model_parts.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

// The demo model `demo` labelled `file_type`, written and read back: its W_FILE_TYPE_LABEL warnings.
std::vector<Diagnostic> label_warnings(const std::string& demo, uint32_t file_type) {
    TempDir dir;
    const std::string path = dir.file("labelled.gguf");
    write_demo_variant(path, [&](Model& m) { set_metadata(m, "general.file_type", Value::of_u32(file_type)); }, demo);
    auto model = open_gguf(path);
    REQUIRE(model);
    std::vector<Diagnostic> out;
    for (const Diagnostic& d : model->diagnostics)
        if (d.code == ErrorCode::W_FILE_TYPE_LABEL) out.push_back(d);
    return out;
}

// A model labelled Q3_K_M (12) with 8 matrices: `wide` of them 256 values wide and Q4_K (as a mix
// bumps them), the others 64 wide and Q5_0 (llama-quantize's fallback for Q3_K). Its warnings.
std::vector<Diagnostic> mixed_width_warnings(size_t wide) {
    TempDir dir;
    Model m;
    m.format = Format::gguf;
    add_metadata(m, "general.architecture", Value::of_string("llama"));
    add_metadata(m, "general.file_type", Value::of_u32(12));
    for (size_t i = 0; i < 8; ++i)
        m.tensors.push_back(i < wide ? tensor_info("w" + std::to_string(i), GGML_TYPE_Q4_K, {256, 2})
                                     : tensor_info("n" + std::to_string(i), GGML_TYPE_Q5_0, {64, 2}));
    auto zeros = [](size_t, uint64_t, uint64_t length, void* dst) -> Status {
        std::memset(dst, 0, length);
        return ok_status();
    };
    REQUIRE(write_gguf(m, dir.file("mixed.gguf"), nullptr, zeros).ok());
    auto model = open_gguf(dir.file("mixed.gguf"));
    REQUIRE(model);
    std::vector<Diagnostic> out;
    for (const Diagnostic& d : model->diagnostics)
        if (d.code == ErrorCode::W_FILE_TYPE_LABEL) out.push_back(d);
    return out;
}

}  // namespace

TEST_CASE("a file type label no matrix holds, though some could, is a warning on the key", "[semantic]") {
    // Q8_0 matrices of 64-value rows labelled Q4_0, whose 32-value blocks those rows divide into.
    const std::vector<Diagnostic> q4_0 = label_warnings("tiny-llama-q8_0.gguf", 2);
    REQUIRE(q4_0.size() == 1);
    CHECK(q4_0[0].severity == Severity::warning);
    CHECK(q4_0[0].field == "general.file_type");
    CHECK(q4_0[0].message ==
          "general.file_type is 2 (Q4_0), but none of the file's 16 matrices is Q4_0, though all 16 could be (rows of whole 32-value "
          "blocks): they are Q8_0 \xC3\x97" "16. llama.cpp and Ollama show this label as the file's quantization");
    // Q4_0 matrices labelled F16: every matrix could be F16.
    const std::vector<Diagnostic> f16 = label_warnings("tiny-llama-q4_0.gguf", 1);
    REQUIRE(f16.size() == 1);
    CHECK(f16[0].message ==
          "general.file_type is 1 (F16), but none of the file's 16 matrices is F16, though all 16 could be: they are Q4_0 \xC3\x97" "16. "
          "llama.cpp and Ollama show this label as the file's quantization");
}

TEST_CASE("a file type label its matrices can stand behind draws no warning", "[semantic]") {
    // As written.
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 7).empty());
    CHECK(label_warnings("tiny-llama-q4_0.gguf", 2).empty());
    // Q4_K_M over rows of 64 values: llama-quantize falls back from Q4_K for every matrix whose
    // rows do not divide into 256-value blocks, so no Q4_K matrix is what it would write.
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 15).empty());
    // F32 matrices are not counted (llama-quantize keeps some 2-D tensors F32), nor is ALL_F32.
    CHECK(label_warnings("tiny-llama-f32.gguf", 7).empty());
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 0).empty());
    // MXFP4_MOE is about the experts' matrices: a dense model's are all Q8_0 under it.
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 38).empty());
    // A Q3_K_M mix over a model whose only rows of whole 256-value blocks are ffn_down's: the mix
    // bumps those to Q4_K and the rest fall back, so no matrix is Q3_K; a minority that could be
    // is no evidence against the label. Most matrices that could be Q3_K and none that is, is.
    CHECK(mixed_width_warnings(2).empty());
    CHECK(mixed_width_warnings(6).size() == 1);
    // A label no ggml type stands for (GUESSED, a removed ftype) is not checked.
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 1024).empty());
    CHECK(label_warnings("tiny-llama-q8_0.gguf", 5).empty());
}
