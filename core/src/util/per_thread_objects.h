// One object per thread that runs a job's tasks, kept after the job so that its caller can merge
// them (parallel_job.h). Internal to core.
//
// Contract: mine(make) is the calling thread's object, made with make() the first time that
// thread asks; thread-safe. all() gives every object made, in the order the threads first asked
// (which varies between runs: a caller merging them must not depend on it), once the job is done.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mlens {

template <class T>
class PerThreadObjects {
public:
    template <class Make>
    T& mine(Make make) {
        std::lock_guard lock(m_mutex);
        auto [it, added] = m_index.emplace(std::this_thread::get_id(), m_objects.size());
        if (added) m_objects.push_back(make());
        return *m_objects[it->second];
    }
    const std::vector<std::unique_ptr<T>>& all() const { return m_objects; }

private:
    std::mutex m_mutex;
    std::map<std::thread::id, size_t> m_index;
    std::vector<std::unique_ptr<T>> m_objects;
};

}  // namespace mlens
