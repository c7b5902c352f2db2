// The complete JSON description of a Model (`mlens dump --json`), and the pieces every `--json`
// output of mlens shares. The schemas in assets/schemas/ describe each command's output.
//
// Shape: {"format", "partial", "files":[{path,size,version,big_endian,alignment,data_start}],
//  "metadata":[{"key","offset"} + typed value], "tensors":[tensor], "groups":[{name,kind,layout,
//  count,parts,members}], "diagnostics":[{severity,format,code,field,offset,message,file}]}.
// quant/part_of/members hold indices into "tensors" (see Model's contract).
//
// The shared rules:
//  - Types: a tensor type is "type" (its name: ggml's "Q4_K", or the safetensors dtype "BF16")
//    plus "type_id", the ggml type id for GGUF tensors and null for safetensors ones (their
//    dtypes have no GGUF id). A metadata value's type is "type" ("UINT32", "STRING", "ARRAY")
//    plus "element_type" (the array's element type, null for scalars).
//  - Shapes: "shape" lists the dimensions in the file format's own order, and "shape_order" says
//    which: "fastest_first" for GGUF (ggml's ne: dims[0] varies fastest), "slowest_first" for
//    safetensors (row-major, as its header writes it).
//  - Arrays that may be cut carry their full length: a typed value has "count" (all elements)
//    and "truncated" (true when "value" holds fewer); both null for scalars and strings.
//  - A value the file does not have is null, never "" or 0.
//
// logical_tensor_to_json (`mlens tensors --json`): one logical tensor (logical_tensors.h) with the
// keys of tensor_to_json for its main entry — "type", "shape", "n_elements" and "n_bytes"
// logical, "offset" / "relative_offset" / "file" those of the main entry — plus
// "bits_per_weight" (null when unknown) and "data" (complete, partial or missing: the worst of
// its entries). A folded tensor has "type_id" null; it adds "quant":{type,mode,bits,group_size,
// origin,declared} and "stored":[{role,name,type,shape,n_bytes,offset,file}] (packed entry
// first); otherwise both are null. "group" is {name,layout,experts,expert?} for a member of an
// expert group, else null.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "mlens/model/logical_tensors.h"
#include "mlens/model/model.h"

namespace mlens {

// Arrays carry all elements when max_items is UINT64_MAX, else the first max_items.
nlohmann::json model_to_json(const Model& model, uint64_t max_items);
nlohmann::json diagnostic_to_json(const Diagnostic& d);
// The inverse of diagnostic_to_json (every field round-trips); nullopt for JSON of another shape.
std::optional<Diagnostic> diagnostic_from_json(const nlohmann::json& j);
// {"name","type","type_id","shape","shape_order","n_elements","n_bytes","offset",
//  "relative_offset","file","quant":{type,mode,bits,group_size,origin,declared,logical_shape,
//  logical_elements,scale,bias,global_scale} or null,"part_of","data"}; `format` is the owning Model's.
nlohmann::json tensor_to_json(const TensorInfo& t, Format format);
nlohmann::json group_to_json(const TensorGroup& g);
nlohmann::json logical_tensor_to_json(const Model& model, const LogicalTensor& t);

// The ggml type id of a GGUF tensor type; null for safetensors dtypes.
nlohmann::json tensor_type_id_json(const StorageType& type, Format format);
// {"type","element_type","count","truncated","value"} with at most max_items array elements.
nlohmann::json typed_value_json(const Value& v, uint64_t max_items);

// Serializes JSON built from file data: invalid UTF-8 becomes U+FFFD instead of throwing,
// invisible format characters are written as \uXXXX escapes (escape_invisible_in_json), and a
// number JSON cannot hold is the string "nan", "inf" or "-inf" (as json_number writes it), never null.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace mlens
