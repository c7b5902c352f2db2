#include "mlens/compat/upstream_export.h"

#include <cstring>
#include <functional>
#include <set>

#include "mlens/compat/data_ops.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/model/model_inputs.h"

namespace mlens::compat {

namespace {

Error export_error(ErrorCode code, const std::string& field, const std::string& message) {
    return Error{code, field, std::nullopt, message};
}

bool audio_enabled(const UpstreamView& view) {
    for (const ResultKv& kv : view.metadata)
        if (kv.key == "clip.has_audio_encoder") return kv.value.type == ValueType::boolean && kv.value.scalar.bits != 0;
    return false;
}

bool in_mmproj(const std::string& name, bool audio) {
    return name.starts_with("v.") || name.starts_with("mm.") || (audio && name.starts_with("a."));
}

// Produces the bytes of the written tensors one at a time, keeping the current one in memory.
class TensorBytes {
public:
    TensorBytes(const Model& model, const SidePlan& plan, const ExportLayout& layout, JobContext* job, uint64_t total, uint64_t& done)
        : m_model(model), m_plan(plan), m_layout(layout), m_job(job), m_total(total), m_done(done) {}

    Status operator()(size_t index, uint64_t offset, uint64_t length, void* dst) {
        if (job_cancelled(m_job)) return cancelled_error("export");
        if (const auto& op = m_layout.ops[index]) {
            if (m_current != index || !m_have) {
                auto bytes = run_data_op(m_model, m_plan.data_ops[*op]);
                if (!bytes) return bytes.error();
                m_bytes = std::move(*bytes);
                m_current = index;
                m_have = true;
            }
            if (length) std::memcpy(dst, m_bytes.data() + offset, length);
        } else {
            Status s = m_model.read_tensor_bytes(m_layout.slots[index], offset, length, dst);
            if (!s) return s;
        }
        m_done += length;
        job_report(m_job, m_total ? static_cast<double>(m_done) / static_cast<double>(m_total) : 1.0);
        return ok_status();
    }

private:
    const Model& m_model;
    const SidePlan& m_plan;
    const ExportLayout& m_layout;
    JobContext* m_job;
    uint64_t m_total;
    uint64_t& m_done;
    size_t m_current = 0;
    bool m_have = false;
    std::vector<uint8_t> m_bytes;
};

// Reads the finished temporary file back before it takes the output's name; `shown` is the
// output path for messages.
Status check_written(const std::string& temp, const std::string& shown, const ExportLayout& layout) {
    auto back = open_gguf(temp);
    if (!back) return back.error();
    auto mismatch = [&](const std::string& what) {
        return export_error(ErrorCode::E_EXPORT_CHECK, shown, "the written file does not match the plan: " + what);
    };
    if (back->error_count() > 0) return mismatch("it reads back with errors");
    const Model& m = layout.model;
    if (back->metadata.size() != m.metadata.size()) return mismatch("metadata count differs");
    for (size_t i = 0; i < m.metadata.size(); ++i)
        if (back->metadata[i].key != m.metadata[i].key || back->metadata[i].value.type != m.metadata[i].value.type)
            return mismatch("key " + std::to_string(i) + " is " + back->metadata[i].key + ", planned " + m.metadata[i].key);
    if (back->tensors.size() != m.tensors.size()) return mismatch("tensor count differs");
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        const TensorInfo& a = back->tensors[i];
        const TensorInfo& b = m.tensors[i];
        if (a.name != b.name || a.type.id != b.type.id || a.ne != b.ne || a.n_bytes != b.n_bytes)
            return mismatch("tensor " + std::to_string(i) + " (" + a.name + ") differs from the planned " + b.name);
    }
    return ok_status();
}

Status write_side(const Model& model, const SidePlan& plan, const ExportLayout& layout, SafeFileWriter& out, const std::string& shown,
                  JobContext* job, uint64_t total, uint64_t& done) {
    TensorBytes bytes(model, plan, layout, job, total, done);
    if (Status s = write_gguf_into(out, layout.model, nullptr, std::ref(bytes)); !s) return s;
    return check_written(out.temp_path(), shown, layout);
}

}  // namespace

bool has_vision_export(const Model& model, const RewritePlan& plan) {
    if (model.format != Format::gguf) return false;
    UpstreamView view = upstream_view(model, plan.clip);
    if (view.architecture != "clip") return false;
    for (const ResultTensor& t : view.tensors)
        if (t.name.starts_with("v.")) return true;
    return false;
}

