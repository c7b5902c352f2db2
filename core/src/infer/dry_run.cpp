#include "mlens/infer/dry_run.h"

#include "mlens/infer/worker_session.h"

namespace mlens {

namespace {

Result<DryRunLoad> load_once(const std::string& text, bool as_is, JobContext* job) {
    SessionOptions options;
    options.dry_run = true;
    options.as_is = as_is;
    auto session = WorkerSession::load(text, options, job);
    if (session) return DryRunLoad{true, {}};
    const Error& e = session.error();
    if (e.code == ErrorCode::E_NO_WORKER || e.code == ErrorCode::E_CANCELLED) return e;
    return DryRunLoad{false, e.message};
}

}  // namespace

nlohmann::json dry_load_json(const DryRunLoad& load) {
    return {{"loaded", load.loaded}, {"said", load.loaded ? nlohmann::json(nullptr) : nlohmann::json(load.said)}};
}

Result<MemoryMeasure> dry_run_memory(const std::string& text, const MemoryPlanOptions& options, SessionOptions session,
                                     JobContext* job) {
    session.dry_run = true;
    auto loaded = WorkerSession::load(text, session, job);
    if (!loaded) return loaded.error();
    return (*loaded)->run<MemoryOp>(options, job);
}

Result<DryRun> dry_run_load(const std::string& text, const Loadability& verdict, JobContext* job) {
    DryRun run;
    auto as_is = load_once(text, true, job);
    if (!as_is) return as_is.error();
    run.as_is = *as_is;
    if (verdict.verdict == LoadVerdict::loads_after_compat) {
        auto after = load_once(text, false, job);
        if (!after) return after.error();
        run.after_compat = *after;
    }
    switch (verdict.verdict) {
        case LoadVerdict::loads:
            run.agrees = run.as_is.loaded;
            break;
        case LoadVerdict::loads_after_compat:
            run.agrees = !run.as_is.loaded && run.after_compat->loaded;
            break;
        case LoadVerdict::does_not_load:
            run.agrees = !run.as_is.loaded;
            break;
    }
    return run;
}

DryRunChecker dry_run_checker(JobContext* job) {
    return [job](const std::string& path) { return load_once(path, true, job); };
}

nlohmann::json dry_run_json(const DryRun& run) {
    return {{"as_is", dry_load_json(run.as_is)},
            {"after_compat", run.after_compat ? dry_load_json(*run.after_compat) : nlohmann::json(nullptr)},
            {"agrees", run.agrees}};
}

}  // namespace mlens
