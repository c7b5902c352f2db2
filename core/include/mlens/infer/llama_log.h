// Capture of llama.cpp's (and ggml's) log lines, and the once-per-process backend setup.
//
// Contract: init_llama_backend() runs llama_backend_init() exactly once per process and installs
// ModelLens's log callback (again, if something else replaced it; thread-safe; every session
// load calls it). From then on,
// llama.cpp writes nothing to stderr: a line logged on a thread that holds a LogScope goes into
// that scope's LogCapture, a line logged on any other thread is dropped. Fragments are joined
// into whole lines (GGML_LOG_LEVEL_CONT continues the previous line's level); the trailing
// newline is removed. A LogCapture is thread-safe: a worker appends while the UI reads
// snapshots. It keeps the newest kMaxLines lines; `total()` counts every line ever appended so
// readers can ask for "lines since N" across the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

enum class LlamaLogLevel { debug, info, warn, error };

struct LlamaLogLine {
    LlamaLogLevel level = LlamaLogLevel::info;
    std::string text;
};

const char* llama_log_level_name(LlamaLogLevel level);

class LogCapture {
public:
    static constexpr size_t kMaxLines = 20000;

    // Appends a fragment; `continuation` means "same level as the line being built".
    void append(LlamaLogLevel level, bool continuation, std::string_view fragment);
    // Ends a pending line without a newline (used when a scope closes).
    void flush();

    std::vector<LlamaLogLine> lines() const;
    // Lines whose running number is >= first (running numbers start at 0 and never reset).
    std::vector<LlamaLogLine> lines_since(uint64_t first) const;
    // The same, and *next becomes the running number after the last line returned, so a reader
    // that passes *next again gets every line once even across the cut.
    std::vector<LlamaLogLine> lines_since(uint64_t first, uint64_t* next) const;
    uint64_t total() const;
    // Error-level lines (warnings when there are none) since `first`, joined by "; ".
    std::string problems_since(uint64_t first) const;

private:
    void push_locked(LlamaLogLevel level, std::string text);

    mutable std::mutex m_mutex;
    std::vector<LlamaLogLine> m_lines;  // newest kMaxLines
    uint64_t m_dropped = 0;  // lines cut from the front
    std::string m_pending;
    LlamaLogLevel m_pending_level = LlamaLogLevel::info;
};

// While alive, llama.cpp log lines emitted on the constructing thread go into `capture`
// (nullptr: dropped). Scopes nest; the previous target is restored on destruction.
class LogScope {
public:
    explicit LogScope(LogCapture* capture);
    ~LogScope();
    LogScope(const LogScope&) = delete;
    LogScope& operator=(const LogScope&) = delete;

private:
    LogCapture* m_previous;
    LogCapture* m_capture;
};

void init_llama_backend();

}  // namespace mlens
