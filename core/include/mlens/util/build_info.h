// What this build is: ModelLens's version, the git revision it was built from and the llama.cpp
// and ggml it links; shown by --version of both programs and in the app's About window.
//
// Contract:
//  - modellens_version() is the project version ("0.1.0").
//  - modellens_revision() is the git revision of the source at build time, 12 hex digits with
//    "+dirty" appended when tracked files were modified; the MLENS_GIT_REVISION CMake setting
//    when given (building from a source archive); "unknown" outside git without it.
//  - version_text(program) is the --version text, two lines without a final newline:
//      mlens 0.1.0 (git 3bb83df1a2b3)
//      llama.cpp 0.5.0 · ggml 0.25.1 (de3ff81)
#pragma once

#include <string>
#include <string_view>

namespace mlens {

const char* modellens_version();
const char* modellens_revision();
std::string version_text(std::string_view program);
// "llama.cpp 0.5.0 · ggml 0.25.1 (de3ff81)": the pinned release and the linked ggml's own version
// and commit, for About boxes and bug reports.
std::string llama_cpp_version();

}  // namespace mlens
