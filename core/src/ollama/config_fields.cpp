#include "mlens/ollama/config_fields.h"

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
    for (const auto& f : kConfigDraftFields)
        if (!(d.*f.member).empty()) s += (s.empty() ? "" : " ") + std::string(f.label) + d.*f.member;
    return s;
}

}  // namespace

std::vector<ConfigField> config_fields(const ModelConfig& c) {
    std::vector<ConfigField> all;
    for (const auto& f : kConfigTextFields) all.push_back({f.label, c.*f.member});
    for (const auto& f : kConfigListFields) all.push_back({f.label, list_text(c.*f.member)});
    for (const auto& f : kConfigNumberFields)
        if (c.*f.member) all.push_back({f.label, std::to_string(*(c.*f.member))});
    if (c.draft) all.push_back({"draft model (draft)", draft_text(*c.draft)});
    if (c.has_rootfs)
        all.push_back({"root filesystem (rootfs)", c.rootfs_type + ", " + std::to_string(c.rootfs_diff_ids.count) + " diff_ids"});
    std::vector<ConfigField> set;
    for (ConfigField& f : all)
        if (!f.value.empty()) set.push_back(std::move(f));
    return set;
}

}  // namespace mlens
