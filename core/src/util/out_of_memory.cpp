#include "mlens/util/out_of_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <string>

#include "mlens/text/number_format.h"

namespace mlens {

Error out_of_memory_error(std::string_view doing) {
    std::string message = "out of memory while ";
    message.append(doing);
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        message += " (the address space is limited to " + human_bytes(static_cast<uint64_t>(limit.rlim_cur)) + " by ulimit -v)";
    return Error{ErrorCode::E_NO_MEMORY, "", std::nullopt, std::move(message)};
}

bool address_space_free(size_t bytes) {
    void* probe = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe == MAP_FAILED) return false;
    ::munmap(probe, bytes);
    return true;
}

}  // namespace mlens
