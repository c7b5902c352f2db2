// The complete JSON description of a Model (`mlens dump --json`, the app's JSON export).
//
// Shape: {"format", "files":[{path,size,version,big_endian,alignment,data_start}],
//  "metadata":[{"key","type","element_type"?,"count"?,"value","offset"}],
//  "tensors":[{"name","type","type_id","ne":[...GGUF order],"offset","relative_offset","n_bytes",
//  "n_elements","file","quant"?:{type,mode,bits,group_size,origin,declared?,logical_ne,
//  logical_elements,scale?,bias?,global_scale?},"part_of"?,"data":"complete"|"partial"|"missing"}],
//  "groups":[{name,kind,layout,count,parts,members}], "diagnostics":[{severity,code,field,offset,message,file}], "partial"}.
// quant/part_of/members hold indices into "tensors" (see Model's contract).
// Arrays carry all elements when max_items is UINT64_MAX, else the first max_items and "count".
//
// logical_tensor_to_json (`mlens tensors --json`): one logical tensor (logical_tensors.h) with the
// keys of tensor_to_json for its main entry — "type", "ne", "n_elements" and "n_bytes" logical,
// "offset" / "relative_offset" / "file" those of the main entry — plus "bits_per_weight" (null
// when unknown). A folded tensor has no "type_id"; it adds "quant":{type,mode,bits,group_size,
// origin,declared?} and "stored":[{role,name,type,ne,n_bytes,offset,file}] (packed entry first).
// A member of an expert group adds "group":{name,layout,experts,expert?}.
#pragma once

#include <nlohmann/json.hpp>

#include "mlens/model/logical_tensors.h"
#include "mlens/model/model.h"

namespace mlens {

nlohmann::json model_to_json(const Model& model, uint64_t max_items);
nlohmann::json diagnostic_to_json(const Diagnostic& d);
nlohmann::json tensor_to_json(const TensorInfo& t);
nlohmann::json group_to_json(const TensorGroup& g);
nlohmann::json logical_tensor_to_json(const Model& model, const LogicalTensor& t);

// Serializes JSON built from file data: invalid UTF-8 becomes U+FFFD instead of throwing.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace mlens
