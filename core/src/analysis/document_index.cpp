#include "mlens/analysis/document_index.h"

#include <algorithm>
#include <unordered_set>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr std::string_view kTokenIdPrefix = "tokenizer.ggml.";
constexpr std::string_view kTokenIdSuffix = "_token_id";

// Adds the code points of valid UTF-8 sequences in `s` that are outside ASCII.
void add_code_points(std::string_view s, std::unordered_set<uint32_t>& out) {
    for (size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        uint32_t cp = 0;
        size_t len = utf8_decode(s.substr(i), cp);
        if (len == 0) {
            ++i;
            continue;
        }
        out.insert(cp);
        i += len;
    }
}

std::string role_of(std::string_view key) {
    std::string_view role = key.substr(kTokenIdPrefix.size(), key.size() - kTokenIdPrefix.size() - kTokenIdSuffix.size());
    if (role == "unknown") return "unk";
    if (role == "padding") return "pad";
    if (role == "seperator" || role == "separator") return "sep";
    return std::string(role);
}

int role_rank(const std::string& role) {
    static const char* const kOrder[] = {"bos", "eos", "pad", "unk", "eot", "eom", "sep", "cls", "mask"};
    for (size_t i = 0; i < std::size(kOrder); ++i)
        if (role == kOrder[i]) return static_cast<int>(i);
    return static_cast<int>(std::size(kOrder));
}

TokenizerInfo tokenizer_info(const Model& model) {
    TokenizerInfo t;
    for (size_t i = 0; i < model.metadata.size(); ++i) {
        const MetadataEntry& e = model.metadata[i];
        const Value& v = e.value;
        if (e.key == "tokenizer.ggml.tokens" && v.array && v.array->element_type == ValueType::string) {
            t.tokens = v.array;
            t.tokens_entry = i;
        } else if (e.key == "tokenizer.ggml.token_type" && v.array && value_type_is_integer(v.array->element_type))
            t.types = v.array;
        else if (e.key == "tokenizer.ggml.scores" && v.array && value_type_size(v.array->element_type) > 0)
            t.scores = v.array;
        else if (e.key == "tokenizer.ggml.merges" && v.array)
            t.merges = v.array->count;
        else if (e.key == "tokenizer.ggml.model" && v.is_string()) {
            t.model = escape_for_display(v.string_value(4096));
            t.encoding = piece_encoding(v.string_value(4096));
        } else if (e.key == "tokenizer.ggml.pre" && v.is_string())
            t.pre = escape_for_display(v.string_value(4096));
        else if (e.key == "tokenizer.chat_template" && v.is_string())
            t.chat_template = i;
        else if (e.key.size() > kTokenIdPrefix.size() + kTokenIdSuffix.size() && e.key.starts_with(kTokenIdPrefix) &&
                 e.key.ends_with(kTokenIdSuffix) && !v.is_array() && !v.is_string() && value_type_is_integer(v.type))
            t.special.push_back({role_of(e.key), v.scalar.as_int()});
    }
    std::stable_sort(t.special.begin(), t.special.end(),
                     [](const SpecialToken& a, const SpecialToken& b) { return role_rank(a.role) < role_rank(b.role); });
    return t;
}

std::vector<MetadataGroup> metadata_groups(const Model& model, const std::string& architecture) {
    std::vector<MetadataGroup> groups;
    groups.push_back({"general.*", "general.", {}});
    if (!architecture.empty() && architecture != "general" && architecture != "tokenizer")
        groups.push_back({escape_for_display(architecture, 60) + ".*", architecture + ".", {}});
    groups.push_back({"tokenizer.*", "tokenizer.", {}});
    groups.push_back({"other", "", {}});
    for (size_t i = 0; i < model.metadata.size(); ++i) {
        const std::string& key = model.metadata[i].key;
        auto it = std::find_if(groups.begin(), groups.end() - 1, [&](const MetadataGroup& g) { return key.starts_with(g.prefix); });
        it->entries.push_back(i);
    }
    std::erase_if(groups, [](const MetadataGroup& g) { return g.entries.empty(); });
    return groups;
}

}  // namespace

PieceEncoding TokenizerInfo::piece_encoding_of(uint64_t id) const {
    std::optional<int64_t> type;
    if (types && id < types->count) type = types->scalar_at(id).as_int();
    return token_piece_encoding(encoding, type);
}

DocumentIndex build_document_index(const Model& model, JobContext* job) {
    DocumentIndex index;
    index.tensors = logical_tensors(model);
    index.summary = summarize(model, index.tensors);
    index.metadata_groups = metadata_groups(model, index.summary.architecture);
    index.layers = summarize_layers(model, index.tensors);
    index.tokenizer = tokenizer_info(model);
    index.loads = assess_loadability(model);
    index.overview = model_overview(model);

    std::unordered_set<uint32_t> cps;
    for (const MetadataEntry& e : model.metadata) {
        add_code_points(e.key, cps);
        if (e.value.is_string()) add_code_points(e.value.string_value(1u << 20), cps);
        // The metadata table previews the first few elements of string arrays.
        if (const ArrayIndex* a = e.value.array.get(); a && a->element_type == ValueType::string)
            for (uint64_t i = 0; i < std::min<uint64_t>(a->count, 8); ++i) add_code_points(a->string_at(i, 256), cps);
    }
    for (const TensorInfo& t : model.tensors) add_code_points(t.name, cps);
    index.mono_code_points.assign(cps.begin(), cps.end());
    std::sort(index.mono_code_points.begin(), index.mono_code_points.end());
    if (const ArrayIndex* tokens = index.tokenizer.tokens.get()) {
        uint64_t n = tokens->count;
        const bool byte_level = index.tokenizer.encoding == PieceEncoding::byte_level;
        tokens->for_each_string(0, 256, [&](uint64_t i, std::string_view s) {
            add_code_points(s, cps);
            if (byte_level)
                if (std::optional<std::string> text = byte_level_decode(s)) add_code_points(*text, cps);
            if ((i & 0x3FFF) == 0) {
                job_report(job, 0.5 + 0.5 * static_cast<double>(i) / static_cast<double>(n));
                if (job_cancelled(job)) return false;
            }
            return true;
        });
    }
    index.code_points.assign(cps.begin(), cps.end());
    std::sort(index.code_points.begin(), index.code_points.end());
    return index;
}

}  // namespace mlens
