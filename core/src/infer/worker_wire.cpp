#include "worker_wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <span>

namespace mlens::wire {

namespace {

Error wire_error(std::string message) { return Error{ErrorCode::E_WIRE, "", std::nullopt, std::move(message)}; }

Status send_all(int fd, const uint8_t* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Error{ErrorCode::E_EOF, "", std::nullopt, std::string("the other side is gone: ") + std::strerror(errno)};
        data += n;
        size -= static_cast<size_t>(n);
    }
    return ok_status();
}

// Bytes read from the socket at a time: the most the kept bytes grow by before take() looks at them.
constexpr size_t kReceiveChunk = 1u << 20;
constexpr uint64_t kIndefinite = UINT64_MAX;

uint32_t frame_length(const uint8_t* head) {
    return head[0] | (uint32_t(head[1]) << 8) | (uint32_t(head[2]) << 16) | (uint32_t(head[3]) << 24);
}

// Walks the items of one CBOR value without building them, so that its nesting is known before
// nlohmann's decoder, which recurses once per level, sees it. Each container's remaining item
// count is kept on a stack (kIndefinite until its 0xff); a count larger than the bytes left is
// refused at once, as it cannot be met.
Status check_cbor_nesting(std::span<const uint8_t> body) {
    std::vector<uint64_t> open;
    size_t pos = 0;
    const Error ends_early = wire_error("a frame ends inside its CBOR value");
    // The argument of a head (RFC 8949 3.1): in the head itself, or in the 1, 2, 4 or 8 bytes after.
    auto argument = [&](uint8_t info, uint64_t& value) {
        if (info < 24) {
            value = info;
            return true;
        }
        if (body.size() - pos < (size_t{1} << (info - 24))) return false;
        value = 0;
        for (size_t i = 0; i < (size_t{1} << (info - 24)); ++i) value = value << 8 | body[pos++];
        return true;
    };
    // One item is complete: it counts against its container, which may complete in turn.
    auto finish_item = [&] {
        while (!open.empty() && open.back() != kIndefinite) {
            if (--open.back() > 0) return;
            open.pop_back();
        }
    };
    auto announces = [&](uint64_t count, const char* what) {
        return wire_error("a frame announces " + std::to_string(count) + " " + what + " in " + std::to_string(body.size() - pos) +
                          " bytes");
    };
    auto open_container = [&](uint64_t items) -> Status {
        if (items == 0) {
            finish_item();
            return ok_status();
        }
        if (items != kIndefinite && items > body.size() - pos) return announces(items, "items");
        if (open.size() == kMaxFrameDepth)
            return wire_error("a frame nests deeper than " + std::to_string(kMaxFrameDepth) + " levels");
        open.push_back(items);
        return ok_status();
    };
    do {
        if (pos >= body.size()) return ends_early;
        const uint8_t head = body[pos++];
        const uint8_t major = head >> 5, info = head & 31;
        if (head == 0xff) {
            if (open.empty() || open.back() != kIndefinite) return wire_error("a frame holds a CBOR break outside a container");
            open.pop_back();
            finish_item();
            continue;
        }
        if (info >= 28 && (info < 31 || major < 2 || major > 5)) return wire_error("a frame holds an invalid CBOR item");
        if (info == 31) {
            if (Status s = open_container(kIndefinite); !s) return s;
            continue;
        }
        uint64_t value = 0;
        if (!argument(info, value)) return ends_early;
        Status s = ok_status();
        if (major == 2 || major == 3) {
            if (value > body.size() - pos) return ends_early;
            pos += static_cast<size_t>(value);
            finish_item();
        } else if (major == 4) {
            s = open_container(value);
        } else if (major == 5) {
            // A pair is two items, each of at least one byte.
            s = value > (body.size() - pos) / 2 ? announces(value, "pairs") : open_container(value * 2);
        } else if (major == 6) {
            s = open_container(1);
        } else {
            finish_item();
        }
        if (!s) return s;
    } while (!open.empty());
    if (pos != body.size()) return wire_error("a frame has bytes after its CBOR value");
    return ok_status();
}

Json floats(const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Json::binary(std::move(bytes));
}

std::vector<float> floats_from(const Json& j) {
    const auto& bytes = j.get_binary();
    std::vector<float> values(bytes.size() / sizeof(float));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
    return values;
}

}  // namespace

