#include "mlens/ollama/config_fields.h"

#include <utility>

namespace mlens {

namespace {

std::string list_text(const ConfigList& l) {
    std::string s;
    for (const std::string& i : l.items) s += (s.empty() ? "" : ", ") + i;
    if (l.count > l.items.size()) s += ", \xE2\x80\xA6 (" + std::to_string(l.count) + " in all)";
    return s;
}

// "FORMAT ARCHITECTURE prefix PREFIX config CONFIG", each part the draft leaves empty left out.
std::string draft_text(const ModelConfig::Draft& d) {
    std::string s;
    const std::pair<const char*, const std::string*> parts[] = {
        {"", &d.model_format}, {"", &d.architecture}, {"prefix ", &d.tensor_prefix}, {"config ", &d.config}};
    for (const auto& [label, value] : parts)
        if (!value->empty()) s += (s.empty() ? "" : " ") + std::string(label) + *value;
    return s;
}

}  // namespace

std::vector<ConfigField> config_fields(const ModelConfig& c) {
    std::vector<ConfigField> all = {{"format (model_format)", c.model_format},
                                    {"family (model_family)", c.model_family},
                                    {"parameter size (model_type)", c.model_type},
                                    {"quantization (file_type)", c.file_type},
                                    {"renderer", c.renderer},
                                    {"parser", c.parser},
                                    {"needs Ollama (requires)", c.requires_version},
                                    {"remote host (remote_host)", c.remote_host},
                                    {"remote model (remote_model)", c.remote_model},
                                    {"base model (base_name)", c.base_name},
                                    {"CPU architecture (architecture)", c.architecture},
                                    {"operating system (os)", c.os},
                                    {"families (model_families)", list_text(c.model_families)},
                                    {"capabilities", list_text(c.capabilities)}};
    if (c.context_length) all.push_back({"context length (context_length)", std::to_string(*c.context_length)});
    if (c.embedding_length) all.push_back({"embedding length (embedding_length)", std::to_string(*c.embedding_length)});
    if (c.draft) all.push_back({"draft model (draft)", draft_text(*c.draft)});
    if (c.has_rootfs)
        all.push_back({"root filesystem (rootfs)", c.rootfs_type + ", " + std::to_string(c.rootfs_diff_ids.count) + " diff_ids"});
    std::vector<ConfigField> set;
    for (ConfigField& f : all)
        if (!f.value.empty()) set.push_back(std::move(f));
    return set;
}

}  // namespace mlens
