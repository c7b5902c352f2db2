#include "mlens/io/unique_fd.h"

#include <unistd.h>

namespace mlens {

UniqueFd::~UniqueFd() { reset(); }

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
        reset(o.m_fd);
        o.m_fd = -1;
    }
    return *this;
}

void UniqueFd::reset(int fd) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = fd;
}

}  // namespace mlens
