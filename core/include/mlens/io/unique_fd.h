// UniqueFd: the one owner of a file descriptor. Every descriptor core opens and keeps past one
// statement is held by one, so it is closed exactly once on every path.
//
// Contract: a UniqueFd closes the descriptor it holds (any value >= 0) when destroyed, reset or
// assigned over; moving transfers it and leaves the source holding none (-1). Not copyable.
#pragma once

namespace mlens {

class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    ~UniqueFd();
    UniqueFd(UniqueFd&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    UniqueFd& operator=(UniqueFd&& o) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    // Closes the descriptor held, if any, and holds `fd` instead.
    void reset(int fd = -1);

private:
    int m_fd = -1;
};

}  // namespace mlens
