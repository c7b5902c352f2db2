// Model names in an Ollama store: the four path components under manifests/ and the references
// people type ("gemma3:4b", "hf.co/org/repo:Q4_K_M") (ollama-store.md §3, malformed-inputs.md A3
// "names").
//
// Contract:
//  - Grammar of each part (ASCII only, checked byte by byte):
//      host       [A-Za-z0-9_][A-Za-z0-9_.:-]*  1..350
//      namespace  [A-Za-z0-9_][A-Za-z0-9_-]*    1..80
//      model, tag [A-Za-z0-9_][A-Za-z0-9_.-]*   1..80
//    A name is valid only if all four parts are. So no valid part is ".", ".." or contains a
//    separator, and a valid name is always safe to join under manifests/.
//  - nonportable_reason says why a valid part would not survive on every OS (a Windows reserved
//    device name such as CON or com1.txt, a trailing dot); it is a warning, never a rejection.
//  - parse_model_reference reads "[host/][namespace/]model[:tag]" the way Ollama does: the tag is
//    what follows the last ':' after the last '/', parts are taken from the right, and missing
//    ones default to registry.ollama.ai, library and latest. It fails (E_BAD_NAME) on an empty
//    part, more than three '/'-separated parts, or a part outside the grammar.
//  - display(): "model:tag" for registry.ollama.ai/library, "namespace/model:tag" for other
//    namespaces on registry.ollama.ai, else "host/namespace/model:tag" (Ollama's shortest form).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mlens/result.h"

namespace mlens {

enum class NamePart { host, name_space, model, tag };
const char* name_part_label(NamePart part);  // "host", "namespace", "model", "tag"

constexpr std::string_view kDefaultHost = "registry.ollama.ai";
constexpr std::string_view kDefaultNamespace = "library";
constexpr std::string_view kDefaultTag = "latest";

bool name_part_valid(NamePart part, std::string_view text);
std::optional<std::string> nonportable_reason(std::string_view part);

struct ModelName {
    std::string host{kDefaultHost};
    std::string name_space{kDefaultNamespace};
    std::string model;
    std::string tag{kDefaultTag};

    bool valid() const;
    std::string display() const;
    std::string full() const;  // "host/namespace/model:tag"
    std::string manifest_path() const;  // "manifests/host/namespace/model/tag"
    bool operator==(const ModelName&) const = default;
    bool operator<(const ModelName& o) const { return full() < o.full(); }
};

Result<ModelName> parse_model_reference(std::string_view text);

}  // namespace mlens
