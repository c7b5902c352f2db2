#include "folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "mlens/io/owner_stamp.h"
#include "mlens/remote/http_client.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

using Clock = std::chrono::steady_clock;

// A wait this long is said (a lock is held for milliseconds, unless its holder is stopped).
constexpr std::chrono::seconds kLongLockWait{2};
// A step that can go on without the cache stops waiting after this long.
constexpr std::chrono::seconds kPassByAfter{5};

// A holder is mostly another run storing one range: a few milliseconds. Pauses start short and
// double up to this, so a released lock is taken soon without spinning on a long hold.
constexpr std::chrono::milliseconds kLongestPause{16};

std::atomic<bool> g_long_wait_said{false};

void say_long_wait(const std::string& path) {
    if (g_long_wait_said.exchange(true)) return;
    temp_notice("waiting for the range cache's lock " + escape_for_display(path) + ", which another process holds");
}

}  // namespace

FolderLock::FolderLock(const std::string& folder, LockWait wait)
    : m_path(folder + "/lock"), m_fd(::open(m_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (!m_fd.valid()) return;
    const Clock::time_point start = Clock::now();
    std::chrono::milliseconds pause{1};
    while (::flock(m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) return;
        const std::optional<long> left_ms = network_time_left_ms();
        if (left_ms && *left_ms <= 0) {
            m_timed_out = true;
            return;
        }
        const Clock::duration waited = Clock::now() - start;
        if (!left_ms && wait == LockWait::may_pass_by && waited >= kPassByAfter) {
            m_timed_out = m_passed_by = true;
            return;
        }
        if (waited >= kLongLockWait) say_long_wait(m_path);
        std::this_thread::sleep_for(left_ms ? std::min(pause, std::chrono::milliseconds(*left_ms)) : pause);
        pause = std::min(pause * 2, kLongestPause);
    }
}

std::string FolderLock::timed_out_text() const {
    return "the range cache's lock " + escape_for_display(m_path) + " was held by another process " +
        (m_passed_by ? "for " + std::to_string(kPassByAfter.count()) + " s" : "until " + network_time_limit_text());
}

}  // namespace mlens
