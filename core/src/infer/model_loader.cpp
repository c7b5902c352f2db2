#include "mlens/infer/model_loader.h"

#include <stdlib.h>

#include <filesystem>
#include <system_error>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/open/target.h"

namespace mlens {

namespace {

// A fresh directory under the system temp directory, removed with everything in it on scope exit.
class ScratchDir {
public:
    ScratchDir() {
        std::error_code ec;
        std::string pattern = (std::filesystem::temp_directory_path(ec) / "mlens-load-XXXXXX").string();
        if (ec) pattern = "/tmp/mlens-load-XXXXXX";
        if (::mkdtemp(pattern.data())) m_path = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        if (!m_path.empty()) std::filesystem::remove_all(m_path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

std::string banner_for(const LoadRoute& route) {
    std::string text = "Ollama-made GGUF: loaded through the upstream export (";
    for (size_t i = 0; i < route.handlers.size(); ++i) text += (i ? ", " : "") + route.handlers[i];
    return text + ")";
}

}  // namespace

Result<LoadedSession> load_model_session(const std::string& path, const SessionOptions& options, JobContext* job,
                                         std::shared_ptr<LogCapture> log) {
    LoadedSession out;
    auto model = open_model(path);
    compat::RewritePlan plan;
    if (model && model->format == Format::gguf) plan = compat::plan_compat(*model);
    if (!model || plan.text.empty()) {
        // A store reference or manifest names a blob: llama.cpp is given the GGUF file itself.
        const bool gguf = model && model->format == Format::gguf && !model->files.empty();
        auto session = Session::load(gguf ? model->files[0].path : path, options, job, std::move(log));
        if (!session) return session.error();
        out.session = std::move(session).value();
        return out;
    }

    ScratchDir scratch;
    if (scratch.path().empty()) return Error{"E_EXPORT_FOR_LOAD", "", std::nullopt, "cannot create a temporary directory for the upstream export"};
    compat::ExportOptions export_options;
    export_options.text_path = scratch.path() + "/upstream.gguf";
    auto exported = compat::export_upstream(*model, plan, export_options, job);
    if (!exported) {
        if (exported.error().code == "E_CANCELLED") return exported.error();
        return Error{"E_EXPORT_FOR_LOAD", "", std::nullopt, "the upstream export this file needs failed: " + exported.error().to_string()};
    }
    out.route.through_export = true;
    out.route.handlers = plan.text.handlers;
    out.route.banner = banner_for(out.route);
    job_report(job, 0.0);
    auto session = Session::load(export_options.text_path, options, job, std::move(log));
    if (!session) return session.error();
    out.session = std::move(session).value();
    return out;
}

}  // namespace mlens
