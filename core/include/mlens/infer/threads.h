// How many threads llama.cpp decodes with.
//
// Contract:
//  - online_cores() is the number of cores this process may run on: the CPUs online
//    (sysconf) intersected with its affinity mask (sched_getaffinity), at least 1.
//  - choose_threads(requested): a request >= 1 is used as is up to online_cores(); above it is
//    capped there and `note` says so ("--threads 1000 capped to the 2 online cores"). A request
//    of 0 asks for the default: the cores that are idle right now, measured from /proc/stat
//    over kIdleSampleMs (rounded to the nearest core, at least 1, at most online_cores()), with
//    a `note` naming what was measured. Why not simply every core: llama.cpp's thread pool
//    spin-waits at a barrier after every graph node, so a thread that shares its core with
//    another busy process stalls all the others at each node; on a 2-core machine with another
//    process busy, 2 threads decoded 10x slower than 1. Threads on idle cores never wait that
//    way. A negative request is a caller error: the CLI refuses it as a usage error.
//  - The measurement is taken once, when a model is loaded; a load that starts later measures
//    again. Without a readable /proc/stat the default is online_cores().
//  - busy_cores(sample_ms): how many of the online CPUs other work kept busy over the next
//    sample_ms (this thread sleeps meanwhile), from the aggregate line of /proc/stat; nullopt
//    without a readable /proc/stat. choose_threads measures with it; benchmarks use it to say
//    whether an "idle" figure was taken on an idle machine.
#pragma once

#include <optional>
#include <string>

namespace mlens {

inline constexpr int kIdleSampleMs = 100;

struct ThreadChoice {
    int threads = 1;
    std::string note;  // empty when the request was used as is
};

int online_cores();
std::optional<double> busy_cores(int sample_ms);
ThreadChoice choose_threads(int requested);

}  // namespace mlens
