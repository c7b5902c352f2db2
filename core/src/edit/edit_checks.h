// Shared steps of the formats' edit plans (edit_plan.h).
// check_edits: the checks every plan makes of an EditList first — each key named once, keys well
// formed, deletes and renames naming keys the model has, renames onto free keys, general.alignment
// left alone.
#pragma once

#include <cstdint>
#include <vector>

#include "mlens/edit/edit_plan.h"
#include "mlens/model/model.h"

namespace mlens {

Status check_edits(const Model& model, const EditList& edits);

// The last step of every format's plan: the tensors' new offsets, whether the plan fits in place,
// its data path and, when it fits, the span where plan.header differs from `old_region` (the file's
// first old_data_start bytes).
void finish_plan(EditPlan& plan, const Model& model, const std::vector<uint8_t>& old_region);

// The plan of a safetensors file's __metadata__ edit (safetensors_edit.cpp), after check_edits.
Result<EditPlan> plan_safetensors_edit(const Model& model, const EditList& edits);

}  // namespace mlens
