// Running a helper program ModelLens ships (mlens-ollama-template, mlens-tokenizer-json): one
// request written to its standard input, its standard output and error read back, within a time
// limit and an output cap.
//
// Contract:
//  - run_helper_process starts `program` with `args` (argv[0] is the program itself), writes
//    `input` to its stdin while reading stdout and stderr, and waits for it. The child inherits
//    this process's environment and nothing else: every other descriptor is close-on-exec.
//  - A helper still running after `timeout_ms`, or whose stdout or stderr grows past
//    `output_cap` bytes, is killed (SIGKILL); `timed_out` / `too_large` say which, and `out` /
//    `err` hold what had arrived.
//  - exit_code is the helper's exit status, or -1 when a signal ended it.
//  - A helper that exits before reading all of its input does not raise SIGPIPE here.
//  - The only errors are the helper not starting (E_NO_WORKER, naming the program) and pipes
//    that cannot be made (E_IO).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mlens/result.h"

namespace mlens {

struct HelperExit {
    std::string out, err;
    int exit_code = -1;
    bool timed_out = false, too_large = false;
};

Result<HelperExit> run_helper_process(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                                      int timeout_ms, size_t output_cap);

}  // namespace mlens
