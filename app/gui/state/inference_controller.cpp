#include "inference_controller.h"

#include <chrono>
#include <filesystem>

#include "mlens/io/text_file.h"
#include "mlens/text/escape.h"

namespace mlens {

const char* infer_job_name(InferJob kind) {
    switch (kind) {
        case InferJob::none:
            return "none";
        case InferJob::load:
            return "load";
        case InferJob::generate:
            return "generate";
        case InferJob::layers:
            return "layers";
        case InferJob::ab:
            return "A/B";
        case InferJob::kld:
            return "corpus KLD";
        case InferJob::divergence:
            return "layer divergence";
        case InferJob::memory:
            return "memory";
    }
    return "?";
}

struct InferenceController::Stream {
    std::mutex mutex;  // guards prompt and steps while a generation runs
    std::vector<TokenPiece> prompt;
    std::vector<GenerationStep> steps;
};

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
    if (m_job) return Error{ErrorCode::E_BUSY, "", std::nullopt, std::string("a ") + infer_job_name(m_running) + " job is running"};
    return not_loaded();
}

bool InferenceController::begin(InferJob kind) {
    if (m_job) return false;
    m_running = kind;
    return true;
}

bool InferenceController::start_load(JobRunner& jobs, const SessionOptions& options) {
    if (!begin(InferJob::load)) return false;
    m_load_error.reset();
    m_stopped.reset();
    auto log = m_log;
    std::string path = m_path;
    // The previous worker ends before the new one starts, so two copies never share the memory.
    m_session.reset();
    ++m_serial;
    m_job = jobs.start("load " + escape_for_display(std::filesystem::path(path).filename().string(), 60),
                       [log, path, options, identity = m_identity](JobContext& job) -> Result<InferOutcome> {
                           auto started = std::chrono::steady_clock::now();
                           auto loaded = WorkerSession::load(path, options, &job, log, identity);
                           if (!loaded) return loaded.error();
                           LoadOutcome out;
                           out.session = std::move(loaded).value();
                           out.banner = out.session->route().banner;
                           out.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
                           return InferOutcome(std::move(out));
                       });
    return true;
}

void InferenceController::forget(InferJob kind) {
    switch (kind) {
        case InferJob::generate:
            m_generation.reset();
            m_generation_error.reset();
            break;
        case InferJob::layers:
            m_layers.reset();
            m_layers_error.reset();
            break;
        case InferJob::ab:
            m_ab.reset();
            m_ab_error.reset();
            break;
        case InferJob::kld:
            m_kld.reset();
            m_kld_error.reset();
            break;
        case InferJob::divergence:
            m_divergence.reset();
            m_divergence_error.reset();
            break;
        case InferJob::memory:
            m_memory.reset();
            m_memory_error.reset();
            break;
        case InferJob::load:
        case InferJob::none:
            break;
    }
}

template <typename Work>
bool InferenceController::start_decoding(JobRunner& jobs, InferJob kind, const char* name, Work work) {
    if (!can_decode() || !begin(kind)) return false;
    forget(kind);
    m_job = jobs.start(name, [session = m_session, work = std::move(work)](JobContext& job) -> Result<InferOutcome> {
        auto result = work(*session, job);
        if (!result) return result.error();
        return InferOutcome(std::move(result).value());
    });
    return true;
}

bool InferenceController::start_generate(JobRunner& jobs, std::string prompt, const GenerateOptions& options) {
    if (!can_decode() || busy()) return false;
    m_stream.clear();
    m_stream_prompt.clear();
    m_stream_target = options.max_tokens;
    auto stream = std::make_shared<Stream>();
    m_streaming = stream;
    return start_decoding(
        jobs, InferJob::generate, "generate",
        [stream, prompt = std::move(prompt), options](WorkerSession& session, JobContext& job) -> Result<GenerateOutcome> {
            auto prompt_tokens = session.tokenize(prompt, options.tokenize);
            if (!prompt_tokens) return prompt_tokens.error();
            std::vector<int32_t> ids;
            for (const TokenPiece& t : *prompt_tokens) ids.push_back(t.id);
            {
                std::lock_guard lock(stream->mutex);
                stream->prompt = *prompt_tokens;
            }
            auto on_step = [&stream](const GenerationStep& step) {
                std::lock_guard lock(stream->mutex);
                stream->steps.push_back(step);
            };
            auto result = session.generate_from_tokens(std::move(ids), options, &job, on_step);
            if (!result) return result.error();
            return GenerateOutcome{std::move(prompt_tokens).value(), std::move(result).value()};
        });
}

bool InferenceController::start_layers(JobRunner& jobs, std::string prompt, const LayerCaptureOptions& options) {
    return start_decoding(jobs, InferJob::layers, "layer capture",
                          [prompt = std::move(prompt), options](WorkerSession& session, JobContext& job) {
                              return session.capture_layers(prompt, options, &job);
                          });
}

