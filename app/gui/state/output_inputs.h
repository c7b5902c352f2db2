// What a file written by the app must never replace: the files of the documents it shows.
//
// Contract: gui_output_guard lists, by device and inode, what the path each document was opened
// from names (add_reference_inputs: a store model's whole store), its Model's files (every shard,
// the blob of a store model) and, for an Ollama store document, the whole store — for `doc` and,
// when a workspace is given, every open document. The guard is taken when the write starts, so documents opened later are included.
#pragma once

#include "document.h"
#include "mlens/io/safe_file_writer.h"

namespace mlens {

class Workspace;

OutputGuard gui_output_guard(const Document* doc, const Workspace* workspace);

}  // namespace mlens
