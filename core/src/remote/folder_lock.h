// FolderLock: the range cache's lock between processes, an exclusive flock on "<folder>/lock".
// Internal to core/remote; range_cache.h states what its users see.
//
// Contract:
//  - The constructor takes the lock, polling (LOCK_NB, pauses of a few milliseconds) while another
//    process holds it: a stopped mlens, a long clear. It stops waiting when the network time
//    limit (http_client.h) runs out, and, for a step that can go on without the cache
//    (LockWait::may_pass_by), after 5 seconds without a limit: then timed_out() is true, the lock
//    is not held, and the caller goes on without the cache for that step (or fails with E_BUSY
//    where it cannot go on without it). So neither a run with --max-time nor the app, which has
//    no time limit and whose jobs must stay cancellable, hangs on a holder that never lets go;
//    only a clear without a limit waits as long as the holder keeps the lock.
//  - A wait past 2 seconds is said once per process, as it happens, as a notice (temp_notice,
//    owner_stamp.h: the CLI prints it, the app logs it): "waiting for the range cache's lock
//    FOLDER/lock, which another process holds".
//  - A lock file that cannot be opened (a folder not made yet, no permission) or a file system
//    without flock holds no lock and does not wait: timed_out() is false, the caller goes on as
//    the only user of the folder.
//  - The lock is released when the FolderLock ends.
#pragma once

#include <string>

#include "mlens/io/unique_fd.h"

namespace mlens {

enum class LockWait { may_pass_by, while_held };

class FolderLock {
public:
    FolderLock(const std::string& folder, LockWait wait);
    bool timed_out() const { return m_timed_out; }
    // What a step that went on without the cache says (a warning of the range cache): the lock
    // file and what ended the wait (the time limit, or the wait's bound).
    std::string timed_out_text() const;

private:
    std::string m_path;
    UniqueFd m_fd;
    bool m_timed_out = false;
    bool m_passed_by = false;  // timed out at the bound of a step that may pass by, not at the limit
};

}  // namespace mlens
