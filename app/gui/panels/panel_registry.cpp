#include "panels/panel.h"

#include "panels/diagnostics_panel.h"
#include "panels/inspector_panel.h"
#include "panels/metadata_panel.h"
#include "panels/navigator_panel.h"
#include "panels/tensor_panel.h"
#include "panels/tokenizer_panel.h"

namespace mlens {

const std::vector<PanelInfo>& panel_registry() {
    static const std::vector<PanelInfo> kPanels = {
        {"navigator", "Navigator", PanelSlot::left, make_panel<NavigatorPanel>},
        {"metadata", "Metadata", PanelSlot::center, make_panel<MetadataPanel>},
        {"tensors", "Tensors", PanelSlot::center, make_panel<TensorPanel>},
        {"tokenizer", "Tokenizer", PanelSlot::center, make_panel<TokenizerPanel>},
        {"diagnostics", "Diagnostics", PanelSlot::center, make_panel<DiagnosticsPanel>},
        {"inspector", "Inspector", PanelSlot::right, make_panel<InspectorPanel>},
    };
    return kPanels;
}

const PanelInfo* find_panel(std::string_view id) {
    for (const PanelInfo& p : panel_registry())
        if (id == p.id) return &p;
    return nullptr;
}

}  // namespace mlens
