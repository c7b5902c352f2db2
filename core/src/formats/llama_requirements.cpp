#include "mlens/formats/llama_requirements.h"

#include <algorithm>
#include <cctype>

namespace mlens {

const LlamaArchRequirements* find_llama_arch(std::string_view name) {
    for (const LlamaArchRequirements& a : llama_arch_requirements())
        if (name == a.name) return &a;
    return nullptr;
}

const GgmlTypeFacts* find_linked_ggml_type(uint32_t id) {
    for (const GgmlTypeFacts& t : linked_ggml_types())
        if (t.id == id) return &t;
    return nullptr;
}

const LlamaAssertSite* find_llama_assert_site(std::string_view text, std::string_view function) {
    for (const LlamaAssertSite& s : llama_assert_sites())
        if (text == s.text && std::string_view(s.where).find(function) != std::string_view::npos) return &s;
    return nullptr;
}

const char* graph_assert_file(std::string_view text, std::string_view arch) {
    for (const GraphAssertArchs& g : llama_graph_asserts())
        if (text == g.text && std::any_of(g.archs.begin(), g.archs.end(), [&](const char* a) { return arch == a; })) return g.file;
    return nullptr;
}

bool converter_knows_hf_class(std::string_view hf_class) {
    auto classes = converter_hf_classes();
    return std::binary_search(classes.begin(), classes.end(), hf_class, [](std::string_view a, std::string_view b) { return a < b; });
}

bool tensor_name_matches(std::string_view pattern, std::string_view name, uint64_t* layer) {
    size_t p = 0, n = 0;
    bool first = true;
    while (p < pattern.size()) {
        if (pattern.compare(p, 2, "%d") == 0) {
            const size_t start = n;
            uint64_t value = 0;
            while (n < name.size() && std::isdigit(static_cast<unsigned char>(name[n])) && n - start < 9) value = value * 10 + (name[n++] - '0');
            if (n == start) return false;
            if (first && layer) *layer = value;
            first = false;
            p += 2;
            continue;
        }
        if (n >= name.size() || pattern[p] != name[n]) return false;
        ++p;
        ++n;
    }
    return n == name.size();
}

}  // namespace mlens
