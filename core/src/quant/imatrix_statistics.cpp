#include "mlens/quant/imatrix_statistics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "mlens/text/digits.h"

namespace mlens {

namespace {

// One entry as llama-imatrix holds it after loading: sums per column (expert-major) and counts.
struct LoadedEntry {
    std::string name;
    std::vector<float> values;
    std::vector<int64_t> counts;
};

Result<LoadedEntry> load_entry(const Imatrix& imatrix, const ImatrixEntry& entry) {
    LoadedEntry out{entry.name, {}, {}};
    const bool legacy = imatrix.format == ImatrixFormat::legacy;
    for (uint64_t e = 0; e < entry.experts; ++e) {
        auto sums = read_sums(imatrix, entry, e);
        if (!sums) return sums.error();
        for (const float s : *sums) out.values.push_back(legacy ? s * static_cast<float>(kImatrixDefaultChunkSize) : s);
    }
    if (legacy)
        out.counts.push_back(static_cast<int64_t>(entry.counts[0]) * kImatrixDefaultChunkSize);
    else
        for (const double c : entry.counts) out.counts.push_back(static_cast<int64_t>(static_cast<float>(c)));
    return out;
}

// llama-imatrix's split of a name into its layer and its kind.
void split_name(const std::string& name, std::string& layer, std::string& kind) {
    std::vector<std::string> parts;
    for (size_t at = 0;;) {
        const size_t dot = name.find('.', at);
        parts.push_back(name.substr(at, dot == std::string::npos ? std::string::npos : dot - at));
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    for (size_t i = 0; i + 1 < parts.size() && layer.empty(); ++i)
        if (parts[i] == "blk") layer = parts[i + 1];
    for (size_t i = 1; i < parts.size() && kind.empty(); ++i)
        if (parts[i] == "weight") kind = parts[i - 1];
    if (kind.empty()) kind = name;
    if (layer.empty()) layer = "-";
}

std::optional<ImatrixTensorStatistics> entry_statistics(const LoadedEntry& e) {
    const size_t n_mat = e.counts.size(), row = e.values.size() / n_mat;
    std::vector<float> act;
    for (size_t i = 0; i < n_mat; ++i) {
        if (e.counts[i] == 0) continue;
        for (size_t j = 0; j < row; ++j) act.push_back(e.values[i * row + j] / static_cast<float>(e.counts[i]));
    }
    if (act.empty()) return std::nullopt;
    ImatrixTensorStatistics s;
    s.tensor = e.name;
    split_name(e.name, s.layer, s.kind);
    const auto n = static_cast<float>(act.size());
    s.sum = std::accumulate(act.begin(), act.end(), 0.0f);
    s.max = *std::max_element(act.begin(), act.end());
    s.min = *std::min_element(act.begin(), act.end());
    s.mean = s.sum / n;
    const float sq = std::inner_product(act.begin(), act.end(), act.begin(), 0.0f);
    s.stddev = std::sqrt(std::max(0.0f, sq / n - s.mean * s.mean));
    const auto inactive = std::count_if(act.begin(), act.end(), [](float v) { return std::fabs(v) <= 1e-5f; });
    s.active = 1 - static_cast<float>(inactive) / n;
    if (s.sum > 0)
        for (const float a : act)
            if (const float p = a / s.sum; p > 0) s.entropy -= p * std::log2(p);
    int64_t above = 0;
    if (s.stddev > 0.0f)
        for (const float a : act)
            if ((a - s.mean) / s.stddev > 1) ++above;
    s.elements = static_cast<int32_t>(act.size());
    s.zd = static_cast<float>(above) / static_cast<float>(s.elements);
    // log2 of an integer is taken in double, as llama-imatrix's std::log2(int) is.
    s.entropy_norm = static_cast<float>(100.0f * (s.entropy / std::log2(static_cast<double>(s.elements))));
    return s;
}

// "blk.N." in a name: N and where its digits are.
std::optional<std::pair<int64_t, std::pair<size_t, size_t>>> block_of(const std::string& name) {
    for (size_t at = name.find("blk."); at != std::string::npos; at = name.find("blk.", at + 1)) {
        const size_t digits = at + 4;
        size_t end = digits;
        while (end < name.size() && all_decimal_digits(std::string_view(name).substr(end, 1))) ++end;
        if (end > digits && end < name.size() && name[end] == '.' && end - digits < 10)
            return std::pair{std::stoll(name.substr(digits, end - digits)), std::pair{digits, end - digits}};
    }
    return std::nullopt;
}

float cosine(const std::vector<float>& a, const std::vector<float>& b) {
    const float dp = std::inner_product(a.begin(), a.end(), b.begin(), 0.0f);
    const float ma = std::sqrt(std::inner_product(a.begin(), a.end(), a.begin(), 0.0f));
    const float mb = std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0f));
    return dp / (ma * mb);
}

}  // namespace

Result<ImatrixStatistics> imatrix_statistics(const Imatrix& imatrix, JobContext* job) {
    std::map<std::string, LoadedEntry> loaded;
    ImatrixStatistics out;
    for (const ImatrixEntry& entry : imatrix.entries) {
        if (job_cancelled(job)) return cancelled_error();
        auto e = load_entry(imatrix, entry);
        if (!e) return e.error();
        std::optional<ImatrixTensorStatistics> s = entry_statistics(*e);
        if (!s) {
            out.without_activations.push_back(entry.name);
            continue;
        }
        out.tensors.push_back(std::move(*s));
        loaded.emplace(entry.name, std::move(*e));
    }
    for (ImatrixTensorStatistics& s : out.tensors) {
        const auto block = block_of(s.tensor);
        if (!block) continue;
        std::string previous = s.tensor;
        previous.replace(block->second.first, block->second.second, std::to_string(block->first - 1));
        const auto it = loaded.find(previous);
        // llama-imatrix takes the inner product over this tensor's values.
        if (it != loaded.end() && it->second.values.size() >= loaded.at(s.tensor).values.size())
            s.cossim = cosine(loaded.at(s.tensor).values, it->second.values);
    }
    std::stable_sort(out.tensors.begin(), out.tensors.end(), [](const ImatrixTensorStatistics& a, const ImatrixTensorStatistics& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        if (a.sum != b.sum) return a.sum > b.sum;
        return a.tensor < b.tensor;
    });
    struct Weighted {
        float sum = 0, zd = 0, cossim = 0;
        int32_t elements = 0;
    };
    std::map<int64_t, Weighted> layers;
    for (const ImatrixTensorStatistics& s : out.tensors) {
        if (s.layer == "-" || !all_decimal_digits(s.layer) || s.layer.size() > 9) continue;
        Weighted& w = layers[std::stoll(s.layer)];
        w.sum += static_cast<float>(s.elements) * s.sum;
        w.zd += static_cast<float>(s.elements) * s.zd;
        w.cossim += static_cast<float>(s.elements) * s.cossim;
        w.elements += s.elements;
    }
    for (const auto& [layer, w] : layers) {
        if (w.elements == 0) continue;
        const auto n = static_cast<float>(w.elements);
        out.layers.push_back({static_cast<int32_t>(layer), w.sum / n, w.zd / n, w.cossim / n});
    }
    return out;
}

}  // namespace mlens
