// Where the app proposes to write an export when the user has not chosen a folder yet.
//
// Contract (decided): an export made from a model file goes next to that file, like
// llama-quantize's output; an export from anything else — an Ollama store model, whose store must
// never be written into, or a document with no folder of its own — goes to the user's downloads
// folder: `home`/Downloads when it is a folder, else `home` when it is a folder, else the current
// directory. The working directory is never the first choice: started from a desktop launcher it
// is "/" or the install folder. `home` is $HOME unless a test passes another.
//  - default_output_folder(home): that downloads choice.
//  - output_folder_for(source, home): the folder of `source` when `source` is a regular file
//    named *.gguf or *.safetensors, else default_output_folder(home) (a store model's manifest or
//    a blob, named sha256-…, lies inside its store).
//  - with_folder(path, folder): `path`'s last component moved into `folder` (what a Browse
//    button does to a typed output path: the chosen folder, the same file or folder name).
#pragma once

#include <cstdlib>
#include <string>

namespace mlens {

inline const char* home_environment() { return std::getenv("HOME"); }

std::string default_output_folder(const char* home = home_environment());
std::string output_folder_for(const std::string& source, const char* home = home_environment());
std::string with_folder(const std::string& path, const std::string& folder);

}  // namespace mlens
