#include <cstring>

#include "worker_wire.h"

namespace mlens::wire {

namespace {

template <typename T>
Json packed(const std::vector<T>& values) {
    static_assert(sizeof(T) == 4);
    std::vector<uint8_t> bytes(values.size() * 4);
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Json::binary(std::move(bytes));
}

template <typename T>
std::vector<T> unpacked(const Json& j) {
    const auto& bytes = j.get_binary();
    std::vector<T> values(bytes.size() / 4);
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * 4);
    return values;
}

// Calls `f` on every field of `s` in wire order: the sums travel as one array in this order, and
// the encoder and the decoder both walk this one list.
template <typename Sums, typename F>
void for_each_sum(Sums& s, F&& f) {
    for (auto* field : {&s.nll, &s.nll2, &s.nll_base, &s.nll_base2, &s.nll_nll_base, &s.kld, &s.kld2, &s.p_diff, &s.p_diff2, &s.p_diff4})
        f(*field);
    f(s.max_abs_p_diff);
    f(s.same_top);
    f(s.count);
}

Json encode_sums(const KldSums& s) {
    Json out = Json::array();
    for_each_sum(s, [&](const auto& field) { out.push_back(field); });
    return out;
}

KldSums decode_sums(const Json& j) {
    KldSums s;
    size_t i = 0;
    for_each_sum(s, [&](auto& field) { field = j.at(i++).get<std::remove_reference_t<decltype(field)>>(); });
    return s;
}

}  // namespace

Json encode_kld_options(const KldOptions& o) {
    return {{"n_ctx", o.n_ctx}, {"max_chunks", o.max_chunks}, {"save_base", o.save_base}, {"base", o.base}};
}

KldOptions decode_kld_options(const Json& j) {
    return KldOptions{j.at("n_ctx").get<uint32_t>(), j.at("max_chunks").get<int32_t>(), j.at("save_base").get<std::string>(),
                      j.at("base").get<std::string>()};
}

Json encode_kld_chunk(const KldChunk& c) { return Json::array({c.index, encode_sums(c.sums), c.seconds}); }

KldChunk decode_kld_chunk(const Json& j) { return KldChunk{j.at(0).get<int32_t>(), decode_sums(j.at(1)), j.at(2).get<double>()}; }

Json encode_kld(const CorpusKldResult& r) {
    Json chunks = Json::array();
    for (const KldChunk& c : r.chunks) chunks.push_back(encode_kld_chunk(c));
    return {{"n_ctx", r.n_ctx},           {"n_chunk", r.n_chunk}, {"n_vocab", r.n_vocab},          {"text_tokens", r.text_tokens},
            {"tokens", packed(r.tokens)}, {"kld", packed(r.kld)}, {"p_diff", packed(r.p_diff)},    {"top_a", packed(r.top_a)},
            {"top_b", packed(r.top_b)},   {"chunks", chunks},     {"total", encode_sums(r.total)}, {"seconds", r.seconds}};
}

CorpusKldResult decode_kld(const Json& j) {
    CorpusKldResult r;
    r.n_ctx = j.at("n_ctx").get<uint32_t>();
    r.n_chunk = j.at("n_chunk").get<int32_t>();
    r.n_vocab = j.at("n_vocab").get<int32_t>();
    r.text_tokens = j.at("text_tokens").get<uint64_t>();
    r.tokens = unpacked<int32_t>(j.at("tokens"));
    r.kld = unpacked<float>(j.at("kld"));
    r.p_diff = unpacked<float>(j.at("p_diff"));
    r.top_a = unpacked<int32_t>(j.at("top_a"));
    r.top_b = unpacked<int32_t>(j.at("top_b"));
    for (const Json& c : j.at("chunks")) r.chunks.push_back(decode_kld_chunk(c));
    r.total = decode_sums(j.at("total"));
    r.seconds = j.at("seconds").get<double>();
    return r;
}

Json encode_memory_options(const MemoryPlanOptions& o) {
    return {{"n_ctx", o.n_ctx}, {"n_batch", o.n_batch}, {"n_ubatch", o.n_ubatch}, {"kv_type", o.kv_type}};
}

MemoryPlanOptions decode_memory_options(const Json& j) {
    return MemoryPlanOptions{j.at("n_ctx").get<uint32_t>(), j.at("n_batch").get<uint32_t>(), j.at("n_ubatch").get<uint32_t>(),
                             j.at("kv_type").get<std::string>()};
}

Json encode_memory(const MemoryMeasure& m) {
    auto terms = [](const MemoryTerms& t) { return Json::array({t.weights, t.kv, t.compute}); };
    Json buffers = Json::array();
    for (const MemoryBuffer& b : m.buffers) buffers.push_back(Json::array({b.name, terms(b.terms)}));
    return {{"terms", terms(m.terms)}, {"buffers", buffers}, {"n_ctx", m.n_ctx}};
}

MemoryMeasure decode_memory(const Json& j) {
    auto terms = [](const Json& t) { return MemoryTerms{t.at(0).get<uint64_t>(), t.at(1).get<uint64_t>(), t.at(2).get<uint64_t>()}; };
    MemoryMeasure m;
    m.terms = terms(j.at("terms"));
    for (const Json& b : j.at("buffers")) m.buffers.push_back({b.at(0).get<std::string>(), terms(b.at(1))});
    m.n_ctx = j.at("n_ctx").get<uint32_t>();
    return m;
}

Json encode_divergence_options(const LayerDivergenceOptions& o) {
    return {{"names", o.names}, {"tokenize", encode_tokenize_options(o.tokenize)}};
}

LayerDivergenceOptions decode_divergence_options(const Json& j) {
    return LayerDivergenceOptions{j.at("names").get<std::vector<std::string>>(), decode_tokenize_options(j.at("tokenize"))};
}

Json encode_divergence(const LayerDivergenceResult& r) {
    Json rows = Json::array();
    for (const LayerDivergenceRow& row : r.rows)
        rows.push_back(Json::array({row.tensor, row.base, row.layer, row.cosine, row.rel_error, row.sqnr_db, packed(row.cosine_at),
                                    packed(row.rel_error_at), packed(row.sqnr_db_at)}));
    return {{"tokens", r.tokens}, {"rows", rows}, {"jump_layer", r.jump_layer}};
}

LayerDivergenceResult decode_divergence(const Json& j) {
    LayerDivergenceResult r;
    r.tokens = j.at("tokens").get<std::vector<int32_t>>();
    for (const Json& row : j.at("rows"))
        r.rows.push_back(LayerDivergenceRow{row.at(0).get<std::string>(), row.at(1).get<std::string>(), row.at(2).get<int32_t>(),
                                            row.at(3).get<double>(), row.at(4).get<double>(), row.at(5).get<double>(),
                                            unpacked<float>(row.at(6)), unpacked<float>(row.at(7)), unpacked<float>(row.at(8))});
    r.jump_layer = j.at("jump_layer").get<int32_t>();
    return r;
}

}  // namespace mlens::wire
