// The inputs a path or model reference names, for an OutputGuard (safe_file_writer.h), when the
// operation knows its inputs as the text the user gave rather than as an opened Model: the worker
// writing `kld --save-base` for models it loaded (possibly through a converted copy in the temp
// folder, whose original must still be protected), the app's screenshot among its files.
//
// Contract of add_reference_inputs(guard, text), after resolve(text) (target.h):
//  - a model file or imatrix: the file, and every shard its name announces when it is a shard of
//    a split GGUF ("-0000N-of-0000M.gguf"), each by device and inode;
//  - a safetensors folder: every regular file in it;
//  - a store model: its manifest file and the whole store (add_protected_folder on the root);
//  - a store root: the whole store;
//  - any other text (missing, not a model): the path itself when it exists, nothing otherwise;
//  - a remote reference (remote_url.h) with no local file of its name: nothing, and nothing is
//    fetched (a file on a server is no file an output could be).
// Nothing is read beyond what resolve() reads; a file that cannot be stat'ed adds nothing.
#pragma once

#include <string>

#include "mlens/io/safe_file_writer.h"

namespace mlens {

void add_reference_inputs(OutputGuard& guard, const std::string& text);

}  // namespace mlens
