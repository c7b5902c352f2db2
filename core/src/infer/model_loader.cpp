#include "mlens/infer/model_loader.h"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <system_error>

#include "mlens/compat/load_rewrite.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/temp_registry.h"
#include "mlens/open/target.h"

namespace mlens {

namespace {

// A fresh directory under the system temp directory, removed with everything in it on scope exit;
// named with its owner (owner_stamp.h) so one left by a killed process is swept by the next run.
// It and the one file it will hold are registered temporary paths, so an interrupted CLI
// removes them too.
class ScratchDir {
public:
    explicit ScratchDir(const char* file_name) {
        const std::string temp = system_temp_folder();
        sweep_stale_temporaries(temp);
        std::string pattern = temp + "/mlens-load-" + owner_stamp() + "-XXXXXX";
        if (!::mkdtemp(pattern.data())) return;
        m_path = pattern;
        m_file = m_path + "/" + file_name;
        m_slots[0] = register_temp_file(m_path);
        m_slots[1] = register_temp_file(m_file);
    }
    ~ScratchDir() {
        std::error_code ec;
        if (!m_path.empty()) std::filesystem::remove_all(m_path, ec);
        for (int slot : m_slots) unregister_temp_file(slot);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return m_path; }
    const std::string& file() const { return m_file; }

private:
    std::string m_path;
    std::string m_file;
    int m_slots[2] = {-1, -1};
};

std::string banner_for(const LoadRoute& route, const compat::OllamaOrigin& origin) {
    std::string text = "Ollama-made GGUF: loaded through the upstream export (";
    for (size_t i = 0; i < route.handlers.size(); ++i) text += (i ? ", " : "") + route.handlers[i];
    text += "); evidence: " + origin.evidence.front().marker;
    if (origin.evidence.size() > 1) text += " (+" + std::to_string(origin.evidence.size() - 1) + " more)";
    return text;
}

}  // namespace

Result<LoadedSession> load_model_session(const std::string& path, const SessionOptions& options, JobContext* job,
                                         std::shared_ptr<LogCapture> log) {
    LoadedSession out;
    auto model = open_model(path);
    // A store reference or manifest names a blob: llama.cpp is given the GGUF file itself.
    const bool opened =
        model && !model->files.empty() && model->opened_file < model->files.size() && model->files[model->opened_file].source;
    const bool gguf = model && model->format == Format::gguf && opened;
    // A GGUF store model whose blob could not be opened (gone, a FIFO, unreadable): its reason.
    if (model && model->format == Format::gguf && !opened)
        for (const Diagnostic& d : model->diagnostics)
            if (d.severity == Severity::error)
                return Error{d.code, d.field, d.offset, "the model's GGUF blob cannot be opened: " + d.message};
    if (model && !gguf)
        return Error{ErrorCode::E_NOT_GGUF, "", std::nullopt,
                     std::string("llama.cpp loads GGUF files; this is a ") + format_name(model->format) + " model"};
    // The file the model was opened by: a split model's later part is given as it is (never an
    // export of the whole model, which would load), and llama.cpp refuses it as the loadability
    // verdict says.
    const std::string file = gguf ? model->files[model->opened_file].path : path;
    std::optional<compat::LoadRewrite> need;
    if (gguf && !options.as_is && model->opened_file == 0) need = compat::load_rewrite(*model);
    if (!need) {
        auto session = Session::load(file, options, job, std::move(log));
        if (!session) return session.error();
        out.session = std::move(session).value();
        return out;
    }

    ScratchDir scratch("upstream.gguf");
    if (scratch.path().empty())
        return Error{ErrorCode::E_EXPORT_FOR_LOAD, "", std::nullopt, "cannot create a temporary directory for the upstream export"};
    compat::ExportOptions export_options;
    export_options.text_path = scratch.file();
    auto exported = compat::export_upstream(*model, need->plan, export_options, job);
    if (!exported) {
        if (exported.error().code == ErrorCode::E_CANCELLED) return exported.error();
        return Error{ErrorCode::E_EXPORT_FOR_LOAD, "", std::nullopt,
                     "the upstream export this file needs failed: " + exported.error().to_string()};
    }
    out.route.through_export = true;
    out.route.handlers = need->plan.text.handlers;
    out.route.banner = banner_for(out.route, need->origin);
    job_report(job, 0.0);
    auto session = Session::load(export_options.text_path, options, job, std::move(log));
    if (!session) return session.error();
    out.session = std::move(session).value();
    return out;
}

Result<std::optional<Model>> upstream_model_for_load(const Model& model) {
    if (model.format != Format::gguf) return std::optional<Model>();
    std::optional<compat::LoadRewrite> need = compat::load_rewrite(model);
    if (!need) return std::optional<Model>();
    auto layout = compat::export_layout(model, need->plan.text);
    if (!layout) return layout.error();
    Model out = std::move(layout->model);
    auto offsets = gguf_data_offsets(out);
    if (!offsets) return offsets.error();
    out.files.resize(1);
    for (size_t i = 0; i < out.tensors.size(); ++i) {
        out.tensors[i].file = 0;
        out.tensors[i].relative_offset = out.tensors[i].data_offset = (*offsets)[i];
    }
    return std::optional<Model>(std::move(out));
}

}  // namespace mlens
