// Workspace: the open documents, which one is active, and the jobs that open them.
//
// Contract:
//  - open() resolves the text as the command line tool does (resolve, mlens/open/target.h) and
//    returns at once: the document appears in state `opening` and an open job (open_target +
//    build_document_index, the store listing for a store root, or read_imatrix for an
//    importance matrix, imatrix.h) runs on the JobRunner, reading
//    what resolve opened. Its path (a store model's: its manifest file) is made absolute and
//    normalized, without a trailing separator. Opening a path that is already open activates
//    that document instead; a document that failed to open is replaced.
//  - poll() (main thread, once per frame) publishes finished open jobs: the document becomes
//    ready or failed, successful paths go to the front of the recent files. A document whose
//    open was cancelled is closed.
//  - close() cancels a running open job; the job's thread is reaped by the runner later.
//  - Nothing here touches ImGui or the window system, so tests drive it headless.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "document.h"
#include "job_runner.h"
#include "settings.h"

namespace mlens {

struct OpenOutcome;

class Workspace {
public:
    Workspace(JobRunner& jobs, Settings& settings) : m_jobs(jobs), m_settings(settings) {}

    Document& open(const std::string& path);
    void close(uint64_t id);
    // Returns true when a document changed state.
    bool poll();

    const std::vector<std::unique_ptr<Document>>& documents() const { return m_documents; }
    Document* find(uint64_t id);
    Document* active() { return find(m_active); }
    void activate(uint64_t id) { m_active = id; }
    bool opening() const;

private:
    JobRunner& m_jobs;
    Settings& m_settings;
    struct Pending {
        uint64_t id;
        JobHandle<OpenOutcome> job;
    };
    std::vector<std::unique_ptr<Document>> m_documents;
    std::vector<Pending> m_pending;
    uint64_t m_next_id = 1;
    uint64_t m_active = 0;
};

// Every regular file ending in ".gguf" directly inside `dir`, sorted by name; empty if none or
// the directory cannot be read.
std::vector<std::string> gguf_files_in(const std::string& dir);

// What the app opens when started without files: the demo Ollama store `dir`/ollama-store when
// it is one, then the demo GGUF files of `dir`.
std::vector<std::string> demo_documents(const std::string& dir);

}  // namespace mlens
