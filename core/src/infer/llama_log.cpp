#include "mlens/infer/llama_log.h"

#include <ggml.h>
#include <llama.h>

#include <algorithm>

#include "mlens/util/name_table.h"

namespace mlens {

namespace {

thread_local LogCapture* t_capture = nullptr;

void on_llama_log(ggml_log_level level, const char* text, void*) {
    LogCapture* capture = t_capture;
    if (!capture || !text) return;
    LlamaLogLevel mapped = LlamaLogLevel::info;
    switch (level) {
        case GGML_LOG_LEVEL_DEBUG:
            mapped = LlamaLogLevel::debug;
            break;
        case GGML_LOG_LEVEL_WARN:
            mapped = LlamaLogLevel::warn;
            break;
        case GGML_LOG_LEVEL_ERROR:
            mapped = LlamaLogLevel::error;
            break;
        default:
            break;
    }
    capture->append(mapped, level == GGML_LOG_LEVEL_CONT, text);
}

}  // namespace

const char* llama_log_level_name(LlamaLogLevel level) {
    static constexpr NameRow<LlamaLogLevel> kNames[] = {
        {LlamaLogLevel::debug, "debug"}, {LlamaLogLevel::info, "info"}, {LlamaLogLevel::warn, "warn"}, {LlamaLogLevel::error, "error"}};
    return name_of(kNames, level, "info");
}

void LogCapture::append(LlamaLogLevel level, bool continuation, std::string_view fragment) {
    std::lock_guard lock(m_mutex);
    if (m_pending.empty() && !continuation) m_pending_level = level;
    while (!fragment.empty()) {
        size_t nl = fragment.find('\n');
        if (nl == std::string_view::npos) {
            m_pending.append(fragment);
            return;
        }
        m_pending.append(fragment.substr(0, nl));
        push_locked(m_pending_level, std::move(m_pending));
        m_pending.clear();
        fragment.remove_prefix(nl + 1);
        if (!continuation) m_pending_level = level;
    }
}

void LogCapture::flush() {
    std::lock_guard lock(m_mutex);
    if (m_pending.empty()) return;
    push_locked(m_pending_level, std::move(m_pending));
    m_pending.clear();
}

void LogCapture::push_locked(LlamaLogLevel level, std::string text) {
    if (m_lines.size() >= kMaxLines) {
        // Drop the oldest half at once so appends stay amortized O(1).
        size_t cut = kMaxLines / 2;
        m_lines.erase(m_lines.begin(), m_lines.begin() + static_cast<ptrdiff_t>(cut));
        m_dropped += cut;
    }
    m_lines.push_back({level, std::move(text)});
}

std::vector<LlamaLogLine> LogCapture::lines() const {
    std::lock_guard lock(m_mutex);
    return m_lines;
}

std::vector<LlamaLogLine> LogCapture::lines_since(uint64_t first) const {
    std::lock_guard lock(m_mutex);
    uint64_t skip = first > m_dropped ? first - m_dropped : 0;
    if (skip >= m_lines.size()) return {};
    return {m_lines.begin() + static_cast<ptrdiff_t>(skip), m_lines.end()};
}

std::vector<LlamaLogLine> LogCapture::lines_since(uint64_t first, uint64_t* next) const {
    std::lock_guard lock(m_mutex);
    *next = m_dropped + m_lines.size();
    uint64_t skip = first > m_dropped ? first - m_dropped : 0;
    if (skip >= m_lines.size()) return {};
    return {m_lines.begin() + static_cast<ptrdiff_t>(skip), m_lines.end()};
}

uint64_t LogCapture::total() const {
    std::lock_guard lock(m_mutex);
    return m_dropped + m_lines.size();
}

std::string LogCapture::problems_since(uint64_t first) const {
    std::vector<LlamaLogLine> recent = lines_since(first);
    std::string out;
    for (LlamaLogLevel wanted : {LlamaLogLevel::error, LlamaLogLevel::warn}) {
        for (const LlamaLogLine& line : recent) {
            if (line.level != wanted || line.text.empty()) continue;
            if (!out.empty()) out += "; ";
            out += line.text;
        }
        if (!out.empty()) break;
    }
    return out;
}

LogScope::LogScope(LogCapture* capture) : m_previous(t_capture), m_capture(capture) { t_capture = capture; }

LogScope::~LogScope() {
    if (m_capture) m_capture->flush();
    t_capture = m_previous;
}

void init_llama_backend() {
    static std::once_flag once;
    std::call_once(once, [] {
        llama_log_set(on_llama_log, nullptr);
        llama_backend_init();
    });
    // Code outside ModelLens (a test, an embedding program) may have replaced the callback.
    ggml_log_callback current = nullptr;
    void* data = nullptr;
    llama_log_get(&current, &data);
    if (current != on_llama_log) llama_log_set(on_llama_log, nullptr);
}

}  // namespace mlens
