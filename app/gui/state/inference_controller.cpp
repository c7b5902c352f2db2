#include "inference_controller.h"

#include <chrono>
#include <filesystem>

#include "mlens/io/text_file.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

Error not_loaded() { return Error{ErrorCode::E_NOT_LOADED, "", std::nullopt, "load the model first"}; }

}  // namespace

InferenceController::InferenceController(std::string path) : m_path(std::move(path)), m_log(std::make_shared<LogCapture>()) {
    // A path that is not a regular file gets its error at load time.
    if (auto identity = regular_file_identity(m_path)) m_identity = *identity;
}

InferenceController::~InferenceController() { m_job.cancel(); }

double InferenceController::progress() const { return m_job.progress(); }

Error InferenceController::refusal() const {
    if (m_job) return Error{ErrorCode::E_BUSY, "", std::nullopt, "a " + std::string(m_running_title) + " job is running"};
    return not_loaded();
}

void InferenceController::start_job(JobRunner& jobs, std::string_view name, std::string_view title, std::string job_name,
                                    std::function<Result<std::any>(JobContext&)> work, std::function<void(Result<std::any>)> publish) {
    m_running = name;
    m_running_title = title;
    m_publish = std::move(publish);
    m_job = jobs.start(std::move(job_name), std::move(work));
}

bool InferenceController::start_load(JobRunner& jobs, const SessionOptions& options) {
    if (m_job) return false;
    m_load_error.reset();
    m_stopped.reset();
    m_take_stream = nullptr;
    auto log = m_log;
    std::string path = m_path;
    // The previous worker ends before the new one starts, so two copies never share the memory.
    m_session.reset();
    ++m_serial;
    auto load = [log, path, options, identity = m_identity](JobContext& job) -> Result<std::any> {
        auto started = std::chrono::steady_clock::now();
        auto loaded = WorkerSession::load(path, options, &job, log, identity);
        if (!loaded) return loaded.error();
        const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        return std::any(std::make_pair(std::shared_ptr<WorkerSession>(std::move(loaded).value()), load_ms));
    };
    auto publish = [this](Result<std::any> result) {
        ++m_serial;
        if (!result) {
            m_session.reset();
            m_banner.clear();
            m_load_error = result.error();
            return;
        }
        auto [session, load_ms] = std::any_cast<std::pair<std::shared_ptr<WorkerSession>, double>>(std::move(result).value());
        m_session = std::move(session);
        m_banner = m_session->route().banner;
        m_load_ms = load_ms;
    };
    start_job(jobs, kLoadJob, kLoadJob, "load " + escape_for_display(std::filesystem::path(path).filename().string(), 60), load, publish);
    return true;
}

void InferenceController::cancel() { m_job.cancel(); }

void InferenceController::note_stop(const std::optional<Error>& error) {
    if (!error || error->code != ErrorCode::E_LLAMA_STOPPED) return;
    m_stopped = error;
    if (m_session) {
        m_session.reset();
        ++m_serial;
    }
}

void InferenceController::poll() {
    // A quick call on the main thread (tokenizer, chat template) may have met a dead worker.
    if (!m_job && m_session && m_session->stopped()) note_stop(m_session->stopped());
    if (!m_job) return;
    if (m_take_stream) m_take_stream();
    std::optional<Result<std::any>> taken = m_job.try_take();
    if (!taken) return;
    // The job ended: what it streamed after the last look is taken too.
    if (m_take_stream) m_take_stream();
    m_take_stream = nullptr;
    std::optional<Error> error;
    if (!*taken) error = taken->error();
    auto publish = std::move(m_publish);
    m_publish = nullptr;
    m_running = {};
    m_running_title = {};
    publish(std::move(*taken));
    note_stop(error);
}

Result<TokenizeOutcome> InferenceController::tokenize(std::string_view text, const TokenizeOptions& options) const {
    if (m_job || !m_session) return refusal();
    auto tokens = m_session->run<TokenizeOp>({std::string(text), options});
    if (!tokens) return tokens.error();
    std::vector<int32_t> ids;
    for (const TokenPiece& t : *tokens) ids.push_back(t.id);
    auto round_trip = m_session->run<DetokenizeOp>({ids, false, true});
    if (!round_trip) return round_trip.error();
    return TokenizeOutcome{std::move(tokens).value(), std::move(round_trip).value()};
}

Result<std::vector<TokenPiece>> InferenceController::pieces(std::span<const int32_t> ids) const {
    if (m_job || !m_session) return refusal();
    return m_session->run<PiecesOp>({std::vector<int32_t>(ids.begin(), ids.end())});
}

Result<ChatRender> InferenceController::chat_template() const {
    if (m_job || !m_session) return refusal();
    ChatTemplateOp::Options options;
    options.messages = sample_conversation();
    return m_session->run<ChatTemplateOp>(options);
}

}  // namespace mlens
