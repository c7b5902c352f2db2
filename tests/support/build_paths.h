// Paths of this build and checkout that tests and benchmarks use: the demo models, the programs
// built here, the pinned llama.cpp's source and tools, fixture folders of the source tree.
//
// Contract: the values live in one source file that CMake writes into the build tree
// (build_paths.cpp, from tests/support/build_paths.cpp.in), so no other file's compile command
// names a path of the checkout. A clone elsewhere (CI's fresh checkout) compiles every other test
// file exactly as this one did, which a compiler cache can reuse. Each name below is a constant-
// initialized C string, safe to read from other files' static initializers.
// MLENS_LLAMA_TEST_CHAT_TEMPLATE is "" when third_party/setup.sh did not build that tool.
#pragma once

namespace mlens::test::build_paths {

extern const char* const demo_dir;
extern const char* const cli;
extern const char* const fake_llama_worker;
extern const char* const source_dir;
extern const char* const fuzz_regressions;
extern const char* const imatrix_fixtures;
extern const char* const requirements_generator;
extern const char* const llama_source;
extern const char* const llama_perplexity;
extern const char* const llama_imatrix;
extern const char* const llama_test_chat_template;

}  // namespace mlens::test::build_paths

#define MLENS_DEMO_DIR (::mlens::test::build_paths::demo_dir)
#define MLENS_CLI_PATH (::mlens::test::build_paths::cli)
#define MLENS_FAKE_LLAMA_WORKER (::mlens::test::build_paths::fake_llama_worker)
#define MLENS_SOURCE_DIR (::mlens::test::build_paths::source_dir)
#define MLENS_FUZZ_REGRESSIONS (::mlens::test::build_paths::fuzz_regressions)
#define MLENS_IMATRIX_FIXTURES (::mlens::test::build_paths::imatrix_fixtures)
#define MLENS_REQUIREMENTS_GENERATOR (::mlens::test::build_paths::requirements_generator)
#define MLENS_LLAMA_SOURCE (::mlens::test::build_paths::llama_source)
#define MLENS_LLAMA_PERPLEXITY (::mlens::test::build_paths::llama_perplexity)
#define MLENS_LLAMA_IMATRIX (::mlens::test::build_paths::llama_imatrix)
#define MLENS_LLAMA_TEST_CHAT_TEMPLATE (::mlens::test::build_paths::llama_test_chat_template)
