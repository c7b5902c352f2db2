// FolderLock: the range cache's lock between processes, an exclusive flock on "<folder>/lock".
// Internal to core/remote; range_cache.h states what its users see.
//
// Contract:
//  - The constructor takes the lock, polling (LOCK_NB, pauses of a few milliseconds) while another
//    process holds it: a stopped mlens, a long clear. Without a network time limit (http_client.h)
//    it waits as long as that takes; with one, only until the limit runs out: then timed_out() is
//    true, the lock is not held, and the caller goes on without the cache for that step (or fails
//    with the time limit's error where it cannot go on without it). The limit bounds every wait of
//    a run, so a run with --max-time never hangs on a holder that never lets go.
//  - A wait past 2 seconds is said once per process, as it happens, through the range cache's
//    notice sink (set_range_cache_notice_sink): "waiting for the range cache's lock FOLDER/lock,
//    which another process holds".
//  - A lock file that cannot be opened (a folder not made yet, no permission) or a file system
//    without flock holds no lock and does not wait: timed_out() is false, the caller goes on as
//    the only user of the folder.
//  - The lock is released when the FolderLock ends.
#pragma once

#include <string>

#include "mlens/io/unique_fd.h"

namespace mlens {

class FolderLock {
public:
    explicit FolderLock(const std::string& folder);
    bool timed_out() const { return m_timed_out; }
    // What a step that went on without the cache says (a warning of the range cache): the lock
    // file and the time limit.
    std::string timed_out_text() const;

private:
    std::string m_path;
    UniqueFd m_fd;
    bool m_timed_out = false;
};

}  // namespace mlens
