// The dry run behind `mlens loads --dry-run`: the llama.cpp worker loads the model with no tensor
// memory (SessionOptions::dry_run: llama_model_params::no_alloc, no mmap, no context), so
// llama.cpp itself checks the header, hyperparameters, vocabulary and tensor table and reads no
// weight; what it said is compared with the static verdict (loadability.h).
//
// Contract:
//  - dry_run_load(text, verdict) loads the file as it is (SessionOptions::as_is). When the verdict
//    is loads_after_compat it also loads it the way ModelLens loads an Ollama-made file, through
//    the upstream export (model_loader.h). Each load runs in its own worker, so an assert that
//    aborts llama.cpp ends only that worker.
//  - A load that fails keeps llama.cpp's words: the load error's message (with llama.cpp's error
//    lines, or "llama.cpp stopped: ..." with the assert of an abort).
//  - agrees: loads — the file loaded as is; loads_after_compat — as is it failed and through the
//    export it loaded; does_not_load — as is it failed.
//  - Errors: only when no load could be tried (no worker executable, E_NO_WORKER; cancelled).
//  - dry_run_checker(job) is the as-is load of one file, for callers below this library.
//  - dry_run_memory(text, options, session) is llama.cpp's own memory plan for those settings
//    (the "llama.cpp plan" of `mlens memory` and the app's Memory view): a worker loads the file
//    with `session` and dry_run set, so no weight is read or allocated, and runs MemoryOp
//    (memory_plan.h) on it. Errors are those of the load and of the operation.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mlens/analysis/loadability.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/session.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

struct DryRun {
    DryRunLoad as_is;
    std::optional<DryRunLoad> after_compat;
    bool agrees = false;
};

Result<DryRun> dry_run_load(const std::string& text, const Loadability& verdict, JobContext* job = nullptr);

// A checker that dry-runs a file as it is, each call in its own worker (the edit's verification,
// edit_write.h).
DryRunChecker dry_run_checker(JobContext* job = nullptr);

Result<MemoryMeasure> dry_run_memory(const std::string& text, const MemoryPlanOptions& options, SessionOptions session,
                                     JobContext* job = nullptr);

// {"as_is": {"loaded", "said"}, "after_compat": {...} or null, "agrees"}; said is null when loaded.
nlohmann::json dry_run_json(const DryRun& run);
// {"loaded", "said"} of one load, as in dry_run_json.
nlohmann::json dry_load_json(const DryRunLoad& load);

}  // namespace mlens
