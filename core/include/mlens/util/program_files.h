// Where ModelLens's programs find the files they ship with: relative to the running executable,
// never an absolute path compiled in, so one build runs from its build folder and, unchanged,
// from wherever `cmake --install` or the Debian package put it.
//
// Contract:
//  - running_executable() is the resolved /proc/self/exe; empty when it cannot be read.
//  - program_file(installed, build_tree) tries the executable's folder and then up to three of
//    its ancestors, nearest first. In each folder D it returns D/installed when that exists (an
//    install prefix: bin/.. holds share/modellens/...), else D/build_tree when that exists (a
//    build folder: app/cli/../.. holds assets/demo). Empty when neither exists in any of them.
//  - helper_program(env_var, file_name, installed, build_tree) finds a helper program ModelLens
//    runs (mlens-llama-worker, mlens-ollama-template): the path in env_var when that is an
//    executable, else file_name beside the running program, else program_file(installed,
//    build_tree) when executable; empty when none is.
//  - Both arguments are relative paths; the callers take them from the build system (the install
//    layout of GNUInstallDirs and the build folder's layout), so they cannot drift from where
//    the files really go.
#pragma once

#include <string>
#include <string_view>

namespace mlens {

std::string running_executable();

std::string program_file(std::string_view installed, std::string_view build_tree);

std::string helper_program(const char* env_var, std::string_view file_name, std::string_view installed, std::string_view build_tree);

}  // namespace mlens
