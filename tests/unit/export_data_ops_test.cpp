// The data operations the exporter executes (data_ops.h), on small tensors with known values.
#include <catch2/catch.hpp>

#include <cstring>

#include "mlens/compat/data_ops.h"
#include "mlens/formats/gguf_reader.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;
using compat::DataOp;
using compat::DataOpKind;

namespace {

constexpr uint32_t kF32 = 0, kF16 = 1;

std::vector<float> iota(size_t n, float first = 0.0f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
    return v;
}

Model fixture(const TempDir& dir) {
    TinyModel t;
    t.tensors = {
        {"rows", kF16, {2, 8}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}},
        {"patch", kF16, {1, 1, 2, 6}, iota(12)},
        {"grid", kF32, {1, 4}, {0, 1, 2, 3}},
        {"gate", kF32, {2, 2}, {1, 2, 3, 4}},
        {"up", kF32, {2, 2}, {5, 6, 7, 8}},
    };
    write_tiny_model(t, dir.file("ops.gguf"));
    auto m = open_gguf(dir.file("ops.gguf"));
    REQUIRE(m);
    return std::move(*m);
}

DataOp data_op(DataOpKind kind, size_t dest, std::vector<size_t> sources, uint32_t type, std::vector<uint64_t> ne,
               std::vector<int64_t> params = {}) {
    DataOp op;
    op.op = kind;
    op.dest = dest;
    op.sources = std::move(sources);
    op.dest_type = type;
    op.dest_ne = std::move(ne);
    op.params = std::move(params);
    return op;
}

std::vector<float> run_f32(const Model& m, DataOpKind kind, std::vector<size_t> sources, std::vector<uint64_t> ne,
                           std::vector<int64_t> params = {}, uint32_t type = kF32) {
    const size_t dest = sources.empty() ? 0 : sources[0];
    const DataOp op = data_op(kind, dest, std::move(sources), type, std::move(ne), std::move(params));
    auto bytes = compat::run_data_op(m, op);
    INFO((bytes ? std::string() : bytes.error().to_string()));
    REQUIRE(bytes);
    std::vector<float> out(bytes->size() / 4);
    std::memcpy(out.data(), bytes->data(), out.size() * 4);
    return out;
}

}  // namespace

TEST_CASE("data ops: RoPE row permute, patch split, resample, concat, interleave, +1, zero fill", "[export]") {
    TempDir dir;
    Model m = fixture(dir);

    // Rows of 2 F16 values; row r holds r. n_head 2, head_dim 4: out row oa = src row h*4 + p*2 + d.
    const DataOp permute = data_op(DataOpKind::rope_permute_rows, 0, {0}, kF16, {2, 8}, {2});
    auto rows = compat::run_data_op(m, permute);
    REQUIRE(rows);
    std::vector<uint8_t> stored(32);
    REQUIRE(m.read_tensor_bytes(0, 0, 32, stored.data()));
    const int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int oa = 0; oa < 8; ++oa) CHECK(std::memcmp(rows->data() + oa * 4, stored.data() + order[oa] * 4, 4) == 0);

    // [W=1,H=1,T=2,C_out*C_in=6] with C_in 3: slice s, (c_out, c_in) ← src[s + 2*(c_out*3 + c_in)].
    CHECK(run_f32(m, DataOpKind::patch_split, {1}, {1, 1, 3, 2}, {0, 2, 3}) == std::vector<float>{0, 2, 4, 6, 8, 10});
    CHECK(run_f32(m, DataOpKind::patch_split, {1}, {1, 1, 3, 2}, {1, 2, 3}) == std::vector<float>{1, 3, 5, 7, 9, 11});

    // 2×2 grid (value = 2y + x) resampled to 3×3, align-corners: value = 2·sy + sx.
    CHECK(run_f32(m, DataOpKind::pos_embd_resample, {2}, {1, 9}, {1, 4, 3, compat::kPosLayoutEmbdFastest}) ==
          std::vector<float>{0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3});

    // An F16 and an F32 source, each decoded to F32, concatenated.
    CHECK(run_f32(m, DataOpKind::concat_to_f32, {0, 3}, {2, 10}) ==
          std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 1, 2, 3, 4});
    CHECK(run_f32(m, DataOpKind::norm_plus_one, {3}, {2, 2}) == std::vector<float>{2, 3, 4, 5});
    CHECK(run_f32(m, DataOpKind::byte_concat, {3, 4}, {2, 4}) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
    // Two experts of one row each: gate e, up e, ...
    CHECK(run_f32(m, DataOpKind::interleave_experts, {3, 4}, {2, 4}, {2}) == std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8});
    CHECK(run_f32(m, DataOpKind::zero_fill, {}, {3}) == std::vector<float>{0, 0, 0});
    CHECK(run_f32(m, DataOpKind::f16_to_f32, {1}, {1, 1, 2, 6}) == iota(12));

    SECTION("sources that do not fit are errors, not crashes") {
        DataOp bad = data_op(DataOpKind::byte_concat, 3, {3}, kF32, {2, 4});
        auto r = compat::run_data_op(m, bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::E_DATA_OP);
        CHECK(r.error().message == "byte concat for slot of gate: produces 16 bytes, the destination holds 32");
        bad.op = DataOpKind::f16_to_f32;
        bad.dest_ne = {2, 2};
        CHECK(compat::run_data_op(m, bad).error().message == "F16→F32 for slot of gate: source is not F16");
    }
}
