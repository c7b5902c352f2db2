// The links one panel posts for another (Document::follow), parsed and written in one place so the
// panel that posts and the panel that takes them agree:
//  - "metadata:LABEL" names a metadata group by its label ("general.*", "other") or prefix
//    ("general."); "metadata:" names every group.
//  - "tensor-layer:N" names the tensors of block N, "tensor-layer:non-block" the others;
//    "tensor-layer:" every layer.
//  - "metadata-array:ENTRY" opens the value viewer of Model::metadata[ENTRY] (an array).
//  - "weights:TENSOR[@expert=E][#row=R,block=B]" shows a tensor in the Weights panel, one expert
//    of a stacked tensor, and a row (within the expert) and block (within the row), as an fsck
//    finding locates them (fsck.h). TENSOR is the whole text when a tensor has that name.
//
// Contract: each parser returns nothing when the link is not of its scheme or names a group or
// layer the document lacks; otherwise the index into DocumentIndex::metadata_groups or ::layers,
// or an empty index for "every". The writers give the links the parsers read back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "state/document.h"

namespace mlens {

struct LinkedIndex {
    std::optional<size_t> index;  // empty: every group (or layer)
};

std::optional<LinkedIndex> parse_metadata_group_link(std::string_view link, const DocumentIndex& index);
std::string metadata_group_link(const DocumentIndex& index, std::optional<size_t> group);

std::optional<LinkedIndex> parse_tensor_layer_link(std::string_view link, const DocumentIndex& index);
std::string tensor_layer_link(const DocumentIndex& index, std::optional<size_t> layer);

std::optional<size_t> parse_metadata_array_link(std::string_view link, const Model& model);
std::string metadata_array_link(size_t entry);

struct WeightsLink {
    size_t tensor = 0;  // into Model::tensors
    std::optional<uint64_t> expert;
    std::optional<uint64_t> row;  // within the expert when `expert` is set
    std::optional<uint64_t> block;  // within the row; only with `row`
    bool operator==(const WeightsLink&) const = default;
};

std::optional<WeightsLink> parse_weights_link(std::string_view link, const Model& model);
std::string weights_link(const std::string& tensor, std::optional<uint64_t> expert = std::nullopt,
                         std::optional<uint64_t> row = std::nullopt, std::optional<uint64_t> block = std::nullopt);

}  // namespace mlens
