// Pipelines of the fuzz targets, shared with the regression test that replays every input one of
// them ever failed on (tests/fuzz/regressions/). run_compat_pipeline is compat_plan_fuzz: the
// bytes go through the GGUF reader, the Ollama origin detector, the compat planner (both sides),
// the upstream views, the export layouts and every planned data operation whose destination is
// at most kMaxOpBytes, run in memory. Refused data ops (E_DATA_OP) are expected answers; only a
// crash or a sanitizer report is a failure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mlens/compat/data_ops.h"
#include "mlens/compat/ollama_origin.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/tensor_view.h"

namespace mlens::fuzz {

// Decodes up to 4096 values from each of the first four tensors that open as a TensorView.
inline void decode_first_tensors(const Model& model) {
    for (size_t i = 0; i < model.tensors.size() && i < 4; ++i) {
        auto view = TensorView::open(model, i);
        if (!view) continue;
        std::vector<float> out(std::min<uint64_t>(view->size(), 4096) / view->granularity() * view->granularity());
        if (!out.empty()) (void)view->read(0, out.size(), out.data());
    }
}

// Destinations larger than this are planned but not produced (a fuzzed shape can name gigabytes).
constexpr uint64_t kMaxOpBytes = 1 << 20;

inline void exercise_side(const Model& model, const compat::SidePlan& side) {
    (void)side.summary();
    (void)compat::upstream_view(model, side);
    (void)compat::export_layout(model, side);
    for (const compat::DataOp& op : side.data_ops) {
        auto bytes = compat::planned_bytes(op.dest_type, op.dest_ne);
        if (!bytes || *bytes > kMaxOpBytes) continue;
        (void)compat::run_data_op(model, op);
    }
}

inline void run_compat_pipeline(const uint8_t* data, size_t size) {
    Model model = read_gguf(memory_source(std::vector<uint8_t>(data, data + size)));
    (void)compat::detect_ollama_origin(model).summary();
    compat::RewritePlan plan = compat::plan_compat(model);
    exercise_side(model, plan.text);
    exercise_side(model, plan.clip);
    (void)compat::has_vision_export(model, plan);
}

}  // namespace mlens::fuzz
