// The fsck report (fsck.h) as JSON, both ways, and fsck through the cache database.
//
// Contract:
//  - fsck_report_json gives the fields `mlens fsck --json` prints from the report: tensors,
//    tensors_scanned, tensors_scanned_in_part, values_scanned, bytes_scanned and findings (each
//    {severity, code, field, tensor, tensor_index, count, message, other_tensor, other_expert,
//    locations: [{element, file, expert, row, column, block, offset}]}, absent optionals null).
//    fsck_report_from_json reads that back into an equal report; nullopt for any other shape.
//  - fsck_model_cached is fsck_model with its report kept in `cache` (null: none) as a file's fsck
//    summary (CacheKind::fsck_summary), keyed by the identity of the model's first file as it was
//    opened, the identities of its other files in the detail, and the ModelLens version (the
//    cache's). It is used only when every file of the model is a local file that still has the
//    identity it was opened with; a report is stored only when that still holds after the scan.
//    The report is the one fsck_model gives, whichever way it came. With CachedScan::refresh the
//    stored report is not read: the model is scanned again and its report replaces the stored one
//    (the app's "Scan again").
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "mlens/analysis/fsck.h"
#include "mlens/io/cache_database.h"

namespace mlens {

nlohmann::json fsck_report_json(const FsckReport& report);
std::optional<FsckReport> fsck_report_from_json(const nlohmann::json& j);

enum class CachedScan { reuse, refresh };
Result<FsckReport> fsck_model_cached(const Model& model, CacheDatabase* cache, JobContext* job = nullptr, unsigned threads = 2,
                                     CachedScan mode = CachedScan::reuse);

}  // namespace mlens
