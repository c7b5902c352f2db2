// Executing one RewritePlan data operation (rewrite_plan.h DataOpKind): the bytes the shim's load
// op would hand llama.cpp for the destination tensor.
//
// Contract:
//  - run_data_op reads its sources as stored (Model::read_tensor_bytes / TensorView, never past
//    a tensor's bytes) and returns exactly nbytes(op.dest_type, op.dest_ne) bytes, or an error
//    (E_DATA_OP) naming the op and the destination when the sources do not fit: wrong source
//    type, a byte count that differs from the destination's, a shape the op cannot handle.
//  - Decoding to F32 goes through TensorView, i.e. ggml's own to_float, so results are bit-exact
//    with the shim's (which uses ggml's type traits too).
//  - Parameters per kind (DataOp::params):
//      interleave_experts  {n_expert}
//      rope_permute_rows   {n_head}; rows are ne[1] whole rows of the F16 source
//      patch_split         {slice, T, C_in}; W and H from the source's ne[0], ne[1]
//      pos_embd_resample   {E, P, T, layout}; layout is one of kPosLayout* below
//  - The whole destination is produced in memory (one tensor at a time).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/result.h"

namespace mlens::compat {

// How pos_embd_resample fetches source element (pos, e), as in the shim.
constexpr int64_t kPosLayoutEmbdFastest = 0;  // 2-D, ne0 == E: src[e + E*pos]
constexpr int64_t kPosLayoutPosFastest = 1;  // other 2-D:      src[pos + P*e]
constexpr int64_t kPosLayout3dNe0One = 2;  // 3-D, ne0 == 1:  src[pos*E + e]
constexpr int64_t kPosLayoutOther = 3;  // otherwise:      src[e*P + pos]

Result<std::vector<uint8_t>> run_data_op(const Model& model, const DataOp& op);

// nbytes of a tensor of ggml type `type` and shape `ne` (GGUF order); nullopt for unknown types
// or a first dimension that is not a whole number of blocks.
std::optional<uint64_t> planned_bytes(uint32_t type, const std::vector<uint64_t>& ne);

}  // namespace mlens::compat
