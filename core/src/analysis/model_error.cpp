#include "mlens/analysis/model_error.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "mlens/ollama/hf_export.h"

namespace mlens {

namespace {

// The HF layout of a side turned into the GGUF one: rows of the slowest dimension reordered per
// head (LlamaModel.permute) and a constant added.
class TransformedSource final : public FloatSource {
public:
    TransformedSource(const TensorView& view, uint32_t heads, float add) : m_view(view), m_heads(heads), m_add(add) {
        m_rows = view.shape().empty() ? 1 : view.shape().back();
        m_unit = m_rows ? view.size() / m_rows : 0;
    }
    Status check() const {
        if (m_heads && (m_rows % m_heads != 0 || (m_rows / m_heads) % 2 != 0 || m_unit % m_view.granularity() != 0))
            return Error{ErrorCode::E_SHAPE, m_view.info().name, std::nullopt,
                         std::to_string(m_rows) + " rows do not split into " + std::to_string(m_heads) + " heads of even size"};
        return ok_status();
    }
    uint64_t size() const override { return m_view.size(); }
    uint64_t granularity() const override { return m_view.granularity(); }
    // Any range: each piece of a row is read from the same place in the row it comes from.
    Status read(uint64_t first, uint64_t count, float* out) const override {
        if (!m_heads) {
            if (Status s = m_view.read(first, count, out); !s) return s;
        } else {
            const uint64_t head_rows = m_rows / m_heads, half = head_rows / 2;
            for (uint64_t at = first; at < first + count;) {
                const uint64_t r = at / m_unit, offset = at - r * m_unit, n = std::min(m_unit - offset, first + count - at);
                const uint64_t h = r / head_rows, k = r % head_rows;
                const uint64_t src = h * head_rows + (k % 2) * half + k / 2;
                if (Status s = m_view.read(src * m_unit + offset, n, out + (at - first)); !s) return s;
                at += n;
            }
        }
        if (m_add != 0.0f)
            for (uint64_t i = 0; i < count; ++i) out[i] += m_add;
        return ok_status();
    }

private:
    const TensorView& m_view;
    uint32_t m_heads;
    float m_add;
    uint64_t m_rows = 1, m_unit = 1;
};

// A side's values as read, noting whether a read of it failed: a comparison's error names the
// file that could not be read.
class ReadWatch final : public FloatSource {
public:
    explicit ReadWatch(const FloatSource& source) : m_source(source) {}
    uint64_t size() const override { return m_source.size(); }
    uint64_t granularity() const override { return m_source.granularity(); }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        Status s = m_source.read(first, count, out);
        if (!s && s.error().code != ErrorCode::E_CANCELLED) m_failed = true;
        return s;
    }
    bool failed() const { return m_failed; }

private:
    const FloatSource& m_source;
    mutable std::atomic<bool> m_failed{false};
};

class OpenSide final : public PairSource {
public:
    OpenSide(TensorView view, const PairSide& side)
        : m_view(std::move(view)),
          m_transform(m_view, side.rope_heads, side.add),
          m_transformed(side.rope_heads != 0 || side.add != 0.0f) {}
    Status check() const { return m_transform.check(); }
    const FloatSource& source() const override { return m_transformed ? static_cast<const FloatSource&>(m_transform) : m_view; }
    const TensorView& view() const override { return m_view; }

private:
    TensorView m_view;
    TransformedSource m_transform;
    bool m_transformed;
};

}  // namespace

Result<std::unique_ptr<PairSource>> PairSource::open(const Model& model, const PairSide& side) {
    auto view = TensorView::open(model, side.tensor);
    if (view && side.slice) view = view->slice(*side.slice);
    if (!view) return view.error();
    auto s = std::make_unique<OpenSide>(std::move(*view), side);
    if (Status c = s->check(); !c) return c.error();
    return std::unique_ptr<PairSource>(std::move(s));
}

