// malformed-inputs.md B2 cases with size and time limits: S04b (a 100 MB header), S18 (a shape of
// 1,000,000 dimensions) and S30 (1,000,000 tensors), plus a header exactly at the cap.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "mlens/formats/safetensors_reader.h"
#include "safetensors_builder.h"
#include "test_paths.h"
#include "time_limit.h"

using namespace mlens;
using test::CpuStopwatch;
using test::header_offset;
using test::kSlowdown;
using test::safetensors_bytes;
using test::st_entry;

namespace {

// A file whose header is "{}" followed by spaces up to `n` bytes, written in chunks.
void write_padded_empty_header(const std::string& path, uint64_t n) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    auto prefix = safetensors_bytes("{}", {}, n);
    std::fwrite(prefix.data(), 1, prefix.size(), f);
    std::vector<char> spaces(1 << 20, ' ');
    for (uint64_t left = n - 2; left > 0;) {
        size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, spaces.size()));
        REQUIRE(std::fwrite(spaces.data(), 1, chunk, f) == chunk);
        left -= chunk;
    }
    REQUIRE(std::fclose(f) == 0);
}

// Opens a file whose header is padded to `n` bytes; `seconds` is how long opening it took.
Model open_padded_header(uint64_t n, double& seconds) {
    test::TempDir dir;
    write_padded_empty_header(dir.file("padded.safetensors"), n);
    CpuStopwatch watch;
    auto m = open_safetensors(dir.file("padded.safetensors"));
    seconds = watch.seconds();
    REQUIRE(m.ok());
    return std::move(*m);
}

}  // namespace

TEST_CASE("S04b a header over the cap is refused before it is read", "[safetensors][limits]") {
    double seconds = 0;
    const Model m = open_padded_header(100'000'001, seconds);
    test::require_rejected(m, "HeaderTooLarge", "header", 0);
    CHECK(seconds < 1.0 * kSlowdown);
}

TEST_CASE("a header exactly at the cap is accepted", "[safetensors][limits]") {
    double seconds = 0;
    const Model m = open_padded_header(100'000'000, seconds);
    CHECK(m.error_count() == 0);
    CHECK(m.tensors.empty());
    CHECK(seconds < 10.0 * kSlowdown);
}

TEST_CASE("S18 a shape of 1,000,000 dimensions hits the rank cap", "[safetensors][limits]") {
    std::string shape = "[1";
    for (int i = 1; i < 1000000; ++i) shape += ",1";
    shape += "]";
    std::string h = "{" + st_entry("w", "F32", shape, 0, 4) + "}";
    CpuStopwatch watch;
    Model m = test::require_rejected(safetensors_bytes(h, 4), "E_LIMIT", "w.shape", header_offset(h, "[1,"));
    CHECK_THAT(m.diagnostics.back().message, Catch::Contains("max_rank=1024"));
    CHECK(watch.seconds() < 20.0 * kSlowdown);
    SECTION("1024 dimensions are fine") {
        std::string ok = "[1";
        for (int i = 1; i < 1024; ++i) ok += ",1";
        ok += "]";
        Model a = test::require_accepted(safetensors_bytes("{" + st_entry("w", "F32", ok, 0, 4) + "}", 4));
        CHECK(a.tensors[0].ne.size() == 1024);
    }
}

TEST_CASE("S30 1,000,000 zero-size tensors", "[safetensors][limits]") {
    std::string h = "{";
    h.reserve(64'000'000);
    for (int i = 0; i < 1000000; ++i) {
        h += i ? ",\"tensor." : "\"tensor.";
        h += std::to_string(i);
        h += "\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}";
    }
    h += "}";
    REQUIRE(h.size() > 55'000'000);
    CpuStopwatch watch;
    Model m = test::require_accepted(safetensors_bytes(h, 0));
    CHECK(watch.seconds() < 30.0 * kSlowdown);
    REQUIRE(m.tensors.size() == 1000000);
    CHECK(m.tensors[999999].name == "tensor.999999");
    CHECK(m.tensors[999999].n_bytes == 0u);
}
