#include "mlens/infer/session.h"

#include <llama.h>

#include <algorithm>

#include "infer_internal.h"
#include "mlens/infer/threads.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

const char* vocab_type_name(enum llama_vocab_type type) {
    static constexpr NameRow<enum llama_vocab_type> kNames[] = {
        {LLAMA_VOCAB_TYPE_SPM, "spm"},   {LLAMA_VOCAB_TYPE_BPE, "bpe"},       {LLAMA_VOCAB_TYPE_WPM, "wpm"},  {LLAMA_VOCAB_TYPE_UGM, "ugm"},
        {LLAMA_VOCAB_TYPE_RWKV, "rwkv"}, {LLAMA_VOCAB_TYPE_PLAMO2, "plamo2"}, {LLAMA_VOCAB_TYPE_TEST, "test"}};
    return name_of(kNames, type, "none");
}

std::string meta_string(const llama_model* model, const char* key) {
    std::string buf(256, '\0');
    int32_t n = llama_model_meta_val_str(model, key, buf.data(), buf.size());
    if (n < 0) return {};
    if (static_cast<size_t>(n) >= buf.size()) {
        buf.assign(static_cast<size_t>(n) + 1, '\0');
        n = llama_model_meta_val_str(model, key, buf.data(), buf.size());
        if (n < 0) return {};
    }
    buf.resize(static_cast<size_t>(n));
    return buf;
}

ModelFacts read_facts(const llama_model* model, bool vocab_only) {
    ModelFacts f;
    char desc[256] = {};
    llama_model_desc(model, desc, sizeof desc);
    f.description = desc;
    f.architecture = meta_string(model, "general.architecture");
    f.n_params = vocab_only ? 0 : llama_model_n_params(model);
    f.size_bytes = vocab_only ? 0 : llama_model_size(model);
    f.n_ctx_train = llama_model_n_ctx_train(model);
    f.n_embd = llama_model_n_embd(model);
    f.n_layer = llama_model_n_layer(model);
    // llama.cpp aborts on head counts of a model without layers (vocab-only files).
    if (f.n_layer > 0) {
        f.n_head = llama_model_n_head(model);
        f.n_head_kv = llama_model_n_head_kv(model);
    }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    f.n_vocab = llama_vocab_n_tokens(vocab);
    f.vocab_type = vocab_type_name(llama_vocab_type(vocab));
    f.bos = llama_vocab_bos(vocab);
    f.eos = llama_vocab_eos(vocab);
    f.add_bos = llama_vocab_get_add_bos(vocab);
    f.has_chat_template = llama_model_chat_template(model, nullptr) != nullptr;
    f.vocab_only = vocab_only;
    return f;
}

bool on_load_progress(float progress, void* user_data) {
    auto* job = static_cast<JobContext*>(user_data);
    job_report(job, static_cast<double>(progress));
    return !job_cancelled(job);
}

}  // namespace

Result<std::unique_ptr<Session>> Session::load(const std::string& path, const SessionOptions& options, JobContext* job,
                                               std::shared_ptr<LogCapture> log) {
    init_llama_backend();
    std::unique_ptr<Session> session(new Session());
    session->m_path = path;
    session->m_options = options;
    session->m_options.n_threads = choose_threads(options.n_threads).threads;
    session->m_log = log ? std::move(log) : std::make_shared<LogCapture>();
    LogScope scope(session->m_log.get());
    const uint64_t first_line = session->m_log->total();

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.vocab_only = options.vocab_only;
    mp.no_alloc = options.dry_run;
    if (options.dry_run) mp.load_mode = LLAMA_LOAD_MODE_NONE;  // nothing is read: no mapping either
    mp.progress_callback = on_load_progress;
    mp.progress_callback_user_data = job;
    session->m_model = llama_model_load_from_file(path.c_str(), mp);
    if (!session->m_model) {
        session->m_log->flush();
        if (job_cancelled(job)) return cancelled_error();
        std::string why = session->m_log->problems_since(first_line);
        return Error{ErrorCode::E_LLAMA_LOAD, "", std::nullopt,
                     "llama.cpp could not load the model" + (why.empty() ? std::string() : ": " + why)};
    }
    session->m_vocab = llama_model_get_vocab(session->m_model);
    session->m_facts = read_facts(session->m_model, options.vocab_only || options.dry_run);
    if (options.vocab_only || options.dry_run) return session;

    uint32_t n_ctx = std::max<uint32_t>(options.n_ctx, 16);
    if (session->m_facts.n_ctx_train > 0) n_ctx = std::min<uint32_t>(n_ctx, session->m_facts.n_ctx_train);
    session->m_context = llama_init_from_model(session->m_model, infer_detail::context_params(*session, n_ctx));
    if (!session->m_context) {
        session->m_log->flush();
        std::string why = session->m_log->problems_since(first_line);
        return Error{ErrorCode::E_LLAMA_CONTEXT, "", std::nullopt,
                     "llama.cpp could not create a context" + (why.empty() ? std::string() : ": " + why)};
    }
    session->m_n_ctx = llama_n_ctx(session->m_context);
    job_report(job, 1.0);
    return session;
}

Session::~Session() {
    LogScope scope(m_log.get());
    if (m_context) llama_free(m_context);
    if (m_model) llama_model_free(m_model);
}

Session::JobBinding::JobBinding(Session& session, JobContext* job) : m_session(session), m_previous(session.m_job.exchange(job)) {}

Session::JobBinding::~JobBinding() { m_session.m_job.store(m_previous); }

bool Session::abort_requested(void* session) { return job_cancelled(static_cast<Session*>(session)->m_job.load()); }

Error vocab_only_error(const Session& session) {
    return Error{ErrorCode::E_VOCAB_ONLY, "", std::nullopt, "the model was loaded without weights (vocab only); load it fully to decode"};
}

namespace infer_detail {

llama_context_params context_params(Session& session, uint32_t n_ctx) {
    llama_context_params cp = llama_context_default_params();
    const int threads = session.options().n_threads;
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    cp.n_ubatch = std::min<uint32_t>(n_ctx, 512);
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.abort_callback = Session::abort_requested;
    cp.abort_callback_data = &session;
    cp.no_perf = true;
    return cp;
}

Status decode(Session& session, llama_context* ctx, std::span<const int32_t> tokens, int32_t pos0, bool all_logits, JobContext* job) {
    if (job_cancelled(job)) return cancelled_error();
    if (tokens.empty()) return ok_status();
    const auto n = static_cast<int32_t>(tokens.size());
    llama_batch batch = llama_batch_init(n, 0, 1);
    for (int32_t i = 0; i < n; ++i) {
        batch.token[i] = tokens[static_cast<size_t>(i)];
        batch.pos[i] = pos0 + i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = (all_logits || i == n - 1) ? 1 : 0;
    }
    batch.n_tokens = n;
    const uint64_t first_line = session.log().total();
    int32_t rc = llama_decode(ctx, batch);
    llama_batch_free(batch);
    if (rc == 0) return ok_status();
    if (rc == 2 || job_cancelled(job)) return cancelled_error();
    session.log().flush();
    std::string why = session.log().problems_since(first_line);
    return Error{ErrorCode::E_LLAMA_DECODE, "", std::nullopt,
                 "llama_decode returned " + std::to_string(rc) + (why.empty() ? std::string() : ": " + why)};
}

std::span<const float> logits_row(Session& session, llama_context* ctx, int32_t i) {
    const float* row = llama_get_logits_ith(ctx, i);
    if (!row) return {};
    return {row, static_cast<size_t>(session.facts().n_vocab)};
}

}  // namespace infer_detail

}  // namespace mlens
