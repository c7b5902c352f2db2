// The answer of a command or a job whose allocation failed (std::bad_alloc): one error, shown by
// the command line and the app alike, rather than the end of the program.
//
// Contract: out_of_memory_error(doing) is E_NO_MEMORY with the message "out of memory while
// DOING", followed, when the process's address space is limited (RLIMIT_AS, `ulimit -v`), by
// "(the address space is limited to SIZE by ulimit -v)". It allocates only that message.
//
// address_space_free(bytes) says whether `bytes` of address space can still be reserved now: it
// maps them without access or backing memory and gives them back at once. Under ulimit -v it is
// how a caller keeps headroom before it takes address space it cannot fail gracefully without
// (a thread's stack, a driver's mappings); it allocates nothing.
#pragma once

#include <cstddef>
#include <string_view>

#include "mlens/result.h"

namespace mlens {

Error out_of_memory_error(std::string_view doing);

bool address_space_free(size_t bytes);

}  // namespace mlens
