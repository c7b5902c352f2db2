// Sizes of safetensors tensors and the layout of their data (malformed-inputs.md A3, rows
// "sizes", "offsets" and "coverage"), checked in the reference implementation's order: entries
// sorted by data_offsets; each must start where the previous one ended, the first at 0, and not
// end before it starts (InvalidOffset); its element count and bit count must fit in 64 bits
// (ValidationOverflow, computed over the shape in file order), be whole bytes (MisalignedSlice)
// and equal the range's length (TensorInvalidInfo); the last range must end exactly at the end
// of the file (MetadataIncompleteBuffer, field "data"). Only the first violation is reported.
#pragma once

#include <cstddef>
#include <vector>

#include "safetensors_header.h"

namespace mlens {

// Sets n_elements, n_bytes (unknown when the size overflows or is not whole bytes) and
// data_offset (data_start + begin, saturating) of model.tensors[first + i] from entries[i].
void size_safetensors_tensors(Model& model, size_t first, const std::vector<SafetensorsEntry>& entries, uint64_t data_start);

// Checks file `file`'s tensors[first, first + entries.size()); adds the first error found to the
// Model and returns false, or returns true.
bool check_safetensors_layout(Model& model, uint32_t file, size_t first, const std::vector<SafetensorsEntry>& entries, uint64_t data_start);

}  // namespace mlens
