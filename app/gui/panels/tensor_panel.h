// TensorPanel (center): every tensor with type, shape, elements, size, offset and bits per
// weight; sortable by any column, filtered by text or regex and by a layer ("tensor-layer:N",
// panel_links.h; the navigator posts it), with
// optional per-layer summary rows and a totals line. "Export" copies the listed tensors as CSV,
// Markdown or JSON to the clipboard or saves them to a file (tensor_table_export.h) through the core's
// SafeFileWriter, never over the files of an open document (output_inputs.h).
#pragma once

#include <string>
#include <vector>

#include "mlens/analysis/tensor_listing.h"
#include "panels/panel.h"

namespace mlens {

class TensorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;

private:
    void draw_toolbar(Document& doc, const Workspace* workspace);
    void draw_table(PanelContext& ctx);
    void fit_columns(const Document& doc, ImFont* mono);
    void setup_columns(float avail);
    void apply_sort_specs();
    void scroll_to_selection(const Document& doc, float row_h);
    void draw_layer_row(const Document& doc, const TensorRow& row);
    void draw_tensor_row(Document& doc, const TensorRow& row, ImFont* mono);
    void draw_size_cell(const Model& m, const LogicalTensor& lt);
    void draw_totals(const Document& doc);
    void draw_export(const Document& doc, const Workspace* workspace);

    TensorQuery m_query;
    TensorQuery m_applied;
    bool m_built = false;
    TensorListing m_listing;
    std::string m_listing_error;  // why the pattern lists nothing (an invalid regex), display-safe
    Selection m_last_selection;
    // Widest text of the type, shape, elements and offset columns (measured once; the table
    // then remembers its column widths).
    std::vector<float> m_fitted;
    std::string m_shape_header;  // "Shape (ne)" or "Shape (slowest first)", set with m_fitted
    std::string m_export_path;  // without extension
    std::string m_export_status;
};

}  // namespace mlens
