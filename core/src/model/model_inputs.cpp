#include "mlens/model/model_inputs.h"

namespace mlens {

void add_model_inputs(OutputGuard& guard, const Model& model) {
    for (const SourceFile& f : model.files) {
        guard.add_input(f.path);
        if (f.source && f.source->path() != f.path) guard.add_input(f.source->path());
    }
}

OutputGuard output_guard_for(const Model& model) {
    OutputGuard guard;
    add_model_inputs(guard, model);
    return guard;
}

}  // namespace mlens
