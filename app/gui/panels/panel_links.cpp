#include "panels/panel_links.h"

#include <charconv>

namespace mlens {

namespace {

// The schemes, and the parts a weights link adds after the tensor's name.
constexpr std::string_view kMetadataScheme = "metadata:", kLayerScheme = "tensor-layer:", kArrayScheme = "metadata-array:",
                           kWeightsScheme = "weights:";
constexpr std::string_view kNonBlock = "non-block";
constexpr std::string_view kExpertPart = "@expert=", kRowPart = "#row=", kBlockPart = ",block=";

// The whole of `text` as a decimal number.
template <typename T>
std::optional<T> whole_number(std::string_view text) {
    T value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<size_t> tensor_named(const Model& model, std::string_view name) {
    for (size_t i = 0; i < model.tensors.size(); ++i)
        if (model.tensors[i].name == name) return i;
    return std::nullopt;
}

}  // namespace

std::optional<LinkedIndex> parse_metadata_group_link(std::string_view link, const DocumentIndex& index) {
    if (!link.starts_with(kMetadataScheme)) return std::nullopt;
    link.remove_prefix(kMetadataScheme.size());
    if (link.empty()) return LinkedIndex{};
    for (size_t g = 0; g < index.metadata_groups.size(); ++g) {
        const MetadataGroup& group = index.metadata_groups[g];
        if (link == group.label || (!group.prefix.empty() && link == group.prefix)) return LinkedIndex{g};
    }
    return std::nullopt;
}

std::string metadata_group_link(const DocumentIndex& index, std::optional<size_t> group) {
    std::string link(kMetadataScheme);
    if (group && *group < index.metadata_groups.size()) link += index.metadata_groups[*group].label;
    return link;
}

std::optional<LinkedIndex> parse_tensor_layer_link(std::string_view link, const DocumentIndex& index) {
    if (!link.starts_with(kLayerScheme)) return std::nullopt;
    link.remove_prefix(kLayerScheme.size());
    if (link.empty()) return LinkedIndex{};
    for (size_t l = 0; l < index.layers.size(); ++l) {
        const std::optional<uint32_t>& block = index.layers[l].layer;
        if (block ? link == std::to_string(*block) : link == kNonBlock) return LinkedIndex{l};
    }
    return std::nullopt;
}

std::string tensor_layer_link(const DocumentIndex& index, std::optional<size_t> layer) {
    std::string link(kLayerScheme);
    if (layer && *layer < index.layers.size()) {
        const auto& block = index.layers[*layer].layer;
        link += block ? std::to_string(*block) : std::string(kNonBlock);
    }
    return link;
}

std::optional<size_t> parse_metadata_array_link(std::string_view link, const Model& model) {
    if (!link.starts_with(kArrayScheme)) return std::nullopt;
    std::optional<size_t> entry = whole_number<size_t>(link.substr(kArrayScheme.size()));
    if (!entry || *entry >= model.metadata.size() || !model.metadata[*entry].value.is_array()) return std::nullopt;
    return entry;
}

std::string metadata_array_link(size_t entry) { return std::string(kArrayScheme) + std::to_string(entry); }

std::optional<WeightsLink> parse_weights_link(std::string_view link, const Model& model) {
    if (!link.starts_with(kWeightsScheme)) return std::nullopt;
    link.remove_prefix(kWeightsScheme.size());
    WeightsLink out;
    if (std::optional<size_t> whole = tensor_named(model, link)) {
        out.tensor = *whole;
        return out;
    }
    if (size_t at = link.rfind(kRowPart); at != std::string_view::npos) {
        std::string_view place = link.substr(at + kRowPart.size());
        link = link.substr(0, at);
        size_t comma = place.find(kBlockPart);
        out.row = whole_number<uint64_t>(place.substr(0, comma));
        if (!out.row) return std::nullopt;
        if (comma != std::string_view::npos) {
            out.block = whole_number<uint64_t>(place.substr(comma + kBlockPart.size()));
            if (!out.block) return std::nullopt;
        }
    }
    if (size_t at = link.rfind(kExpertPart); at != std::string_view::npos && !tensor_named(model, link)) {
        out.expert = whole_number<uint64_t>(link.substr(at + kExpertPart.size()));
        if (!out.expert) return std::nullopt;
        link = link.substr(0, at);
    }
    std::optional<size_t> tensor = tensor_named(model, link);
    if (!tensor) return std::nullopt;
    out.tensor = *tensor;
    return out;
}

std::string weights_link(const std::string& tensor, std::optional<uint64_t> expert, std::optional<uint64_t> row,
                         std::optional<uint64_t> block) {
    std::string link = std::string(kWeightsScheme) + tensor;
    if (expert) link += std::string(kExpertPart) + std::to_string(*expert);
    if (row) {
        link += std::string(kRowPart) + std::to_string(*row);
        if (block) link += std::string(kBlockPart) + std::to_string(*block);
    }
    return link;
}

}  // namespace mlens
