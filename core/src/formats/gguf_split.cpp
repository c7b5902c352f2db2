#include "gguf_split.h"

#include <cstdio>
#include <optional>
#include <string_view>

#include "mlens/formats/gguf_reader.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/escape.h"

namespace mlens {

std::string SplitName::shard_path(uint32_t n) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05u-of-%05u.gguf", n, count);
    return stem + buf;
}

namespace {

// Parses exactly five decimal digits.
std::optional<uint32_t> five_digits(std::string_view d) {
    uint32_t v = 0;
    for (char c : d) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v;
}

}  // namespace

bool says_no_split(const Model& model) { return !model.find("split.count") || model.get_uint("split.count").value_or(2) <= 1; }

std::string no_split_text(const Model& model, const SplitName& name) {
    const MetadataEntry* count = model.find("split.count");
    return "named as part " + std::to_string(name.number) + " of " + std::to_string(name.count) + " but " +
        (count ? "its split.count is " + count->value.scalar.to_string() : std::string("has no split.count"));
}

std::optional<SplitName> parse_split_name(const std::string& path) {
    // "<stem>-NNNNN-of-MMMMM.gguf": a fixed 20-character tail after the stem.
    constexpr size_t kTail = 20;
    if (path.size() < kTail) return std::nullopt;
    std::string_view tail(path.data() + path.size() - kTail, kTail);
    if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || tail.substr(15) != ".gguf") return std::nullopt;
    auto number = five_digits(tail.substr(1, 5));
    auto count = five_digits(tail.substr(10, 5));
    if (!number || !count || *number == 0 || *number > *count) return std::nullopt;
    return SplitName{path.substr(0, path.size() - kTail), *number, *count};
}

bool open_split_siblings(Model& model, const std::string& path, const GgufLimits& limits, JobContext* job) {
    auto split = parse_split_name(path);
    if (!split || split->count == 1) return true;
    // The opened file's own keys decide, as llama.cpp's loader reads them: a file that says it is
    // no split model is read alone, whatever part its name gives it.
    if (says_no_split(model)) {
        const MetadataEntry* count = model.find("split.count");
        model.diagnostics.push_back(
            {Severity::warning, "GGUF", ErrorCode::W_SPLIT_METADATA, "split.count",
             count ? std::optional<uint64_t>(count->key_range.offset) : std::nullopt,
             no_split_text(model, *split) + ": read alone, as llama.cpp reads it; the files named beside it are not joined", 0});
        return true;
    }
    if (split->count > limits.max_split_count) {
        model.diagnostics.push_back({Severity::error, "GGUF", ErrorCode::E_LIMIT, "split", std::nullopt,
                                     "split into " + std::to_string(split->count) +
                                         " shards exceeds limit max_split_count=" + std::to_string(limits.max_split_count),
                                     0});
        model.partial = true;
        return false;
    }
    Model whole;
    whole.format = Format::gguf;
    // Every shard has its file entry, so each diagnostic's file index is valid even for a
    // missing shard (its source stays null).
    whole.files.resize(split->count);
    const std::string query = model.files[0].source ? model.files[0].source->reference_query() : std::string();
    TransferBatch shards("shard");  // after a shard the server could not deliver, the rest are not asked for
    for (uint32_t n = 1; n <= split->count; ++n) {
        std::string shard = split->shard_path(n);
        uint32_t file = n - 1;
        whole.files[file].path = shard;
        ByteSourcePtr source;
        if (n == split->number) {
            source = model.files[0].source;
        } else {
            const std::optional<Error> skipped = shards.skipped();
            Result<ByteSourcePtr> opened = skipped ? Result<ByteSourcePtr>(*skipped) : open_source(shard + query);
            if (!opened) {
                shards.note(opened.error());
                whole.diagnostics.push_back({Severity::error, "GGUF", ErrorCode::E_SPLIT_MISSING, "split", std::nullopt,
                                             "shard " + std::to_string(n) + " of " + std::to_string(split->count) + " (" +
                                                 escape_for_display(shard) + "): " + opened.error().message,
                                             file});
                whole.partial = true;
                continue;
            }
            source = *opened;
        }
        // Shards after the first contribute tensors and diagnostics, not metadata: only their own
        // split.no, which says which part each is.
        Model part;
        bool ok = read_gguf_into(part, source, 0, limits, job);
        const MetadataEntry* own_no = n > 1 ? part.find("split.no") : nullptr;
        std::optional<Value> own_split_no = own_no ? std::optional<Value>(own_no->value) : std::nullopt;
        whole.take_part(part, file);
        whole.files[file].own_split_no = std::move(own_split_no);
        if (n == 1) whole.metadata = std::move(part.metadata);
        if (!ok) { whole.partial = true; }
        if (job_cancelled(job)) break;
    }
    whole.opened_file = split->number - 1;
    model = std::move(whole);
    return !model.partial;
}

}  // namespace mlens
