#include "store_model_detail.h"

#include "mlens/ollama/store_model.h"

namespace mlens {

Result<Partial<StoreModelDetail>> load_store_model_detail(const Store& store, const ModelName& name, JobContext* job) {
    Result<ManifestView> view = view_manifest(store, name);
    if (!view) return view.error();
    Partial<StoreModelDetail> out;
    StoreModelDetail& d = out.value;
    d.view = std::move(view).value();
    job_report(job, 0.2);
    Result<Model> model = open_store_model(store, name, job);
    if (model)
        d.model = std::make_shared<const Model>(std::move(model).value());
    else
        out.stopped_by = model.error();
    d.summary = summarize_store_model(d.view, d.model.get());
    return out;
}

}  // namespace mlens
