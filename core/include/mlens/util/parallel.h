// parallel_for: the one place the core runs work on several threads, sized by the caller.
//
// Contract: calls fn(i) for every i in [0, count) exactly once, on at most `threads` threads
// (the calling thread included; threads == 0 means std::thread::hardware_concurrency()). Items
// are handed out in increasing order. Returns when all calls returned. If fn returns false, no
// further items are started (already running ones finish) and parallel_for returns false.
#pragma once

#include <cstdint>
#include <functional>

namespace mlens {

bool parallel_for(uint64_t count, unsigned threads, const std::function<bool(uint64_t)>& fn);

}  // namespace mlens
