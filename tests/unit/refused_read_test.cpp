// A read that the byte source refuses (a remote file past its download limit) while a GGUF or
// safetensors header is parsed is the parse's one error, with the source's code and reason: never
// bytes taken as zeros and judged (a "bad magic" of 00 00 00 00, a key of NUL bytes).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "failing_source.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kLimit = "E_DOWNLOAD_LIMIT: fetching more would pass the download limit";

// The first window a header is read through: a read that straddles its end is fetched anew.
constexpr uint64_t kFirstWindow = 64u << 10;

// Checks that `model` holds one diagnostic: the download limit's error, on `field` at `offset`.
void require_limit_error(const Model& model, const std::string& field, uint64_t offset) {
    REQUIRE(model.diagnostics.size() == 1);
    const Diagnostic& d = model.diagnostics[0];
    INFO(d.field << ": " << d.message);
    CHECK(d.code == ErrorCode::E_DOWNLOAD_LIMIT);
    CHECK(d.field == field);
    CHECK(d.offset == std::optional<uint64_t>(offset));
    CHECK(d.message.ends_with(": fetching more would pass the download limit"));
}

Model read_gguf_until(const std::vector<uint8_t>& bytes, uint64_t good) {
    return read_gguf(std::make_shared<FailingSource>(bytes, good, kLimit));
}

// A GGUF of two string KVs whose second KV starts `before_window_end` bytes before the end of the
// first window.
std::vector<uint8_t> gguf_with_second_kv_at(uint64_t before_window_end) {
    GgufBuilder b;
    b.header(0, 2);
    const uint64_t first_kv_fixed = 8 + 1 + 4 + 8;  // key length, key "a", type, value length
    b.kv_string("a", std::string(kFirstWindow - before_window_end - b.size() - first_kv_fixed, 'x'));
    REQUIRE(b.size() == kFirstWindow - before_window_end);
    b.kv_string("general.name", "a name that the first window cuts");
    return b.bytes;
}

}  // namespace

TEST_CASE("a GGUF whose first bytes the source refuses is the source's error on the magic, never a bad magic", "[gguf][remote]") {
    GgufBuilder b;
    b.header(0, 1).kv_string("general.name", "tiny");
    for (uint64_t good : {uint64_t{0}, uint64_t{3}, uint64_t{4}, uint64_t{16}, uint64_t{b.size() - 1}}) {
        INFO("the source gives " << good << " bytes");
        require_limit_error(read_gguf_until(b.bytes, good), "magic", 0);
    }
    REQUIRE(read_gguf_until(b.bytes, b.size()).diagnostics.empty());
}

TEST_CASE("a GGUF key or string value the source refuses is the source's error on that field, never text of NUL bytes", "[gguf][remote]") {
    // The key's length lies in the first window, its text (at 8 bytes past the KV's start) runs past it.
    require_limit_error(read_gguf_until(gguf_with_second_kv_at(12), kFirstWindow), "kv[1].key", kFirstWindow - 12 + 8);
    // The key, its type and the value's length lie in the first window, the value's text runs past it.
    const uint64_t value_text_at = kFirstWindow - 40 + 8 + 12 + 4 + 8;
    require_limit_error(read_gguf_until(gguf_with_second_kv_at(40), kFirstWindow), "kv[1].value", value_text_at);
}

TEST_CASE("a safetensors header the source refuses is the source's error, never a length or text of zeros", "[safetensors][remote]") {
    SafetensorsBuilder builder;
    builder.tensor("w", "F32", "[2]", std::vector<uint8_t>(8, 0));
    const std::vector<uint8_t> bytes = builder.bytes();
    require_limit_error(read_safetensors(std::make_shared<FailingSource>(bytes, 0, kLimit)), "header", 0);
    require_limit_error(read_safetensors(std::make_shared<FailingSource>(bytes, 8, kLimit)), "header", 8);
    CHECK(read_safetensors(std::make_shared<FailingSource>(bytes, bytes.size(), kLimit)).diagnostics.empty());
}
