// Shared steps of the formats' edit plans (edit_plan.h) and of the writers (edit_write.h,
// edit_in_place.h).
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

// A plan of `format` for the model's one file, its old layout filled in.
EditPlan start_plan(const Model& model, Format format, uint64_t alignment);
// The change of `entry` with its before fields filled in; with_after fills the after fields.
KeyChange change_of(const MetadataEntry& entry, KeyChangeKind kind);
void with_after(KeyChange& change, const Value& value);

// Writes all `length` bytes at `offset` of `fd` (a short write retried, EINTR too); a failure is
// E_IO naming `path` and the system's reason, E_PERMISSION for EACCES, EPERM and EROFS.
Status write_at(int fd, const uint8_t* data, uint64_t length, uint64_t offset, const std::string& path);

// The last step of every format's plan: the tensors' new offsets, whether the plan fits in place,
// its data path and, when it fits, the span where plan.header differs from `old_region` (the file's
// first old_data_start bytes).
void finish_plan(EditPlan& plan, const Model& model, const std::vector<uint8_t>& old_region);

// The plan of a safetensors file's __metadata__ edit (safetensors_edit.cpp), after check_edits.
Result<EditPlan> plan_safetensors_edit(const Model& model, const EditList& edits);

}  // namespace mlens
