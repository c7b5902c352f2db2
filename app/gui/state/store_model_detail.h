// StoreModelDetail: what the store panel shows of one model, loaded on a worker: the manifest
// view (layers, blobs, config, text layers; manifest_view.h) and the model's tensor entries as
// open_store_model reads them (quantized tensor views and expert groups for safetensors models),
// and the model's summary (store_summary.h) made of both.
//
// Contract: load_store_model_detail never hashes a blob. A manifest that cannot be read is its
// error; a model that cannot be opened keeps its manifest view and summary, a partial detail
// (no `model`) stopped by the reason the model did not open.
#pragma once

#include <memory>

#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/store_summary.h"

namespace mlens {

struct StoreModelDetail {
    ManifestView view;
    std::shared_ptr<const Model> model;  // null when the model could not be opened
    StoreModelSummary summary;
};

Result<Partial<StoreModelDetail>> load_store_model_detail(const Store& store, const ModelName& name, JobContext* job);

}  // namespace mlens
