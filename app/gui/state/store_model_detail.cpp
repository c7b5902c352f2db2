#include "store_model_detail.h"

#include "mlens/ollama/store_model.h"
#include "mlens/text/escape.h"

namespace mlens {

StoreModelDetail load_store_model_detail(const Store& store, const ModelName& name, JobContext* job) {
    StoreModelDetail d;
    Result<ManifestView> view = view_manifest(store, name);
    if (!view) {
        d.error = escape_for_display(view.error().to_string(), 400);
        return d;
    }
    d.view = std::move(view).value();
    job_report(job, 0.2);
    Result<Model> model = open_store_model(store, name, job);
    if (model)
        d.model = std::make_shared<const Model>(std::move(model).value());
    else
        d.model_error = escape_for_display(model.error().to_string(), 400);
    d.summary = summarize_store_model(*d.view, d.model.get());
    return d;
}

}  // namespace mlens
