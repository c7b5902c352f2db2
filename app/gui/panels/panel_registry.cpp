#include "panels/panel.h"

#include "panels/compat_panel.h"
#include "panels/diagnostics_panel.h"
#include "panels/diff_panel.h"
#include "panels/health_panel.h"
#include "panels/imatrix_panel.h"
#include "panels/inference_panel.h"
#include "panels/inspector_panel.h"
#include "panels/metadata_panel.h"
#include "panels/model_error_panel.h"
#include "panels/navigator_panel.h"
#include "panels/recipe_panel.h"
#include "panels/registry_blobs_view.h"
#include "panels/registry_panel.h"
#include "panels/safetensors_panel.h"
#include "panels/store_panel.h"
#include "panels/tensor_panel.h"
#include "panels/tokenizer_panel.h"
#include "panels/weights_panel.h"

namespace mlens {

namespace {

bool is_store(const Document& d) { return d.is_store(); }
bool is_imatrix(const Document& d) { return d.is_imatrix(); }
bool is_model(const Document& d) { return d.is_model(); }
bool has_tensors(const Document& d) { return is_model(d) && !d.model()->tensors.empty(); }
bool is_safetensors(const Document& d) { return is_model(d) && d.model()->format == Format::safetensors; }
bool is_gguf(const Document& d) { return is_model(d) && d.model()->format == Format::gguf; }
bool is_registry_model(const Document& d) { return RegistryBlobsView::shows(d); }

}  // namespace

// clang-format off
const std::vector<PanelInfo>& panel_registry() {
    static const std::vector<PanelInfo> kPanels = {
        {"navigator", "Navigator", PanelSlot::left, make_panel<NavigatorPanel>, is_model,
         "The header, metadata grouped by prefix, tensors by layer and the diagnostics; a click selects the item everywhere."},
        {"store_models", "Models", PanelSlot::left, make_panel<StoreModelsPanel>, is_store,
         "The models of an Ollama store, each with its layers; a click shows its manifest."},
        {"store", "Ollama store", PanelSlot::center, make_panel<StorePanel>, is_store,
         "An Ollama store: models, manifests, layers with digests and blob paths, sha256 verification, tensor blobs with their quantization and logical vs stored shapes, expert groups; Export… writes a model as a GGUF bundle or a Hugging Face or MLX folder, showing the files first and verifying them after."},
        {"imatrix", "Importance matrix", PanelSlot::center, make_panel<ImatrixPanel>, is_imatrix,
         "A llama-imatrix importance matrix (GGUF or legacy .dat): per tensor the counts, the mean, least and greatest column importance, columns and experts never activated; per expert its count and sum; a histogram of log10 importance. Open it next to a model to requantize IQ types with it."},
        {"registry", "Ollama", PanelSlot::center, make_panel<RegistryPanel>, is_registry_model,
         "A model of an Ollama registry as `mlens show ollama://` prints it, read where it lives: the manifest's URL and digest, the summary, the config, the template, system, params and license, and the layers; Health verifies the blobs' digests."},
        {"metadata", "Metadata", PanelSlot::center, make_panel<MetadataPanel>, is_model,
         "Every key with its type, count and value; enum names (general.file_type, token types, pooling, rope scaling); long arrays in a paged, searchable viewer (double-click). Right-click a key to edit its value, rename or delete it; Add key\xE2\x80\xA6 and Chat template\xE2\x80\xA6 add keys. Edits are staged with their header diff (undo, redo) and written by Save As\xE2\x80\xA6 to a new, verified file; the file itself is never changed."},
        {"tensors", "Tensors", PanelSlot::center, make_panel<TensorPanel>, is_model,
         "Name, type, shape, elements, size, offset and bits per weight of every tensor; sort, text or regex filter, per-layer summaries, export as JSON, CSV or Markdown."},
        {"tokenizer", "Tokenizer", PanelSlot::center, make_panel<TokenizerPanel>, is_model,
         "Every token: id, piece with invisible characters made visible, type and score; search by text or id; the special tokens; the chat template as text (never executed)."},
        {"weights", "Weights", PanelSlot::center, make_panel<WeightsPanel>, has_tensors,
         "One tensor's statistics and histogram (log scale, drag to zoom), overlaid on the same tensor in another file or requantized; RMSE, NMSE, cosine, SNR and the worst rows and blocks; block-scale distributions; what-if requantization."},
        {"model_error", "Model error", PanelSlot::center, make_panel<ModelErrorPanel>, has_tensors,
         "Every tensor of this file measured against a reference file open in another tab: counts, the overall pooled RMSE, a per-layer chart and a sortable table; a row opens that tensor in Weights."},
        {"safetensors", "safetensors", PanelSlot::center, make_panel<SafetensorsPanel>, is_safetensors,
         "The safetensors header JSON as a tree and as a table."},
        {"compat", "Compat", PanelSlot::center, make_panel<CompatPanel>, is_gguf,
         "Whether Ollama made the file, on evidence only, and Ollama's shim rules as a side-by-side of the file as stored and the upstream view, each row with its rule; export the upstream GGUF."},
        {"inference", "Inference", PanelSlot::center, make_panel<InferencePanel>, is_gguf,
         "llama.cpp on this model: its log, a tokenizer tester and the chat template, generation with the top-5 candidates and speeds, per-layer activation statistics, A/B with per-position KL divergence, "
         "corpus KLD of the A/B pair over a text file, their divergence layer by layer, and the memory plan against llama.cpp's buffers."},
        {"health", "Health", PanelSlot::center, make_panel<HealthPanel>, has_tensors,
         "For a model of an Ollama registry, its blobs' digests verified on request. Every tensor scanned once: NaN and Inf values, values beyond F16, zero rows and columns, broken block scales, dead and duplicated experts, duplicated tensors and region problems, each at its exact location; a click shows the bytes, Weights opens the tensor."},
        {"diff", "Diff", PanelSlot::center, make_panel<DiffPanel>, has_tensors,
         "mlens diff between this file (B) and another open tab (A, picked in the toolbar): the name map that aligned the tensors, metadata added, removed and changed, tensors renamed, retyped and reshaped, the recipe difference with both llama-quantize commands; Compare values measures every paired tensor (RMSE, NMSE, cosine, per layer) as a job with progress and cancel."},
        {"recipe", "Recipe", PanelSlot::center, make_panel<RecipePanel>, has_tensors,
         "How the model was quantized: a layers × tensor-kinds heat map of types shaded by bits per weight (deeper with more bits), the provenance keys, and the llama-quantize command that reproduces the mix."},
        {"diagnostics", "Diagnostics", PanelSlot::center, make_panel<DiagnosticsPanel>, is_model,
         "Every warning and error with its severity, field and byte offset; a click shows the bytes."},
        {"inspector", "Inspector", PanelSlot::right, make_panel<InspectorPanel>, is_model,
         "Every field of the selection with its byte range, and a hex view of the file with the selection highlighted and the field under the mouse named."},
    };
    // clang-format on
    return kPanels;
}

const PanelInfo* route_link(std::string_view link, Document& doc, const std::vector<std::unique_ptr<Panel>>& panels) {
    const std::vector<PanelInfo>& registry = panel_registry();
    const PanelInfo* taker = nullptr;
    for (size_t i = 0; i < registry.size() && i < panels.size(); ++i) {
        if (!panel_shows(registry[i], doc) || !panels[i]->accept_link(link, doc)) continue;
        if (!taker || (taker->slot != PanelSlot::center && registry[i].slot == PanelSlot::center)) taker = &registry[i];
    }
    return taker;
}

const PanelInfo* find_panel(std::string_view id) {
    for (const PanelInfo& p : panel_registry())
        if (id == p.id) return &p;
    return nullptr;
}

}  // namespace mlens
