// libFuzzer target: arbitrary bytes through the GGUF reader and the whole compat pipeline
// (fuzz_pipelines.h). Any crash, sanitizer report or unbounded allocation is a bug; each input
// that ever failed is kept in tests/fuzz/regressions/ and replayed by the unit tests.
#include "fuzz_pipelines.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mlens::fuzz::run_compat_pipeline(data, size);
    return 0;
}
