// The folder and the last name of a path as written, split at its last '/' with no normalizing:
// the kernel resolves "link/../x" through the link, so only the text's own split names the
// folder a file there is created in (realpath that folder for its identity).
// parent_of: "a/b" → "a", "b" → ".", "/b" → "/"; base_name: "a/b" → "b". A trailing '/' is the
// caller's to strip.
#pragma once

#include <string>

namespace mlens {

std::string parent_of(const std::string& path);
std::string base_name(const std::string& path);

}  // namespace mlens
