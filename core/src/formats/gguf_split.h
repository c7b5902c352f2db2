// Split GGUF models ("<stem>-0000N-of-0000M.gguf", as written by llama.cpp's gguf-split).
//
// Decision: shard paths come only from the opened file's own name, never from metadata
// (malformed-inputs.md G58). Whatever shard was opened, the Model holds shard 1 as file 0 and
// shard k as file k-1; metadata is shard 1's, tensors are all shards' in shard order. A missing
// shard is an error (E_SPLIT_MISSING) and leaves the Model partial. The shard count is capped by
// GgufLimits::max_split_count.
//
// Decision: a file named as a shard whose own keys say it is no split model (says_no_split: no
// split.count, or an integer one of at most 1) is read alone, whatever part its name gives it, as
// llama.cpp's loader reads it (the opened file's split.count decides), with a W_SPLIT_METADATA
// warning on split.count: the files named beside it are not joined, and the shard-count cap does
// not apply. A split.count of another type still joins them (the loader refuses its type).
#pragma once

#include <optional>
#include <string>

#include "mlens/formats/gguf_limits.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

struct SplitName {
    std::string stem;  // path before "-0000N-of-0000M.gguf"
    uint32_t number;  // N (1-based)
    uint32_t count;  // M
    std::string shard_path(uint32_t n) const;
};

std::optional<SplitName> parse_split_name(const std::string& path);

// A file's keys say it is no split model: no split.count, or an integer one below 2.
bool says_no_split(const Model& model);
// "named as part N of M but has no split.count" (or "but its split.count is X", as stored).
std::string no_split_text(const Model& model, const SplitName& name);

// `model` holds the opened file as file 0. When its name marks it as a shard, replaces the Model
// by the whole split model. Returns false when a shard failed to parse.
bool open_split_siblings(Model& model, const std::string& path, const GgufLimits& limits, JobContext* job);

}  // namespace mlens
