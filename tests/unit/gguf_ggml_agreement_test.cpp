// Our reader against ggml's own gguf API on every upstream vocab GGUF in the pinned llama.cpp
// source: identical keys, types, values, tensor names, types, shapes and offsets.
#include <catch2/catch.hpp>

#include <gguf.h>

#include <cstring>

#include "mlens/formats/gguf_reader.h"
#include "test_paths.h"

using namespace mlens;

namespace {

void require_same_array(gguf_context* g, int64_t id, const ArrayIndex& a) {
    REQUIRE(static_cast<uint32_t>(gguf_get_arr_type(g, id)) == static_cast<uint32_t>(a.element_type));
    REQUIRE(gguf_get_arr_n(g, id) == a.count);
    if (a.element_type == ValueType::string) {
        a.for_each_string(0, UINT64_MAX, [&](uint64_t i, std::string_view s) {
            const char* theirs = gguf_get_arr_str(g, id, i);
            if (s != std::string_view(theirs)) FAIL("string element " << i << " differs");
            return true;
        });
        return;
    }
    const auto* data = static_cast<const uint8_t*>(gguf_get_arr_data(g, id));
    uint32_t size = value_type_size(a.element_type);
    for (uint64_t i = 0; i < a.count; ++i) {
        uint64_t theirs = 0;
        std::memcpy(&theirs, data + i * size, size);
        if (a.scalar_at(i).bits != theirs) FAIL("element " << i << " differs");
    }
}

void require_same_scalar(gguf_context* g, int64_t id, const Scalar& s) {
    const void* data = gguf_get_val_data(g, id);
    uint64_t theirs = 0;
    std::memcpy(&theirs, data, value_type_size(s.type));
    REQUIRE(s.bits == theirs);
}

}  // namespace

TEST_CASE("every upstream vocab GGUF parses exactly as ggml parses it", "[gguf][upstream]") {
    auto files = test::upstream_vocab_files();
    REQUIRE(files.size() >= 19);
    for (const std::string& path : files) {
        INFO(path);
        auto ours = open_gguf(path);
        REQUIRE(ours.ok());
        CHECK(ours->error_count() == 0);
        gguf_init_params params{/*no_alloc=*/true, /*ctx=*/nullptr};
        gguf_context* g = gguf_init_from_file(path.c_str(), params);
        REQUIRE(g != nullptr);

        REQUIRE(gguf_get_n_kv(g) == static_cast<int64_t>(ours->metadata.size()));
        for (int64_t id = 0; id < gguf_get_n_kv(g); ++id) {
            const MetadataEntry& e = ours->metadata[id];
            REQUIRE(e.key == gguf_get_key(g, id));
            REQUIRE(static_cast<uint32_t>(gguf_get_kv_type(g, id)) == static_cast<uint32_t>(e.value.type));
            if (e.value.is_array()) require_same_array(g, id, *e.value.array);
            else if (e.value.is_string()) REQUIRE(e.value.string_value() == gguf_get_val_str(g, id));
            else require_same_scalar(g, id, e.value.scalar);
        }
        REQUIRE(gguf_get_n_tensors(g) == static_cast<int64_t>(ours->tensors.size()));
        for (int64_t id = 0; id < gguf_get_n_tensors(g); ++id) {
            const TensorInfo& t = ours->tensors[id];
            REQUIRE(t.name == gguf_get_tensor_name(g, id));
            REQUIRE(t.type.id == static_cast<uint32_t>(gguf_get_tensor_type(g, id)));
            const int64_t* ne = gguf_get_tensor_ne(g, id);
            for (size_t d = 0; d < 4; ++d) REQUIRE(static_cast<int64_t>(d < t.ne.size() ? t.ne[d] : 1) == ne[d]);
            REQUIRE(t.data_offset == gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id));
            REQUIRE(*t.n_bytes == gguf_get_tensor_size(g, id));
        }
        REQUIRE(gguf_get_alignment(g) == ours->files[0].alignment);
        gguf_free(g);
    }
}
