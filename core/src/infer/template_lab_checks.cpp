// The comparing half of the template lab (template_lab.h): differences against the reference
// rendering and the warnings.
#include <algorithm>
#include <set>

#include "mlens/infer/template_lab.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

TemplateDifference difference(const std::vector<TemplateRendering>& all, size_t reference, size_t index) {
    const TemplateRendering& a = all[reference];
    const TemplateRendering& b = all[index];
    TemplateDifference d;
    d.rendering = index;
    d.reference = reference;
    d.same_text = a.prompt == b.prompt;
    if (!d.same_text) {
        const std::string& x = a.prompt;
        const std::string& y = b.prompt;
        size_t prefix = 0;
        while (prefix < x.size() && prefix < y.size() && x[prefix] == y[prefix]) ++prefix;
        size_t suffix = 0;
        while (suffix < x.size() - prefix && suffix < y.size() - prefix && x[x.size() - 1 - suffix] == y[y.size() - 1 - suffix]) ++suffix;
        d.first_byte = prefix;
        const size_t context = std::min(prefix, kDiffContext);
        d.common_before = x.substr(prefix - context, context);
        d.reference_part = x.substr(prefix, std::min(x.size() - prefix - suffix, kDiffPartBytes));
        d.rendering_part = y.substr(prefix, std::min(y.size() - prefix - suffix, kDiffPartBytes));
    }
    d.compared_tokens = !a.tokenized_by.empty() && !b.tokenized_by.empty();
    if (d.compared_tokens) {
        size_t i = 0;
        while (i < a.tokens.size() && i < b.tokens.size() && a.tokens[i].id == b.tokens[i].id) ++i;
        d.same_ids = i == a.tokens.size() && i == b.tokens.size();
        d.first_token = d.same_ids ? 0 : i;
    }
    return d;
}

std::string shown(const std::string& text) { return "\"" + escape_for_display(text, 80) + "\""; }

// The generation prompt an Ollama rendering of `side` is held to: the GGUF default template's of
// that side, else of any side.
std::string gguf_generation_prompt(const std::vector<TemplateRendering>& all, const std::string& side) {
    std::string any;
    for (const TemplateRendering& r : all) {
        if (!r.chat || r.tmpl.source != "gguf" || r.chat->generation_prompt.empty()) continue;
        if (r.side == side) return r.chat->generation_prompt;
        if (any.empty()) any = r.chat->generation_prompt;
    }
    return any;
}

void warn(TemplateLabResult& result, const char* code, size_t index, std::string message) {
    result.warnings.push_back({code, index, std::move(message)});
}

void check_generation_prompt(TemplateLabResult& result, size_t i) {
    const TemplateRendering& r = result.renderings[i];
    if (r.chat) {
        const std::string& g = r.chat->generation_prompt;
        if (g.empty())
            warn(result, "W_NO_GENERATION_PROMPT", i,
                 "add_generation_prompt changes nothing: the rendering is the same with and without it (the template writes no "
                 "assistant prefix for it, or writes one every time)");
        else if (!r.prompt.ends_with(g))
            warn(result, "W_NO_GENERATION_PROMPT", i, "the rendering does not end with the assistant prefix " + shown(g));
        return;
    }
    const std::string g = gguf_generation_prompt(result.renderings, r.side);
    if (!g.empty() && !r.prompt.ends_with(g))
        warn(result, "W_NO_GENERATION_PROMPT", i,
             "the rendering does not end with the assistant prefix " + shown(g) + " of the GGUF's template");
}

void check_stops(TemplateLabResult& result, size_t i) {
    const TemplateRendering& r = result.renderings[i];
    std::set<std::string> markers(kTurnEndMarkers.begin(), kTurnEndMarkers.end());
    if (r.chat) markers.insert(r.chat->additional_stops.begin(), r.chat->additional_stops.end());
    std::set<int32_t> seen;
    for (const TokenPiece& t : r.tokens) {
        if (t.eog || !markers.count(t.piece) || !seen.insert(t.id).second) continue;
        warn(result, "W_STOP_NOT_EOG", i,
             "the template ends turns with " + shown(t.piece) + " (token " + std::to_string(t.id) + "), which " +
                 r.tokenized_by + " does not stop on (not an end-of-generation token)");
    }
}

}  // namespace

void compare_renderings(TemplateLabResult& result, const std::vector<int32_t>& bos, bool add_generation_prompt) {
    result.differences.clear();
    result.warnings.clear();
    auto& all = result.renderings;
    std::optional<size_t> reference;
    for (size_t i = 0; i < all.size() && !reference; ++i)
        if (all[i].rendered && all[i].side == "model") reference = i;
    for (size_t i = 0; i < all.size() && !reference; ++i)
        if (all[i].rendered) reference = i;
    for (size_t i = 0; i < all.size(); ++i) {
        const TemplateRendering& r = all[i];
        if (!r.rendered) {
            const TemplateFailure& f = *r.failure;
            std::string where = f.line ? " (line " + std::to_string(f.line) + (f.column ? ", column " + std::to_string(f.column) : "") + ")" : "";
            // The engine's message on one line: its source excerpt and caret lose their meaning
            // there, the line above says where.
            std::string message = f.message;
            std::replace(message.begin(), message.end(), '\n', ' ');
            warn(result, "W_TEMPLATE_FAILED", i, "did not render" + where + ": " + escape_for_display(message, 600));
            continue;
        }
        if (reference && i != *reference) result.differences.push_back(difference(all, *reference, i));
        if (i < bos.size() && bos[i] >= 0 && r.tokens.size() >= 2 && r.tokens[0].id == bos[i] && r.tokens[1].id == bos[i])
            warn(result, "W_DOUBLE_BOS", i,
                 "the prompt starts with BOS twice: the template writes " + shown(r.tokens[0].piece) +
                     " and the tokenizer adds BOS too");
        if (add_generation_prompt) check_generation_prompt(result, i);
        check_stops(result, i);
    }
}

}  // namespace mlens
