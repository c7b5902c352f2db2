// MLX quantized folders (the layout mlx-lm writes and loads): quantized modules given their
// logical view from config.json. Internal to core/formats; safetensors_reader.h states the
// contract for folders.
#pragma once

#include "mlens/model/model.h"

namespace mlens {

// config.json's "quantization" (else a "quantization_config" holding group_size and bits and no
// quant_method): {group_size, bits, mode (default "affine")} for every quantized module, and per
// module path P an object overriding them or false (P is not quantized). As in mlx-lm, P is
// quantized when the folder holds P.scales; P.weight (U32, 32 / bits values per word) then gets
// TensorInfo::quant with scale P.scales and bias P.biases (when present), and the companions
// part_of = P.weight. Type: "int<bits>" for affine, else the mode. A quantization object without
// a usable group size and bit count is W_QUANT_UNKNOWN; a scale whose shape does not cover the
// unpacked rows in groups W_QUANT_SHAPE_MISMATCH (the tensor keeps its layout; TensorView refuses it).
// A config.json that is not a JSON object is W_SIDE_FILE_SKIPPED: nothing of it is read, so its
// quantization, if any, is not applied and the folder shows its raw entries.
void describe_mlx_quantization(Model& model);

}  // namespace mlens