std::optional<NameAlignment> automatic_name_alignment(const Model& a, const Model& b) {
    const bool hf_a = a.format != Format::gguf && has_hf_names(a), hf_b = b.format != Format::gguf && has_hf_names(b);
    const Model* gguf = hf_a && !hf_b && b.format == Format::gguf ? &b : hf_b && !hf_a && a.format == Format::gguf ? &a : nullptr;
    if (!gguf) {
        // A store model's stacked experts against the per-expert names of its Hugging Face export.
        if (std::optional<NameMap> map = unpacked_experts_name_map(a, b))
            return NameAlignment{*map, MapSide::b, "per-expert names\xE2\x86\x92stacked experts"};
        if (std::optional<NameMap> map = unpacked_experts_name_map(b, a))
            return NameAlignment{*map, MapSide::a, "per-expert names\xE2\x86\x92stacked experts"};
        return std::nullopt;
    }
    const Model& hf = gguf == &b ? a : b;
    std::optional<HfArchitecture> arch = detect_hf_architecture(*gguf);
    if (!arch) arch = detect_hf_architecture(hf);
    if (!arch) return std::nullopt;
    return NameAlignment{hf_to_gguf_name_map(*arch), gguf == &b ? MapSide::a : MapSide::b, "hf\xE2\x86\x92gguf " + arch->arch};
}

Pairing pair_tensors(const Model& a, const Model& b, const NameMap& map, MapSide side) {
    const Model& mapped = side == MapSide::a ? a : b;
    const Model& other = side == MapSide::a ? b : a;
    std::unordered_map<std::string, size_t> index;
    for (size_t j = 0; j < other.tensors.size(); ++j)
        if (!other.tensors[j].part_of) index.emplace(other.tensors[j].name, j);
    Pairing p;
    std::set<std::pair<size_t, uint64_t>> used;  // (other tensor, slice + 1; 0 = whole)
    std::set<size_t> used_mapped, used_other;
    for (size_t i = 0; i < mapped.tensors.size(); ++i) {
        const TensorInfo& t = mapped.tensors[i];
        if (t.part_of) continue;
        std::optional<NameMatch> m = map ? map(t.name) : std::nullopt;
        auto it = m ? index.find(m->name) : index.end();
        if (it == index.end()) {
            m.reset();
            it = index.find(t.name);
        }
        if (it == index.end() || !used.insert({it->second, m && m->slice ? *m->slice + 1 : 0}).second) continue;
        PairSide mine{i, std::nullopt, m ? m->rope_heads : 0, m ? m->add : 0.0f};
        PairSide theirs{it->second, m ? m->slice : std::nullopt, 0, 0.0f};
        TensorPair pair;
        pair.a = side == MapSide::a ? mine : theirs;
        pair.b = side == MapSide::a ? theirs : mine;
        pair.renamed = m && (m->name != t.name || m->slice);
        p.pairs.push_back(pair);
        used_mapped.insert(i);
        used_other.insert(it->second);
    }
    std::stable_sort(p.pairs.begin(), p.pairs.end(), [](const TensorPair& x, const TensorPair& y) {
        return x.a.tensor != y.a.tensor ? x.a.tensor < y.a.tensor : x.b.slice.value_or(0) < y.b.slice.value_or(0);
    });
    const std::set<size_t>& paired_a = side == MapSide::a ? used_mapped : used_other;
    const std::set<size_t>& paired_b = side == MapSide::a ? used_other : used_mapped;
    for (size_t i = 0; i < a.tensors.size(); ++i)
        if (!a.tensors[i].part_of && !paired_a.count(i)) p.only_a.push_back(i);
    for (size_t j = 0; j < b.tensors.size(); ++j)
        if (!b.tensors[j].part_of && !paired_b.count(j)) p.only_b.push_back(j);
    return p;
}

