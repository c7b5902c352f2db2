// parallel_for: the one place the core runs work on several threads, sized by the caller.
//
// Contract: calls fn(i) for every i in [0, count) exactly once, on at most `threads` threads
// (the calling thread included; threads == 0 means std::thread::hardware_concurrency()). Items
// are handed out in increasing order. Returns when all calls returned. If fn returns false, no
// further items are started (already running ones finish) and parallel_for returns false. An
// exception thrown by fn (std::bad_alloc under a memory limit) stops the items likewise, on
// whichever thread it was thrown, and the first one is rethrown to the caller once every started
// item has returned: a helper thread never ends the program.
// The helper threads belong to a pool that lives as long as the program and is shared by
// concurrent callers; a call never waits for a helper to become free (the caller works through
// the items itself), so fn may call parallel_for too. Thread counts are capped at
// kMaxParallelThreads. A helper thread that cannot be started (a limit on threads or on the
// address space, for their stacks) leaves the items to the threads there are: fewer threads,
// the same calls.
#pragma once

#include <cstdint>
#include <functional>

namespace mlens {

inline constexpr uint64_t kMaxParallelThreads = 256;

bool parallel_for(uint64_t count, unsigned threads, const std::function<bool(uint64_t)>& fn);

}  // namespace mlens