bool InferenceController::start_ab(JobRunner& jobs, std::string b_path, std::string prompt, const AbOptions& options) {
    if (b_path.empty()) return false;
    return start_decoding(
        jobs, InferJob::ab, "A/B",
        [b_path = std::move(b_path), prompt = std::move(prompt), options](WorkerSession& session, JobContext& job) -> Result<AbOutcome> {
            auto result = session.compare_ab(b_path, prompt, options, &job);
            if (!result) return result.error();
            AbOutcome out;
            out.result = std::move(result->result);
            out.tokens = std::move(result->tokens);
            out.top_a = std::move(result->top_a);
            out.top_b = std::move(result->top_b);
            out.b_path = b_path;
            out.b_banner = result->b_route.banner;
            return out;
        });
}

bool InferenceController::start_kld(JobRunner& jobs, std::string b_path, std::string text_path, const KldOptions& options) {
    if (b_path.empty() || text_path.empty()) return false;
    return start_decoding(jobs, InferJob::kld, "corpus KLD",
                          [b_path = std::move(b_path), text_path = std::move(text_path), options](WorkerSession& session,
                                                                                                  JobContext& job) -> Result<KldOutcome> {
                              auto text = read_text_file(text_path, kMaxCorpusTextBytes);
                              if (!text) return text.error();
                              auto result = session.corpus_kld(b_path, *text, options, &job, {}, {text_path});
                              if (!result) return result.error();
                              KldOutcome out;
                              out.result = std::move(result->result);
                              out.moments = kld_moments(out.result.total);
                              out.kld_order = kld_order(out.result.kld);
                              out.p_diff_order = kld_order(out.result.p_diff);
                              out.b_path = b_path;
                              out.text_path = text_path;
                              if (result->b_route) out.b_banner = result->b_route->banner;
                              return out;
                          });
}

bool InferenceController::start_divergence(JobRunner& jobs, std::string b_path, std::string prompt, const LayerDivergenceOptions& options) {
    if (b_path.empty()) return false;
    return start_decoding(jobs, InferJob::divergence, "layer divergence",
                          [b_path = std::move(b_path), prompt = std::move(prompt), options](WorkerSession& session,
                                                                                            JobContext& job) -> Result<DivergenceOutcome> {
                              auto result = session.layer_divergence(b_path, prompt, options, &job);
                              if (!result) return result.error();
                              return DivergenceOutcome{std::move(result).value(), b_path};
                          });
}

bool InferenceController::start_memory(JobRunner& jobs, const MemoryPlanOptions& options) {
    return start_decoding(jobs, InferJob::memory, "memory",
                          [options](WorkerSession& session, JobContext& job) { return session.measure_memory(options, &job); });
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
    if (m_streaming) {
        std::lock_guard lock(m_streaming->mutex);
        if (m_stream_prompt.empty() && !m_streaming->prompt.empty()) m_stream_prompt = m_streaming->prompt;
        for (size_t i = m_stream.size(); i < m_streaming->steps.size(); ++i) m_stream.push_back(m_streaming->steps[i]);
    }
    std::optional<Result<InferOutcome>> taken = m_job.try_take();
    if (!taken) return;
    m_streaming.reset();
    std::optional<Error> error;
    if (!*taken) error = taken->error();
    auto outcome = [&]<typename T>(std::optional<T>& into, std::optional<Error>& error_into) {
        error_into = error;
        into.reset();
        if (!error) into = std::get<T>(std::move(*taken).value());
    };
    switch (m_running) {
        case InferJob::load:
            ++m_serial;
            if (!error) {
                LoadOutcome loaded = std::get<LoadOutcome>(std::move(*taken).value());
                m_session = std::move(loaded.session);
                m_banner = std::move(loaded.banner);
                m_load_ms = loaded.load_ms;
            } else {
                m_session.reset();
                m_banner.clear();
                m_load_error = error;
            }
            break;
        case InferJob::generate:
            outcome(m_generation, m_generation_error);
            if (m_generation) {
                m_stream = m_generation->result.steps;
                m_stream_prompt = m_generation->prompt;
            }
            break;
        case InferJob::layers:
            outcome(m_layers, m_layers_error);
            break;
        case InferJob::ab:
            outcome(m_ab, m_ab_error);
            break;
        case InferJob::kld:
            outcome(m_kld, m_kld_error);
            break;
        case InferJob::divergence:
            outcome(m_divergence, m_divergence_error);
            break;
        case InferJob::memory:
            outcome(m_memory, m_memory_error);
            break;
        case InferJob::none:
            break;
    }
    note_stop(error);
    ++m_published[static_cast<size_t>(m_running)];
    m_running = InferJob::none;
}

Result<TokenizeOutcome> InferenceController::tokenize(std::string_view text, const TokenizeOptions& options) const {
    if (m_job || !m_session) return refusal();
    auto tokens = m_session->tokenize(text, options);
    if (!tokens) return tokens.error();
    std::vector<int32_t> ids;
    for (const TokenPiece& t : *tokens) ids.push_back(t.id);
    auto round_trip = m_session->detokenize(ids, false, true);
    if (!round_trip) return round_trip.error();
    return TokenizeOutcome{std::move(tokens).value(), std::move(round_trip).value()};
}

Result<std::vector<TokenPiece>> InferenceController::pieces(std::span<const int32_t> ids) const {
    if (m_job || !m_session) return refusal();
    return m_session->token_pieces(ids);
}

Result<ChatRender> InferenceController::chat_template() const {
    if (m_job || !m_session) return refusal();
    return m_session->apply_chat_template(sample_conversation());
}

}  // namespace mlens
