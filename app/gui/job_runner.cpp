#include "job_runner.h"

#include <algorithm>

namespace mlens {

JobRunner::~JobRunner() {
    for (Entry& e : m_entries) e.job->cancel();
    for (Entry& e : m_entries)
        if (e.thread.joinable()) e.thread.join();
}

JobPtr JobRunner::start(std::string name, std::function<void(JobContext&)> work) {
    auto job = std::make_shared<Job>(std::move(name));
    std::thread thread([job, work = std::move(work), wake = m_wake] {
        work(job->m_context);
        job->m_context.report(1.0);
        job->m_done.store(true, std::memory_order_release);
        if (wake) wake();
    });
    m_entries.push_back({job, std::move(thread)});
    return job;
}

void JobRunner::reap() {
    auto finished = [](Entry& e) {
        if (!e.job->done()) return false;
        e.thread.join();
        return true;
    };
    m_entries.erase(std::remove_if(m_entries.begin(), m_entries.end(), finished), m_entries.end());
}

std::vector<JobPtr> JobRunner::jobs() const {
    std::vector<JobPtr> out;
    for (const Entry& e : m_entries) out.push_back(e.job);
    return out;
}

bool JobRunner::busy() const {
    return std::any_of(m_entries.begin(), m_entries.end(), [](const Entry& e) { return !e.job->done(); });
}

void JobRunner::wait_all() {
    for (Entry& e : m_entries)
        if (e.thread.joinable()) e.thread.join();
    m_entries.clear();
}

}  // namespace mlens
