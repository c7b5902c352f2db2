// Differential test against ggml's gguf reader: valid files and 10,000+ mutations of them are
// given to both readers (ggml through gguf_init_from_buffer, no_alloc). Both must agree on
// accept/reject, and on every value where both accept, except for these deliberate differences:
//  - we open more than ggml, with a warning: big-endian files (W_BIG_ENDIAN), GGUF v1
//    (W_GGUF_V1), tensor types ggml does not know (W_UNKNOWN_TENSOR_TYPE), layouts that are
//    valid but not packed (W_NONCANONICAL_LAYOUT), 64-byte tensor names (W_TENSOR_NAME_LENGTH);
//  - we judge more than ggml's header-only parse: tensor data past the end of the file
//    (E_TENSOR_OUT_OF_BOUNDS), overlapping data (E_TENSOR_OVERLAP), keys longer than 65535
//    bytes (E_KEY_TOO_LONG) and our named caps (E_LIMIT) are errors for us.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <gguf.h>

#include <map>
#include <set>

#include "ggml_agreement.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "test_paths.h"

using namespace mlens;

namespace {

class Mutator {
public:
    explicit Mutator(uint64_t seed) : m_state(seed) {}

    std::vector<uint8_t> mutate(std::vector<uint8_t> b) {
        int n = 1 + static_cast<int>(next() % 3);
        for (int k = 0; k < n && !b.empty(); ++k) apply(b);
        return b;
    }

private:
    uint64_t next() {
        m_state += 0x9E3779B97F4A7C15ull;
        uint64_t z = m_state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    void apply(std::vector<uint8_t>& b) {
        static const uint64_t kInteresting[] = {
            0, 1, 2, 3, 7, 8, 13, 31, 32, 33, 64, 255, 256, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1ull << 32, 1ull << 62, 1ull << 63, ~0ull};
        // Most mutations land in the header, where the parsing happens.
        size_t header = std::min<size_t>(b.size(), 160);
        size_t at = next() % (next() % 4 ? header : b.size());
        switch (next() % 6) {
            case 0:
                b[at] ^= static_cast<uint8_t>(1u << (next() % 8));
                break;
            case 1:
                b[at] = static_cast<uint8_t>(next());
                break;
            case 2: {
                uint64_t v = kInteresting[next() % std::size(kInteresting)];
                size_t width = (next() % 2) ? 8 : 4;
                for (size_t i = 0; i < width && at + i < b.size(); ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
                break;
            }
            case 3:
                b.resize(at);
                break;
            case 4:
                b.insert(b.begin() + at, static_cast<uint8_t>(next()));
                break;
            default:
                b.erase(b.begin() + at);
                break;
        }
    }

    uint64_t m_state;
};

bool has_code(const Model& m, const std::set<std::string>& codes) {
    for (const Diagnostic& d : m.diagnostics)
        if (codes.count(std::string(code_name(d.code)))) return true;
    return false;
}

const std::set<std::string> kWeOpenMore = {"W_BIG_ENDIAN", "W_GGUF_V1", "W_UNKNOWN_TENSOR_TYPE", "W_NONCANONICAL_LAYOUT",
                                           "W_TENSOR_NAME_LENGTH"};
const std::set<std::string> kWeJudgeMore = {"E_TENSOR_OUT_OF_BOUNDS", "E_TENSOR_OVERLAP", "E_KEY_TOO_LONG", "E_LIMIT"};

// Empty when the verdicts agree or differ for a documented reason.
std::string unexplained(const std::vector<uint8_t>& bytes) {
    Model ours = read_gguf(memory_source(bytes));
    gguf_init_params params{true, nullptr};
    gguf_context* g = bytes.empty() ? nullptr : gguf_init_from_buffer(bytes.data(), bytes.size(), params);
    bool we_accept = ours.error_count() == 0;
    std::string why;
    if (g && we_accept)
        why = test::ggml_disagreement(ours, g);
    else if (g && !has_code(ours, kWeJudgeMore))
        why = "ggml accepts, we reject: " + ours.diagnostics.back().to_line();
    else if (!g && we_accept && !has_code(ours, kWeOpenMore))
        why = "ggml rejects, we accept";
    gguf_free(g);
    return why;
}

void quiet(ggml_log_level, const char*, void*) {}

std::vector<uint8_t> rich_fixture() {
    test::GgufBuilder b;
    b.header(3, 6).kv_string("general.architecture", "llama").kv_u32("general.alignment", 32);
    b.kv_u32("llama.block_count", 2).kv_u8("test.flag", 1);
    b.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(3).str("<s>").str("a").str("<0x41>");
    b.str("tokenizer.ggml.scores").u32(9).u32(6).u64(3).f32(0).f32(-1).f32(-2);
    b.tensor_info("a", {32, 2}, 0, 0).tensor_info("q", {32}, 8, 256).tensor_info("z", {4, 0}, 0, 288);
    b.pad_to(32).zeros(256 + 34).pad_to(32);
    return b.bytes;
}

}  // namespace

TEST_CASE("mutated GGUFs: our verdicts and values agree with ggml's except where documented", "[gguf][differential]") {
    ggml_log_set(quiet, nullptr);
    std::vector<std::vector<uint8_t>> seeds = {test::t1_bytes(), rich_fixture(),
                                               test::read_whole_file(test::llama_source_dir() + "/models/ggml-vocab-bert-bge.gguf")};
    for (const auto& seed : seeds) REQUIRE(unexplained(seed) == "");
    std::map<std::string, int> outcomes;
    int runs = 0;
    for (size_t s = 0; s < seeds.size(); ++s) {
        // The 600 kB vocabulary file gets fewer mutations than the small fixtures.
        int count = s == 2 ? 300 : 5000;
        Mutator mutator(1000 + s);
        for (int i = 0; i < count; ++i, ++runs) {
            auto bytes = mutator.mutate(seeds[s]);
            std::string why = unexplained(bytes);
            if (!why.empty()) {
                INFO("seed " << s << " mutation " << i << ": " << why);
                CHECK(why == "");
                ++outcomes["unexplained"];
            }
        }
    }
    CHECK(runs >= 10000);
    CHECK(outcomes["unexplained"] == 0);
    ggml_log_set(nullptr, nullptr);
}
