// Writes a model as a split GGUF, the layout llama-gguf-split makes: shards named
// "PREFIX-0000N-of-0000K.gguf", every key in the first, split.no / split.count /
// split.tensors.count in each, the tensors dealt out in file order.
#pragma once

#include <functional>
#include <string>

#include "mlens/model/model.h"

namespace mlens::test {

// `count` shards of `whole` in `dir`; with `first_without_tensors` the first shard holds only the
// keys (llama-gguf-split --no-tensor-first-split) and the tensors go to the others. `edit_shard`,
// when given, changes each shard (its number from 0, its split keys included) before it is
// written. Returns the first shard's path.
std::string write_split_gguf(const Model& whole, const std::string& dir, const std::string& prefix, uint16_t count,
                             bool first_without_tensors, const std::function<void(Model&, uint16_t)>& edit_shard = {});

}  // namespace mlens::test