Result<ExportLayout> export_layout(const Model& model, const SidePlan& plan) {
    ExportLayout layout;
    layout.side = plan.side;
    UpstreamView view = upstream_view(model, plan);
    const bool clip_file = plan.side == PlanSide::clip && plan.arch_before == "clip";
    const bool mmproj = plan.side == PlanSide::clip && !clip_file;
    const bool audio = audio_enabled(view);
    layout.model.format = Format::gguf;
    for (const SourceFile& f : model.files) {
        SourceFile copy;
        copy.path = f.path;
        copy.version = 3;
        layout.model.files.push_back(copy);
    }
    for (const ResultKv& kv : view.metadata) {
        if (mmproj && !kv.key.starts_with("general.") && !kv.key.starts_with("clip.")) continue;
        MetadataEntry e;
        e.key = kv.key;
        e.value = kv.value;
        layout.model.metadata.push_back(std::move(e));
    }
    std::set<std::string> names;
    for (const ResultTensor& r : view.tensors) {
        if (r.hidden || (mmproj && !in_mmproj(r.name, audio))) continue;
        const std::string field = "tensors[" + std::to_string(r.slot) + "]";
        if (!r.n_bytes) return export_error(ErrorCode::E_DATA_OP, field, r.name + ": type " + r.type.name + " has no byte size");
        if (!names.insert(r.name).second) return export_error(ErrorCode::E_EXPORT_CHECK, field, "two tensors would be named " + r.name);
        if (!r.data_op && model.tensors[r.slot].n_bytes.value_or(0) < *r.n_bytes)
            return export_error(ErrorCode::E_DATA_OP, field,
                                r.name + " needs " + std::to_string(*r.n_bytes) + " bytes but its slot stores " +
                                    std::to_string(model.tensors[r.slot].n_bytes.value_or(0)) + " and no data op fills it");
        TensorInfo t;
        t.name = r.name;
        t.type = r.type;
        t.ne = r.ne;
        t.n_elements = r.n_elements;
        t.n_bytes = r.n_bytes;
        layout.model.tensors.push_back(std::move(t));
        layout.slots.push_back(r.slot);
        layout.ops.push_back(r.data_op);
    }
    return layout;
}

Result<ExportReport> export_upstream(const Model& model, const RewritePlan& plan, const ExportOptions& options, JobContext* job) {
    if (model.format != Format::gguf)
        return export_error(ErrorCode::E_UNSUPPORTED, "", "only GGUF models can be exported to upstream layout");
    if (options.text_path.empty()) return export_error(ErrorCode::E_ARGS, "", "no output path for the text GGUF");
    ExportReport report;
    const bool vision = has_vision_export(model, plan);
    if (!options.mmproj_path.empty() && !vision)
        return export_error(ErrorCode::E_NO_VISION, "", "the model has no vision part to write as an mmproj");
    if (options.mmproj_path.empty() && vision) report.notes.push_back("the model has a vision part; no mmproj was written (use --mmproj)");

    std::vector<std::pair<const SidePlan*, std::string>> sides = {{&plan.text, options.text_path}};
    if (!options.mmproj_path.empty()) sides.emplace_back(&plan.clip, options.mmproj_path);
    std::vector<ExportLayout> layouts;
    uint64_t total = 0, done = 0;
    for (const auto& [side, path] : sides) {
        auto layout = export_layout(model, *side);
        if (!layout) return layout.error();
        for (const TensorInfo& t : layout->model.tensors) total += *t.n_bytes;
        layouts.push_back(std::move(*layout));
    }
    // Every output is claimed before any byte is written, so an output that is an input, a
    // non-regular file or the other output fails at once.
    OutputGuard guard = options.guard;
    add_model_inputs(guard, model);
    std::vector<SafeFileWriter> writers;
    for (const auto& side : sides) {
        auto writer = SafeFileWriter::create(side.second, guard);
        if (!writer) return writer.error();
        writers.push_back(std::move(*writer));
    }
    for (size_t i = 0; i < sides.size(); ++i) {
        if (Status s = write_side(model, *sides[i].first, layouts[i], writers[i], sides[i].second, job, total, done); !s) return s.error();
        ExportedFile f;
        f.side = sides[i].first->side;
        f.path = sides[i].second;
        f.bytes = writers[i].bytes_written();
        f.metadata = layouts[i].model.metadata.size();
        f.tensors = layouts[i].model.tensors.size();
        for (const auto& op : layouts[i].ops) f.data_ops += op ? 1 : 0;
        report.files.push_back(std::move(f));
    }
    if (Status s = commit_all(writers); !s) return s.error();
    job_report(job, 1.0);
    return report;
}

}  // namespace mlens::compat
