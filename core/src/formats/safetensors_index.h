// model.safetensors.index.json: which shard file holds each tensor.
//
// Contract: the text is parsed as strict JSON (strict_json.h). The top object must have
// "weight_map", an object whose values are strings (E_INDEX_SCHEMA otherwise); every other key
// ("metadata", ...) is read and ignored. JSON errors are E_INDEX_JSON; duplicate keys
// E_DUPLICATE_KEY; the depth cap E_LIMIT. Offsets are positions in the index file. Shard names
// are returned as written: checking that they are plain file names is the folder reader's job.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlens/formats/safetensors_limits.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

struct SafetensorsIndexEntry {
    std::string tensor;
    std::string shard;
    uint64_t shard_offset = 0;  // where the shard name's JSON string starts
};

struct SafetensorsIndex {
    std::vector<SafetensorsIndexEntry> weight_map;  // in file order
};

Result<SafetensorsIndex> parse_safetensors_index(std::string_view text, const SafetensorsLimits& limits, JobContext* job = nullptr);

}  // namespace mlens
