#include "mlens/util/out_of_memory.h"

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

}  // namespace mlens
