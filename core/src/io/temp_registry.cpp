#include "mlens/io/temp_registry.h"

#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace mlens {

namespace {

// A handful of outputs are open at once (an export writes two); the table leaves room for
// several jobs of a GUI-like caller.
constexpr int kSlots = 64;

enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
    std::atomic<int> state{kFree};
    char path[PATH_MAX];
};

Slot g_slots[kSlots];

std::atomic<int> g_deferrals{0};
std::atomic<int> g_deferred_signal{0};

void remove_temp_files_and_reraise(int sig) {
    const int saved_errno = errno;
    if (g_deferrals.load(std::memory_order_acquire) > 0) {
        int none = 0;
        g_deferred_signal.compare_exchange_strong(none, sig, std::memory_order_acq_rel);
        errno = saved_errno;
        return;
    }
    remove_registered_temp_files();
    std::signal(sig, SIG_DFL);
    errno = saved_errno;
    std::raise(sig);
}

}  // namespace

void remove_registered_temp_files() {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kLive) ::unlink(s.path);
    // Folders last, once the files in them are gone.
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kLive) ::rmdir(s.path);
}

int register_temp_file(const std::string& path) {
    if (path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = kFree;
        if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].state.store(kLive, std::memory_order_release);
        return i;
    }
    return -1;
}

void unregister_temp_file(int slot) {
    if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

SignalDeferral::SignalDeferral() { g_deferrals.fetch_add(1, std::memory_order_acq_rel); }

SignalDeferral::~SignalDeferral() {
    if (g_deferrals.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (const int sig = g_deferred_signal.exchange(0, std::memory_order_acq_rel)) remove_temp_files_and_reraise(sig);
}

void remove_temp_files_on_signals() {
    struct sigaction action {};
    action.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        // A signal the caller's parent ignores (nohup, a background job's SIGINT) stays ignored.
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        ::sigaction(sig, &action, nullptr);
    }
    // Past a file-size limit (ulimit -f) the kernel's default is to end the process mid-write,
    // leaving its temporary files; ignored, the write fails with EFBIG, which the writer reports
    // with the file's name and cleans up after, as it does on a full disk.
    ::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace mlens
