// Tensor table export: the tensors a TensorListing shows, in its order, as CSV, Markdown or JSON —
// for the clipboard or a file. Layer summary rows are left out.
//
// Contract:
//  - One row per logical tensor row of the listing (`tensors` is the DocumentIndex's list the
//    listing indexes). Columns: name, type, shape (ne, GGUF order, "64 x 32"), elements, bytes
//    (of every stored entry), offset (absolute, of the tensor's (packed) data in its file), bits
//    per weight. A tensor whose byte size is unknown has
//    empty bytes and bits per weight (JSON: null).
//  - CSV follows RFC 4180 (fields with a comma, quote or line break are quoted, quotes doubled);
//    Markdown escapes '|' and '\'; JSON is an array of objects. Names are written as stored
//    except that control characters are escaped (escape_for_display) in CSV and Markdown, so a
//    hostile name cannot break the table; JSON escapes them itself.
#pragma once

#include <string>

#include "mlens/model/model.h"
#include "mlens/analysis/tensor_listing.h"

namespace mlens {

enum class TensorExportFormat { csv, markdown, json };

const char* tensor_export_extension(TensorExportFormat format);  // "csv", "md", "json"
std::string export_tensors(const Model& model, const std::vector<LogicalTensor>& tensors, const TensorListing& listing,
                           TensorExportFormat format);

}  // namespace mlens
