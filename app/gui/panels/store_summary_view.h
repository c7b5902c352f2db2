// The store model page's summary, config and text layers (the registry panel's too):
//  - store_summary_view: what `ollama show` leads with, from the model's summary
//    (store_summary.h): format, family, parameters, quantization, context length, capabilities,
//    size, and the first line of the template, the system prompt and each license, the whole
//    text on hover.
//  - store_config_view: the config blob's fields as config_fields (config_fields.h) lists them,
//    or why it could not be read.
//  - store_text_layers_view: every text layer (template, system, params, messages, license) as
//    readable text (readable_layer_text: lines kept, params and messages pretty-printed JSON),
//    in the monospace font, each under a header with its size; long ones start closed.
#pragma once

#include <optional>
#include <string>

#include "fonts.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/store_summary.h"

namespace mlens {

void store_summary_view(const StoreModelSummary& summary, std::optional<uint64_t> size, const FontSet& fonts);
void store_config_view(const ManifestView& view);
void store_text_layers_view(const ManifestView& view, const FontSet& fonts);

}  // namespace mlens
