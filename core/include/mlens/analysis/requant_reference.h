// The reference a requantization measures against: the best values available for one tensor
// (or one expert of it). The CLI (`mlens requant --reference FILE`) and the Weights panel (the
// document chosen under "compare with") both choose it here.
//
// Contract:
//  - find_counterpart pairs the tensor with the other model's as the Model error view does
//    (pair_tensors, through the HF→GGUF map when automatic_name_alignment finds one); a tensor
//    paired whole while one expert is asked for compares that expert on both sides.
//  - open_requant_reference ranks the stored types F64 > F32 > F16 = BF16 > anything else. The
//    counterpart in `other` is the reference when it ranks above this tensor and has the same
//    element count; otherwise this tensor is, with a `note` saying why whenever it is not a float
//    type itself (no other model, no counterpart, a counterpart that is not F32/F16/BF16 or whose
//    element count differs): the error is then measured from already-quantized values.
//  - is_float_twin(mine, tensor, other): `other` holds a tensor of the same name and stored shape
//    whose stored type ranks above this tensor's and is F64, F32, F16 or BF16: the reference the
//    app's Requantize table picks among the open documents when none is chosen to compare with.
//  - The reference's values are in this tensor's layout (PairSource), so rows are this tensor's.
//    `other` must outlive the result. Errors are those of opening either tensor.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mlens/analysis/model_error.h"

namespace mlens {

std::optional<TensorPair> find_counterpart(const Model& mine, size_t tensor, std::optional<uint64_t> expert, const Model& other);

struct RequantReference {
    std::unique_ptr<PairSource> values;
    bool counterpart = false;  // the other model's tensor; else this tensor itself
    std::string tensor_name;  // as stored in its model
    std::string type_name;  // its stored type ("F16", "Q4_0", ...)
    std::string note;  // when this tensor is the reference and is not a float type
};

bool is_float_twin(const Model& mine, size_t tensor, const Model& other);

Result<RequantReference> open_requant_reference(const Model& mine, size_t tensor, std::optional<uint64_t> expert, const Model* other);

}  // namespace mlens
