// Temporary-file registry: the temporary files that exist right now, so that a process ended
// by SIGINT or SIGTERM removes them instead of leaving partial (possibly multi-GB) files.
//
// Contract:
//  - register_temp_file copies the path into a fixed table (no allocation in the handler) and
//    returns its slot, or -1 when the table is full or the path too long (the file is then only
//    removed by its owner). unregister_temp_file frees the slot; the file itself is untouched.
//    A registered path may also be a scratch folder: it is removed once the registered files in
//    it are gone (a folder still holding other files stays).
//  - remove_temp_files_on_signals installs handlers for SIGINT, SIGTERM and SIGHUP that unlink
//    every registered path, then rmdir them (async-signal-safe calls only), restore the default
//    action and raise the signal again, so the process still ends with the signal's status. It
//    also ignores SIGXFSZ, so a write past RLIMIT_FSIZE fails with EFBIG (reported, the temporary
//    file removed) instead of ending the process. The CLI and the llama.cpp worker install it;
//    the GUI ends its loop on those signals and cancels its jobs, whose writers remove their own
//    files.
//  - remove_registered_temp_files does the same removal at once (async-signal-safe), for a process
//    that must end without unwinding: the llama.cpp worker whose parent is gone.
//  - SignalDeferral: while one lives (anywhere in the process, any thread), those handlers only
//    note the signal; when the last one ends, the noted signal is handled as above (temporary
//    files removed, the signal raised again). A multi-file commit holds one, so that a signal
//    ends the process after its files are all in place, never between two renames. A per-thread
//    signal mask could not do this: the signal would go to another thread of the process.
//  - Registration is thread-safe (lock-free slots).
#pragma once

#include <string>

namespace mlens {

int register_temp_file(const std::string& path);
void unregister_temp_file(int slot);
void remove_temp_files_on_signals();
void remove_registered_temp_files();

class SignalDeferral {
public:
    SignalDeferral();
    ~SignalDeferral();
    SignalDeferral(const SignalDeferral&) = delete;
    SignalDeferral& operator=(const SignalDeferral&) = delete;
};

}  // namespace mlens
