// The importance matrix a command is given (`mlens imatrix PATH`, `requant --imatrix PATH`),
// resolved as every input is (target.h).
//
// Contract: open_imatrix_input resolves `text` once. A file that opened (an imatrix, a model
// file, any other regular file) is read with read_imatrix (imatrix.h) from that one open source,
// which says why it is not an importance matrix when it is not one. A path that is missing or did
// not open fails with resolve's reason; a folder, an Ollama store or a store model is not an
// importance matrix (E_NOT_A_MODEL: "Ollama store: not an importance matrix").
#pragma once

#include <string>

#include "mlens/quant/imatrix.h"

namespace mlens {

Result<Imatrix> open_imatrix_input(const std::string& text);

}  // namespace mlens