Status write_frame(int fd, const Json& message) {
    std::vector<uint8_t> body = Json::to_cbor(message);
    if (body.size() > kMaxFrameBytes) return wire_error("a message of " + std::to_string(body.size()) + " bytes is too large");
    const auto n = static_cast<uint32_t>(body.size());
    const uint8_t head[4] = {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n >> 16),
                             static_cast<uint8_t>(n >> 24)};
    Status st = send_all(fd, head, sizeof head);
    if (!st) return st;
    return send_all(fd, body.data(), body.size());
}

Status FrameReader::receive(int fd, bool wait) {
    const size_t had = m_bytes.size();
    m_bytes.resize(had + kReceiveChunk);
    ssize_t n = -1;
    do {
        n = ::recv(fd, m_bytes.data() + had, kReceiveChunk, wait ? 0 : MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    m_bytes.resize(had + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ok_status();
    if (n <= 0)
        return Error{ErrorCode::E_EOF, "", std::nullopt,
                     m_bytes.empty() ? "the other side closed the connection" : "the connection closed inside a message"};
    return ok_status();
}

std::optional<Result<Json>> FrameReader::take() {
    if (m_bytes.size() < 4) return std::nullopt;
    const uint32_t n = frame_length(m_bytes.data());
    if (n > kMaxFrameBytes)
        return Result<Json>(wire_error("a frame announces " + std::to_string(n) + " bytes, more than the " +
                                       std::to_string(kMaxFrameBytes) + " a frame may have"));
    if (m_bytes.size() - 4 < n) return std::nullopt;
    const std::span<const uint8_t> body(m_bytes.data() + 4, n);
    Status nesting = check_cbor_nesting(body);
    Json j = nesting ? Json::from_cbor(body.begin(), body.end(), true, false) : Json();
    m_bytes.erase(m_bytes.begin(), m_bytes.begin() + 4 + n);
    if (!nesting) return Result<Json>(nesting.error());
    if (j.is_discarded() || !j.is_object()) return Result<Json>(wire_error("a frame is not a CBOR object"));
    return Result<Json>(std::move(j));
}

Result<Json> FrameReader::read(int fd) {
    for (;;) {
        if (auto frame = take()) return std::move(*frame);
        if (Status s = receive(fd, true); !s) return s.error();
    }
}

Json encode_error(const Error& e) {
    Json j = {{"type", "error"}, {"code", code_name(e.code)}, {"field", e.field}, {"message", e.message}};
    if (e.offset) j["offset"] = *e.offset;
    return j;
}

Error decode_error(const Json& j) {
    Error e{code_from_name(j.at("code").get<std::string>()).value_or(ErrorCode::E_WIRE), j.value("field", std::string()), std::nullopt,
            j.at("message").get<std::string>()};
    if (j.contains("offset")) e.offset = j.at("offset").get<uint64_t>();
    return e;
}

Json encode_session_options(const SessionOptions& o) {
    return {{"vocab_only", o.vocab_only}, {"n_ctx", o.n_ctx}, {"n_threads", o.n_threads}, {"as_is", o.as_is}};
}

SessionOptions decode_session_options(const Json& j) {
    return SessionOptions{j.at("vocab_only").get<bool>(), j.at("n_ctx").get<uint32_t>(), j.at("n_threads").get<int>(),
                          j.at("as_is").get<bool>()};
}

Json encode_facts(const ModelFacts& f) {
    return {{"description", f.description},
            {"architecture", f.architecture},
            {"n_params", f.n_params},
            {"size_bytes", f.size_bytes},
            {"n_ctx_train", f.n_ctx_train},
            {"n_embd", f.n_embd},
            {"n_layer", f.n_layer},
            {"n_head", f.n_head},
            {"n_head_kv", f.n_head_kv},
            {"n_vocab", f.n_vocab},
            {"vocab_type", f.vocab_type},
            {"bos", f.bos},
            {"eos", f.eos},
            {"add_bos", f.add_bos},
            {"has_chat_template", f.has_chat_template},
            {"vocab_only", f.vocab_only}};
}

ModelFacts decode_facts(const Json& j) {
    ModelFacts f;
    f.description = j.at("description").get<std::string>();
    f.architecture = j.at("architecture").get<std::string>();
    f.n_params = j.at("n_params").get<uint64_t>();
    f.size_bytes = j.at("size_bytes").get<uint64_t>();
    f.n_ctx_train = j.at("n_ctx_train").get<int32_t>();
    f.n_embd = j.at("n_embd").get<int32_t>();
    f.n_layer = j.at("n_layer").get<int32_t>();
    f.n_head = j.at("n_head").get<int32_t>();
    f.n_head_kv = j.at("n_head_kv").get<int32_t>();
    f.n_vocab = j.at("n_vocab").get<int32_t>();
    f.vocab_type = j.at("vocab_type").get<std::string>();
    f.bos = j.at("bos").get<int32_t>();
    f.eos = j.at("eos").get<int32_t>();
    f.add_bos = j.at("add_bos").get<bool>();
    f.has_chat_template = j.at("has_chat_template").get<bool>();
    f.vocab_only = j.at("vocab_only").get<bool>();
    return f;
}

Json encode_route(const LoadRoute& r) { return {{"through_export", r.through_export}, {"handlers", r.handlers}, {"banner", r.banner}}; }

LoadRoute decode_route(const Json& j) {
    return LoadRoute{j.at("through_export").get<bool>(), j.at("handlers").get<std::vector<std::string>>(),
                     j.at("banner").get<std::string>()};
}

Json encode_tokenize_options(const TokenizeOptions& o) { return {{"add_special", o.add_special}, {"parse_special", o.parse_special}}; }

TokenizeOptions decode_tokenize_options(const Json& j) {
    return TokenizeOptions{j.at("add_special").get<bool>(), j.at("parse_special").get<bool>()};
}

Json encode_pieces(const std::vector<TokenPiece>& pieces) {
    Json a = Json::array();
    for (const TokenPiece& p : pieces) a.push_back(Json::array({p.id, p.piece, p.control}));
    return a;
}

std::vector<TokenPiece> decode_pieces(const Json& j) {
    std::vector<TokenPiece> out;
    for (const Json& p : j) out.push_back({p.at(0).get<int32_t>(), p.at(1).get<std::string>(), p.at(2).get<bool>()});
    return out;
}

Json encode_chat(const ChatRender& c) {
    return {{"template_source", c.template_source}, {"prompt", c.prompt}, {"tokens", encode_pieces(c.tokens)}};
}

ChatRender decode_chat(const Json& j) {
    return ChatRender{j.at("template_source").get<std::string>(), j.at("prompt").get<std::string>(), decode_pieces(j.at("tokens"))};
}

Json encode_messages(const std::vector<ChatMessage>& messages) {
    Json a = Json::array();
    for (const ChatMessage& m : messages) a.push_back(Json::array({m.role, m.content}));
    return a;
}

std::vector<ChatMessage> decode_messages(const Json& j) {
    std::vector<ChatMessage> out;
    for (const Json& m : j) out.push_back({m.at(0).get<std::string>(), m.at(1).get<std::string>()});
    return out;
}

Json encode_generate_options(const GenerateOptions& o) {
    return {{"max_tokens", o.max_tokens},
            {"n_candidates", o.n_candidates},
            {"temperature", o.sampling.temperature},
            {"top_k", o.sampling.top_k},
            {"top_p", o.sampling.top_p},
            {"seed", o.sampling.seed},
            {"tokenize", encode_tokenize_options(o.tokenize)},
            {"stop_at_eog", o.stop_at_eog}};
}

GenerateOptions decode_generate_options(const Json& j) {
    GenerateOptions o;
    o.max_tokens = j.at("max_tokens").get<int>();
    o.n_candidates = j.at("n_candidates").get<int>();
    o.sampling.temperature = j.at("temperature").get<float>();
    o.sampling.top_k = j.at("top_k").get<int>();
    o.sampling.top_p = j.at("top_p").get<float>();
    o.sampling.seed = j.at("seed").get<uint64_t>();
    o.tokenize = decode_tokenize_options(j.at("tokenize"));
    o.stop_at_eog = j.at("stop_at_eog").get<bool>();
    return o;
}

Json encode_step(const GenerationStep& s) {
    Json c = Json::array();
    for (const TokenCandidate& t : s.candidates) c.push_back(Json::array({t.id, t.piece, t.logit, t.prob}));
    return {{"token", s.token}, {"piece", s.piece}, {"prob", s.prob}, {"candidates", c}};
}

GenerationStep decode_step(const Json& j) {
    GenerationStep s;
    s.token = j.at("token").get<int32_t>();
    s.piece = j.at("piece").get<std::string>();
    s.prob = j.at("prob").get<double>();
    for (const Json& c : j.at("candidates"))
        s.candidates.push_back({c.at(0).get<int32_t>(), c.at(1).get<std::string>(), c.at(2).get<float>(), c.at(3).get<double>()});
    return s;
}

Json encode_generation(const GenerationResult& r) {
    Json steps = Json::array();
    for (const GenerationStep& s : r.steps) steps.push_back(encode_step(s));
    return {{"prompt_tokens", r.prompt_tokens},
            {"steps", steps},
            {"text", r.text},
            {"stop", static_cast<int>(r.stop)},
            {"prompt_ms", r.prompt_ms},
            {"generation_ms", r.generation_ms},
            {"generation_decoded", r.generation_decoded},
            {"prompt_tokens_per_s", r.prompt_tokens_per_s},
            {"generation_tokens_per_s", r.generation_tokens_per_s}};
}

GenerationResult decode_generation(const Json& j) {
    GenerationResult r;
    r.prompt_tokens = j.at("prompt_tokens").get<std::vector<int32_t>>();
    for (const Json& s : j.at("steps")) r.steps.push_back(decode_step(s));
    r.text = j.at("text").get<std::string>();
    const int stop = j.at("stop").get<int>();
    r.stop = stop == 1 ? StopReason::end_of_generation : stop == 2 ? StopReason::context_full : StopReason::max_tokens;
    r.prompt_ms = j.at("prompt_ms").get<double>();
    r.generation_ms = j.at("generation_ms").get<double>();
    r.generation_decoded = j.at("generation_decoded").get<int>();
    r.prompt_tokens_per_s = j.at("prompt_tokens_per_s").get<double>();
    r.generation_tokens_per_s = j.at("generation_tokens_per_s").get<double>();
    return r;
}

Json encode_layer_options(const LayerCaptureOptions& o) {
    return {{"names", o.names},
            {"tokenize", encode_tokenize_options(o.tokenize)},
            {"keep_values", o.keep_values},
            {"measure_plain", o.measure_plain}};
}

LayerCaptureOptions decode_layer_options(const Json& j) {
    LayerCaptureOptions o;
    o.names = j.at("names").get<std::vector<std::string>>();
    o.tokenize = decode_tokenize_options(j.at("tokenize"));
    o.keep_values = j.at("keep_values").get<bool>();
    o.measure_plain = j.at("measure_plain").get<bool>();
    return o;
}

Json encode_layers(const LayerCaptureResult& r) {
    Json acts = Json::array();
    for (const ActivationStats& a : r.activations)
        acts.push_back({{"tensor", a.tensor},
                        {"base", a.base},
                        {"layer", a.layer},
                        {"shape", a.shape},
                        {"count", a.count},
                        {"l2", a.l2},
                        {"min", a.min},
                        {"max", a.max},
                        {"mean", a.mean},
                        {"std", a.std},
                        {"values", floats(a.values)}});
    return {{"tokens", r.tokens}, {"activations", acts}, {"capture_ms", r.capture_ms}, {"plain_ms", r.plain_ms}};
}

LayerCaptureResult decode_layers(const Json& j) {
    LayerCaptureResult r;
    r.tokens = j.at("tokens").get<std::vector<int32_t>>();
    for (const Json& a : j.at("activations")) {
        ActivationStats s;
        s.tensor = a.at("tensor").get<std::string>();
        s.base = a.at("base").get<std::string>();
        s.layer = a.at("layer").get<int32_t>();
        s.shape = a.at("shape").get<std::vector<int64_t>>();
        s.count = a.at("count").get<uint64_t>();
        s.l2 = a.at("l2").get<double>();
        s.min = a.at("min").get<double>();
        s.max = a.at("max").get<double>();
        s.mean = a.at("mean").get<double>();
        s.std = a.at("std").get<double>();
        s.values = floats_from(a.at("values"));
        r.activations.push_back(std::move(s));
    }
    r.capture_ms = j.at("capture_ms").get<double>();
    r.plain_ms = j.at("plain_ms").get<double>();
    return r;
}

Json encode_ab_options(const AbOptions& o) {
    return {{"max_tokens", o.max_tokens}, {"top_k", o.top_k}, {"tokenize", encode_tokenize_options(o.tokenize)}};
}

AbOptions decode_ab_options(const Json& j) {
    return AbOptions{j.at("max_tokens").get<int>(), j.at("top_k").get<int>(), decode_tokenize_options(j.at("tokenize"))};
}

Json encode_ab(const AbResult& r) {
    Json positions = Json::array();
    for (const AbPosition& p : r.positions)
        positions.push_back(
            Json::array({p.index, p.token, p.generated, p.kld, p.top_a, p.top_b, p.prob_top_a, p.prob_top_b, p.topk_overlap}));
    const AbSummary& s = r.summary;
    Json summary = {s.positions, s.mean_kld, s.median_kld, s.p99_kld, s.max_kld, s.same_top_share, s.mean_topk_overlap, s.first_divergence};
    return {
        {"tokens", r.tokens}, {"n_prompt", r.n_prompt}, {"positions", positions}, {"summary", summary}, {"continuation", r.continuation}};
}

AbResult decode_ab(const Json& j) {
    AbResult r;
    r.tokens = j.at("tokens").get<std::vector<int32_t>>();
    r.n_prompt = j.at("n_prompt").get<size_t>();
    for (const Json& p : j.at("positions"))
        r.positions.push_back({p.at(0).get<int32_t>(), p.at(1).get<int32_t>(), p.at(2).get<bool>(), p.at(3).get<double>(),
                               p.at(4).get<int32_t>(), p.at(5).get<int32_t>(), p.at(6).get<double>(), p.at(7).get<double>(),
                               p.at(8).get<double>()});
    const Json& s = j.at("summary");
    r.summary = AbSummary{s.at(0).get<size_t>(), s.at(1).get<double>(), s.at(2).get<double>(), s.at(3).get<double>(),
                          s.at(4).get<double>(), s.at(5).get<double>(), s.at(6).get<double>(), s.at(7).get<int64_t>()};
    r.continuation = j.at("continuation").get<std::string>();
    return r;
}

}  // namespace mlens::wire
