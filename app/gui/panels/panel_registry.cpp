#include "panels/panel.h"

#include "panels/compat_panel.h"
#include "panels/diagnostics_panel.h"
#include "panels/inference_panel.h"
#include "panels/inspector_panel.h"
#include "panels/metadata_panel.h"
#include "panels/model_error_panel.h"
#include "panels/navigator_panel.h"
#include "panels/tensor_panel.h"
#include "panels/safetensors_panel.h"
#include "panels/store_panel.h"
#include "panels/tokenizer_panel.h"
#include "panels/weights_panel.h"

namespace mlens {

namespace {

bool is_store(const Document& d) { return d.is_store(); }
bool is_model(const Document& d) { return !d.is_store(); }
bool has_tensors(const Document& d) { return !d.is_store() && !d.model->tensors.empty(); }
bool is_safetensors(const Document& d) { return !d.is_store() && d.model->format == Format::safetensors; }
bool is_gguf(const Document& d) { return !d.is_store() && d.model->format == Format::gguf; }

}  // namespace

const std::vector<PanelInfo>& panel_registry() {
    static const std::vector<PanelInfo> kPanels = {
        {"navigator", "Navigator", PanelSlot::left, make_panel<NavigatorPanel>, is_model},
        {"store_models", "Models", PanelSlot::left, make_panel<StoreModelsPanel>, is_store},
        {"store", "Ollama store", PanelSlot::center, make_panel<StorePanel>, is_store},
        {"metadata", "Metadata", PanelSlot::center, make_panel<MetadataPanel>, is_model},
        {"tensors", "Tensors", PanelSlot::center, make_panel<TensorPanel>, is_model},
        {"tokenizer", "Tokenizer", PanelSlot::center, make_panel<TokenizerPanel>, is_model},
        {"weights", "Weights", PanelSlot::center, make_panel<WeightsPanel>, has_tensors},
        {"model_error", "Model error", PanelSlot::center, make_panel<ModelErrorPanel>, has_tensors},
        {"safetensors", "safetensors", PanelSlot::center, make_panel<SafetensorsPanel>, is_safetensors},
        {"compat", "Compat", PanelSlot::center, make_panel<CompatPanel>, is_gguf},
        {"inference", "Inference", PanelSlot::center, make_panel<InferencePanel>, is_gguf},
        {"diagnostics", "Diagnostics", PanelSlot::center, make_panel<DiagnosticsPanel>, is_model},
        {"inspector", "Inspector", PanelSlot::right, make_panel<InspectorPanel>, is_model},
    };
    return kPanels;
}

const PanelInfo* find_panel(std::string_view id) {
    for (const PanelInfo& p : panel_registry())
        if (id == p.id) return &p;
    return nullptr;
}

}  // namespace mlens
