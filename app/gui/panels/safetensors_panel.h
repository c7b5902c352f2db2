// SafetensorsPanel (center, safetensors documents): each shard's header as a table (name, dtype,
// shape as written, data_offsets, size, shard) and as a JSON tree, the __metadata__ entries, and
// the JSON files beside the shards (config.json, tokenizer_config.json, the index, ...) as text.
//
// Contract: shards are the Model's files with a header (data_start > 0); the header text is read
// from bytes [8, data_start) of the shard and parsed for the tree only when that view is opened
// (at most kMaxTreeHeaderBytes; larger headers show the table only). Everything shown is
// escaped for display; JSON files are shown, never interpreted. Clicking a tensor selects it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "panels/panel.h"

namespace mlens {

constexpr uint64_t kMaxTreeHeaderBytes = 16ull << 20;

// Indices of the Model's files that are safetensors shards, and of the "file:<name>" entries.
std::vector<uint32_t> safetensors_shards(const Model& model);
std::vector<size_t> side_file_entries(const Model& model);

class SafetensorsPanel : public Panel {
public:
    enum class View { tensors, tree, metadata, files };

    void draw(PanelContext& ctx) override;
    std::string badge(const Document& doc) const override;
    // Brings a view forward on the next frame.
    void show(View view) { m_pending = view; }
    // For tests: whether the header tree of the shown shard was parsed.
    bool tree_parsed() const { return m_tree != nullptr; }

private:
    void table_view(PanelContext& ctx);
    void tree_view(PanelContext& ctx);
    void metadata_view(const Document& doc);
    void files_view(PanelContext& ctx);

    std::string m_filter;
    uint32_t m_tree_shard = UINT32_MAX;
    std::unique_ptr<nlohmann::ordered_json> m_tree;
    std::string m_tree_error;
    size_t m_file = 0;
    std::optional<View> m_pending;
};

}  // namespace mlens
