// What `mlens export` would write for one store model, as `mlens show` / `mlens store PATH MODEL`
// print it: for every format that applies, the files (names and exact sizes) planned by
// prepare_store_export (ollama/store_export.h), before anything is written.
#pragma once

#include <nlohmann/json.hpp>

#include "mlens/ollama/store.h"

namespace mlens::cli {

// [{"format", "files": [{"name", "bytes"}], "total_bytes", "error"}]: error is null, or why the
// model cannot be exported in that format (files then empty).
nlohmann::json export_plans_json(const Store& store, const ModelName& name);
// "export" and a FORMAT / FILE / BYTES table on stdout.
void print_export_plans(const Store& store, const ModelName& name);

}  // namespace mlens::cli
