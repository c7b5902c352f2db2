// The build an answer of the cache database was computed by: "<ModelLens version> <git
// revision>", the version column of every entry (cache_database.h). An entry of another build is
// a miss.
#pragma once

#include <string>

namespace mlens {

std::string cache_build_version();

}  // namespace mlens
