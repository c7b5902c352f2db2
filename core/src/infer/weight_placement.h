// Weight placement: where the linked llama.cpp puts each weight of a GGUF when it loads the model
// on the CPU with its defaults (mmap on, the CPU's extra buffer types on), computed from the
// header alone, and the bytes each place holds.
//
// Contract:
//  - A tensor's op is the one the pinned loader tests buffer types with (llama_requirements.h:
//    the generated LLM_TENSOR_INFOS op of the first name pattern of the file's architecture that
//    matches the tensor). A tensor no pattern matches keeps GGML_OP_NONE; when the architecture's
//    tensor list is complete, llama.cpp does not create it ("unused tensor") and it is in no
//    buffer.
//  - The buffer type is chosen as llama.cpp chooses it: the first of the CPU device's extra buffer
//    types (ggml_backend_dev_get_extra_bufts of the linked ggml-cpu, e.g. CPU_REPACK) whose
//    supports_op accepts the weight's matmul (MUL_MAT over a 512-token F32 batch, or MUL_MAT_ID
//    with expert_used_count ids) — the linked ggml itself is asked, with a weight tensor of the
//    file's type and shape in a zero-size buffer of that type, so the rules (type, ne[1]
//    multiple, CPU features) are ggml's own; otherwise the plain CPU buffer. The extra buffer
//    types of this ggml accelerate matmuls only, so other ops always stay in the CPU buffer.
//  - Bytes: a weight in an extra buffer type is copied there, its size padded to that buffer
//    type's alignment (ggml_backend_alloc_ctx_tensors_from_buft); the weights left in the CPU
//    buffer stay mapped, one mapping per file spanning its first to its last such weight (the
//    padding and any copied weight between them included), as llama.cpp maps them.
//  - Out of scope, stated here: tensors over 4 GiB that llama.cpp reads lazily, --no-mmap,
//    --no-repack and tensor overrides (none is a default).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "mlens/model/model.h"

namespace mlens::infer_detail {

struct WeightPlacement {
    uint64_t mapped = 0;  // the CPU buffer: the mapped spans of every file
    std::map<std::string, uint64_t> copied;  // extra buffer type name -> bytes ("CPU_REPACK")
    uint64_t copied_tensors = 0;
    uint64_t total() const;
};

WeightPlacement place_weights(const Model& model, const std::string& arch);

}  // namespace mlens::infer_detail