int layer_of(const std::string& name) {
    for (const char* marker : {"blk.", "layers."}) {
        size_t at = name.find(marker);
        while (at != std::string::npos) {
            if (at == 0 || name[at - 1] == '.') {
                size_t k = at + std::char_traits<char>::length(marker), end = k;
                while (end < name.size() && end - k < 6 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
                if (end > k && (end == name.size() || name[end] == '.')) return std::stoi(name.substr(k, end - k));
            }
            at = name.find(marker, at + 1);
        }
    }
    return -1;
}

std::string slice_label(const std::string& name, std::optional<uint64_t> slice) {
    std::string s = name;
    if (slice) {
        s += '[';
        s += std::to_string(*slice);
        s += ']';
    }
    return s;
}

Result<ModelError> compare_models(const Model& a, const Model& b, const Pairing& pairing, JobContext* job, unsigned threads) {
    ModelError r;
    std::vector<std::pair<std::unique_ptr<PairSource>, std::unique_ptr<PairSource>>> sources;
    uint64_t total = 0;
    for (const TensorPair& pair : pairing.pairs) {
        TensorError e;
        e.pair = pair;
        e.name_a = slice_label(a.tensors[pair.a.tensor].name, pair.a.slice);
        e.name_b = slice_label(b.tensors[pair.b.tensor].name, pair.b.slice);
        e.layer = layer_of(e.name_a);
        auto sa = PairSource::open(a, pair.a);
        auto sb = PairSource::open(b, pair.b);
        e.type_a = sa ? sa.value()->view().type_name() : a.tensors[pair.a.tensor].type.name;
        e.type_b = sb ? sb.value()->view().type_name() : b.tensors[pair.b.tensor].type.name;
        if (!sa || !sb)
            e.failed = (!sa ? sa.error() : sb.error()).to_string();
        else if (sa.value()->source().size() != sb.value()->source().size())
            e.failed = "element counts differ: " + std::to_string(sa.value()->source().size()) + " vs " +
                std::to_string(sb.value()->source().size());
        if (e.failed.empty()) {
            total += sa.value()->source().size();
            sources.emplace_back(std::move(sa.value()), std::move(sb.value()));
        } else {
            sources.emplace_back(nullptr, nullptr);
        }
        r.tensors.push_back(std::move(e));
    }
    uint64_t done = 0;
    for (size_t i = 0; i < r.tensors.size(); ++i) {
        if (job_cancelled(job)) return cancelled_error();
        if (!sources[i].first) continue;
        const ReadWatch sa(sources[i].first->source()), sb(sources[i].second->source());
        const double from = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
        done += sa.size();
        const double to = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
        const uint64_t block = comparison_block_length(sources[i].first->view().block_length(), sources[i].second->view().block_length());
        auto c = compare_sources(sa, sb, sources[i].first->view().row_length(), 10, job, threads, from, to, block);
        if (!c && c.error().code == ErrorCode::E_CANCELLED) return c.error();
        if (c) {
            r.tensors[i].error = std::move(*c);
        } else {
            TensorError& e = r.tensors[i];
            e.failed = c.error().to_string();
            e.read_error = c.error();
            const bool in_b = sb.failed() && !sa.failed();
            const Model& failing = in_b ? b : a;
            const size_t file = failing.tensors[in_b ? e.pair.b.tensor : e.pair.a.tensor].file;
            if (file < failing.files.size()) e.read_error_path = failing.files[file].path;
        }
        sources[i] = {nullptr, nullptr};
    }
    std::map<int, std::pair<LayerError, double>> layers;  // layer -> (aggregate, sum of rmse^2 * count)
    for (const TensorError& e : r.tensors) {
        if (!e.error) continue;
        ++r.overall.tensors;
        r.overall.sums.add(e.error->sums);
        auto& [l, err2] = layers[e.layer];
        l.layer = e.layer;
        ++l.tensors;
        l.count += e.error->count;
        err2 += e.error->rmse * e.error->rmse * static_cast<double>(e.error->count);
        l.max_abs = std::max(l.max_abs, e.error->max_abs);
        if (l.worst_tensor.empty() || e.error->nmse > l.worst_nmse) {
            l.worst_nmse = e.error->nmse;
            l.worst_tensor = e.name_a;
        }
    }
    for (auto& [layer, entry] : layers) {
        entry.first.rmse = entry.first.count ? std::sqrt(entry.second / static_cast<double>(entry.first.count)) : 0.0;
        r.layers.push_back(entry.first);
    }
    r.overall.figures = error_figures(r.overall.sums);
    job_report(job, 1.0);
    return r;
}

}  // namespace mlens
