#include "split_shards.h"

#include <catch2/catch.hpp>

#include <cstdio>

#include "mlens/formats/gguf_writer.h"

namespace mlens::test {

namespace {

std::string shard_name(const std::string& prefix, uint16_t no, uint16_t count) {
    char name[64];
    std::snprintf(name, sizeof name, "-%05u-of-%05u.gguf", static_cast<unsigned>(no + 1), static_cast<unsigned>(count));
    return prefix + name;
}

void add(Model& shard, std::string key, Value value) {
    MetadataEntry e;
    e.key = std::move(key);
    e.value = std::move(value);
    shard.metadata.push_back(std::move(e));
}

}  // namespace

std::string write_split_gguf(const Model& whole, const std::string& dir, const std::string& prefix, uint16_t count,
                             bool first_without_tensors, const std::function<void(Model&, uint16_t)>& edit_shard) {
    const size_t n = whole.tensors.size();
    const uint16_t holders = first_without_tensors ? count - 1 : count;
    for (uint16_t no = 0; no < count; ++no) {
        Model shard;
        shard.format = Format::gguf;
        shard.files = whole.files;
        if (no == 0) shard.metadata = whole.metadata;
        add(shard, "split.no", Value::of_scalar(Scalar{ValueType::u16, no}));
        add(shard, "split.count", Value::of_scalar(Scalar{ValueType::u16, count}));
        add(shard, "split.tensors.count", Value::of_scalar(Scalar{ValueType::i32, n}));
        if (!first_without_tensors || no > 0) {
            const size_t part = first_without_tensors ? no - 1u : no;
            const size_t begin = n * part / holders, end = n * (part + 1) / holders;
            shard.tensors.assign(whole.tensors.begin() + static_cast<std::ptrdiff_t>(begin),
                                 whole.tensors.begin() + static_cast<std::ptrdiff_t>(end));
        }
        if (edit_shard) edit_shard(shard, no);
        REQUIRE(write_gguf(shard, dir + "/" + shard_name(prefix, no, count)).ok());
    }
    return dir + "/" + shard_name(prefix, 0, count);
}

}  // namespace mlens::test
