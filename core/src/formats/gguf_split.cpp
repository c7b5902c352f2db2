#include "gguf_split.h"

#include <cstdio>
#include <regex>

#include "mlens/formats/gguf_reader.h"

namespace mlens {

std::string SplitName::shard_path(uint32_t n) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05u-of-%05u.gguf", n, count);
    return stem + buf;
}

std::optional<SplitName> parse_split_name(const std::string& path) {
    static const std::regex kPattern(R"((.*)-(\d{5})-of-(\d{5})\.gguf)");
    std::smatch m;
    if (!std::regex_match(path, m, kPattern)) return std::nullopt;
    SplitName s{m[1].str(), static_cast<uint32_t>(std::stoul(m[2].str())), static_cast<uint32_t>(std::stoul(m[3].str()))};
    if (s.number == 0 || s.count == 0 || s.number > s.count) return std::nullopt;
    return s;
}

bool open_split_siblings(Model& model, const std::string& path, const GgufLimits& limits, JobContext* job) {
    auto split = parse_split_name(path);
    if (!split || split->count == 1) return true;
    if (split->count > limits.max_split_count) {
        model.diagnostics.push_back({Severity::error, "GGUF", "E_LIMIT", "split", std::nullopt,
                                     "split into " + std::to_string(split->count) + " shards exceeds limit max_split_count=" +
                                     std::to_string(limits.max_split_count), 0});
        model.partial = true;
        return false;
    }
    Model whole;
    whole.format = Format::gguf;
    for (uint32_t n = 1; n <= split->count; ++n) {
        std::string shard = split->shard_path(n);
        uint32_t file = n - 1;
        ByteSourcePtr source;
        if (n == split->number) {
            source = model.files[0].source;
        } else {
            auto opened = open_file(shard);
            if (!opened) {
                whole.diagnostics.push_back({Severity::error, "GGUF", "E_SPLIT_MISSING", "split", std::nullopt,
                                             "shard " + std::to_string(n) + " of " + std::to_string(split->count) +
                                             ": " + opened.error().message, file});
                whole.partial = true;
                continue;
            }
            source = *opened;
        }
        // Shards after the first contribute tensors and diagnostics, not metadata.
        Model part;
        bool ok = read_gguf_into(part, source, 0, limits, job);
        whole.files.resize(file + 1);
        whole.files[file] = part.files[0];
        for (auto& d : part.diagnostics) { d.file = file; whole.diagnostics.push_back(std::move(d)); }
        for (auto& t : part.tensors) { t.file = file; whole.tensors.push_back(std::move(t)); }
        if (n == 1) whole.metadata = std::move(part.metadata);
        if (!ok) { whole.partial = true; }
        if (job_cancelled(job)) break;
    }
    model = std::move(whole);
    return !model.partial;
}

}  // namespace mlens
