#include "mlens/ollama/model_name.h"

#include <array>
#include <vector>

#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

size_t max_length(NamePart part) { return part == NamePart::host ? 350 : 80; }

// Characters allowed after the first one, beside [A-Za-z0-9_].
std::string_view extra_chars(NamePart part) { return part == NamePart::host ? ".:-" : part == NamePart::name_space ? "-" : ".-"; }

char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

}  // namespace

const char* name_part_label(NamePart part) {
    static constexpr NameRow<NamePart> kNames[] = {
        {NamePart::host, "host"}, {NamePart::name_space, "namespace"}, {NamePart::model, "model"}, {NamePart::tag, "tag"}};
    return name_of(kNames, part);
}

bool name_part_valid(NamePart part, std::string_view text) {
    if (text.empty() || text.size() > max_length(part) || !is_word_char(text[0])) return false;
    std::string_view extra = extra_chars(part);
    for (char c : text.substr(1))
        if (!is_word_char(c) && extra.find(c) == std::string_view::npos) return false;
    return true;
}

std::optional<std::string> nonportable_reason(std::string_view part) {
    if (!part.empty() && (part.back() == '.' || part.back() == ' '))
        return std::string("ends with '") + part.back() + "', which Windows drops";
    std::string stem;
    for (char c : part.substr(0, part.find('.'))) stem += ascii_upper(c);
    static const std::array<std::string_view, 4> kDevices = {"CON", "PRN", "AUX", "NUL"};
    bool reserved = false;
    for (auto d : kDevices) reserved |= stem == d;
    if (stem.size() == 4 && (stem.starts_with("COM") || stem.starts_with("LPT")) && stem[3] >= '0' && stem[3] <= '9') reserved = true;
    if (reserved) return "\"" + stem + "\" is a reserved device name on Windows";
    return std::nullopt;
}

bool ModelName::valid() const {
    return name_part_valid(NamePart::host, host) && name_part_valid(NamePart::name_space, name_space) &&
        name_part_valid(NamePart::model, model) && name_part_valid(NamePart::tag, tag);
}

std::string ModelName::display() const {
    if (host == kDefaultHost && name_space == kDefaultNamespace) return model + ":" + tag;
    if (host == kDefaultHost) return name_space + "/" + model + ":" + tag;
    return full();
}

std::string ModelName::full() const { return host + "/" + name_space + "/" + model + ":" + tag; }

std::string ModelName::manifest_path() const { return "manifests/" + host + "/" + name_space + "/" + model + "/" + tag; }

Result<ModelName> parse_model_reference(std::string_view text) {
    auto bad = [&](const std::string& why) {
        return Error{ErrorCode::E_BAD_NAME, "name", std::nullopt, "\"" + escape_for_display(text) + "\": " + why};
    };
    ModelName name;
    std::string_view rest = text;
    size_t slash = rest.rfind('/');
    size_t colon = rest.rfind(':');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
        name.tag = std::string(rest.substr(colon + 1));
        rest = rest.substr(0, colon);
    }
    std::vector<std::string_view> parts;
    while (true) {
        size_t s = rest.rfind('/');
        parts.push_back(s == std::string_view::npos ? rest : rest.substr(s + 1));
        if (s == std::string_view::npos) break;
        rest = rest.substr(0, s);
        if (parts.size() == 3) return bad("more than host/namespace/model");
    }
    name.model = std::string(parts[0]);
    if (parts.size() > 1) name.name_space = std::string(parts[1]);
    if (parts.size() > 2) name.host = std::string(parts[2]);
    const std::pair<NamePart, const std::string*> checks[] = {
        {NamePart::host, &name.host}, {NamePart::name_space, &name.name_space}, {NamePart::model, &name.model}, {NamePart::tag, &name.tag}};
    for (const auto& [part, value] : checks)
        if (!name_part_valid(part, *value))
            return bad(std::string("the ") + name_part_label(part) + " \"" + escape_for_display(*value) + "\" is outside the name grammar");
    return name;
}

}  // namespace mlens
