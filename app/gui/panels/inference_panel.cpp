#include "panels/inference_panel.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "mlens/infer/threads.h"
#include "mlens/model/summary.h"
#include "mlens/open/target.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "state/paired_document.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

struct TabName {
    InferenceTab tab;
    const char* name;
};
constexpr TabName kTabs[] = {{InferenceTab::tokenizer, "tokenizer"}, {InferenceTab::generate, "generate"},
                             {InferenceTab::layers, "layers"},       {InferenceTab::ab, "ab"},
                             {InferenceTab::corpus, "corpus"},       {InferenceTab::divergence, "divergence"},
                             {InferenceTab::memory, "memory"},       {InferenceTab::template_lab, "template"},
                             {InferenceTab::console, "console"}};

const std::string dot = " \xC2\xB7 ";
// Log lines shown under "llama.cpp stopped" (the Console tab has them all).
constexpr size_t kStoppedLines = 8;

}  // namespace

std::optional<InferenceTab> inference_tab_named(std::string_view name) {
    for (const TabName& t : kTabs)
        if (name == t.name) return t.tab;
    return std::nullopt;
}

std::optional<InferenceRequest> parse_inference_request(std::string_view request) {
    const size_t colon = request.find(':');
    auto tab = inference_tab_named(request.substr(0, colon));
    if (!tab) return std::nullopt;
    if (colon == std::string_view::npos) return InferenceRequest{*tab, ""};
    if ((*tab != InferenceTab::corpus && *tab != InferenceTab::template_lab) || colon + 1 == request.size()) return std::nullopt;
    return InferenceRequest{*tab, std::string(request.substr(colon + 1))};
}

const char* inference_tab_names() { return "tokenizer, generate, layers, ab, corpus, divergence, memory, template, console"; }

void InferencePanel::request(InferenceTab tab) {
    m_select = tab;
    m_pending = tab;
}

void InferencePanel::facts_line(const ModelSummary& file) {
    const ModelFacts& f = *m_controller->facts();
    // The file's own figures (architecture, parameters, file type), not llama_model_desc, which
    // says "?B" for every model below its size classes.
    std::vector<std::string> parts{model_line(file)};
    if (!f.vocab_only) {
        parts.push_back(human_bytes(f.size_bytes));
        parts.push_back("ctx " + std::to_string(m_controller->n_ctx()) + " of " + std::to_string(f.n_ctx_train));
        parts.push_back("embd " + std::to_string(f.n_embd));
        parts.push_back(plural(f.n_layer, "layer"));
        parts.push_back("heads " + std::to_string(f.n_head) + "/" + std::to_string(f.n_head_kv));
        parts.push_back(m_controller->thread_note().empty() ? std::to_string(m_controller->threads()) + " threads"
                                                            : m_controller->thread_note());
    }
    std::string line;
    for (const std::string& p : parts) line += (line.empty() ? "" : dot) + p;
    // In a narrow center the facts wrap at word boundaries rather than run past the edge.
    ImGui::PushTextWrapPos(0.0f);
    ui::text(line);
    std::string vocab = "vocab " + ui::with_separators(static_cast<uint64_t>(std::max(0, f.n_vocab))) + " (" +
        escape_for_display(f.vocab_type, 20) + ")" + dot + "BOS " + std::to_string(f.bos) + (f.add_bos ? " (added)" : "") + dot + "EOS " +
        std::to_string(f.eos) + dot + "chat template " + (f.has_chat_template ? "yes" : "none");
    if (f.vocab_only) vocab += dot + "vocabulary only: decoding needs a full load";
    ui::text_dim(vocab);
    ImGui::PopTextWrapPos();
}

void InferencePanel::load_bar(PanelContext& ctx) {
    InferenceController& c = *m_controller;
    ImGui::BeginDisabled(c.busy());
    if (ImGui::Button(c.loaded() || c.stopped() ? "Reload model" : "Load model")) start_load(ctx);
    ImGui::SameLine();
    ImGui::Checkbox("vocabulary only", &vocab_only);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Load only the tokenizer (fast; no generation)");
    ImGui::SameLine();
    ImGui::Checkbox("Load as is", &load_as_is);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Hand the file to llama.cpp unmodified, even an Ollama-made GGUF (no upstream export)");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    if (ImGui::InputInt("threads (0: auto)", &threads)) threads = std::clamp(threads, 0, online_cores());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Threads llama.cpp decodes with (applies at the next load). 0: as many as there are idle\n"
            "cores now; on a busy machine more threads than idle cores make decoding much slower");
    ImGui::EndDisabled();
    ImGui::SameLine(0, 16);
    if (c.busy()) {
        std::string label = std::string(c.running_title()) + "\xE2\x80\xA6";
        ImGui::ProgressBar(static_cast<float>(c.progress()), ImVec2(220, 0), label.c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel")) c.cancel();
    } else if (c.loaded()) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.0f ms", c.load_ms());
        ui::text_colored(palette().ok, std::string("loaded in ") + ms);
    } else if (c.stopped()) {
        ui::text_colored(palette().error, "llama.cpp stopped");
    } else if (!c.load_error()) {
        ui::text_dim("not loaded: loading runs llama.cpp on this file (CPU)");
    }
    if (!c.load_banner().empty()) ui::text_colored(palette().warning, escape_for_display(c.load_banner(), 400));
    if (c.stopped()) {
        stopped_box(ctx);
        return;
    }
    if (c.loaded()) facts_line(ctx.doc.index()->summary);
    if (const auto& e = c.load_error()) {
        ImGui::PushTextWrapPos(0);
        if (e->code == ErrorCode::E_CANCELLED) {
            ui::text_dim("loading cancelled");
        } else {
            ui::text_colored(palette().error, "llama.cpp could not load this file (" + std::string(code_name(e->code)) + ")");
            ui::text_colored(palette().error, escape_for_display(e->message, 2000));
            ui::text_dim("The Console tab has every line llama.cpp logged.");
        }
        ImGui::PopTextWrapPos();
    }
}

void InferencePanel::start_load(PanelContext& ctx) {
    m_controller->start_load(ctx.jobs, SessionOptions{.vocab_only = vocab_only, .n_threads = threads, .as_is = load_as_is});
}

void InferencePanel::stopped_box(PanelContext& ctx) {
    InferenceController& c = *m_controller;
    ImGui::PushTextWrapPos(0);
    ui::text_colored(palette().error, escape_for_display(c.stopped()->message, 2000));
    ui::text_dim(
        "llama.cpp runs in a worker process; it ended, this document and every other tab did not. "
        "Its last lines:");
    std::vector<LlamaLogLine> lines = c.log().lines();
    const size_t first = lines.size() > kStoppedLines ? lines.size() - kStoppedLines : 0;
    for (size_t i = first; i < lines.size(); ++i)
        ui::text_dim(std::string(llama_log_level_name(lines[i].level)) + ": " + escape_for_display(lines[i].text, 400));
    ImGui::PopTextWrapPos();
    ImGui::BeginDisabled(c.busy());
    if (ImGui::Button("Reload")) start_load(ctx);
    ImGui::EndDisabled();
}

void InferencePanel::run_pending(PanelContext& ctx) {
    InferenceController& c = *m_controller;
    if (!m_pending || c.busy()) return;
    if (*m_pending == InferenceTab::template_lab) {
        // The lab loads what it renders with itself; the other document must have opened.
        if (ctx.workspace && ctx.workspace->opening()) return;
        if (!m_template_against.empty() && ctx.workspace) {
            // A file by its name or path, or a store model by its reference (its manifest file).
            const std::string named = resolve(m_template_against).path;
            for (const auto& d : ctx.workspace->documents())
                if (d->id != ctx.doc.id && (names_file(*d, m_template_against) || (!named.empty() && named == d->path)))
                    m_template.against_document = d->id;
        }
        m_template.run(ctx);
        m_pending.reset();
        return;
    }
    if (!c.loaded()) {
        // Load once; a failed load ends the request (its error is on screen). The tokenizer needs
        // no weights, so it loads the vocabulary only (a vocab-only GGUF works too).
        if (c.load_error() || c.stopped()) {
            m_pending.reset();
            return;
        }
        if (*m_pending == InferenceTab::tokenizer) vocab_only = true;
        start_load(ctx);
        return;
    }
    switch (*m_pending) {
        case InferenceTab::tokenizer:
            m_tokenizer.run(c);
            break;
        case InferenceTab::generate:
            m_generate.run(ctx, c);
            break;
        case InferenceTab::layers:
            m_layers.run(ctx, c);
            break;
        case InferenceTab::ab:
            if (ctx.workspace && ctx.workspace->opening()) return;
            m_ab.pick_default(ctx);
            m_ab.run(ctx, c);
            break;
        case InferenceTab::corpus:
            if (ctx.workspace && ctx.workspace->opening()) return;
            m_corpus.run(ctx, c, m_ab);
            break;
        case InferenceTab::divergence:
            if (ctx.workspace && ctx.workspace->opening()) return;
            m_divergence.run(ctx, c, m_ab);
            break;
        case InferenceTab::memory:
            m_memory.run(ctx, c);
            break;
        case InferenceTab::template_lab:
        case InferenceTab::console:
            break;
    }
    m_pending.reset();
}

bool InferencePanel::tab(const char* label, InferenceTab which) {
    ImGuiTabItemFlags flags = m_select == which ? ImGuiTabItemFlags_SetSelected : 0;
    return ImGui::BeginTabItem(label, nullptr, flags);
}

bool InferencePanel::accept_link(std::string_view link, Document&) {
    if (!link.starts_with("infer:")) return false;
    m_linked_view = std::string(link.substr(6));
    return true;
}

void InferencePanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    if (!m_controller) m_controller = std::make_unique<InferenceController>(doc.path);
    if (auto view = std::exchange(m_linked_view, std::nullopt)) {
        if (auto r = parse_inference_request(*view)) {
            if (!r->argument.empty() && r->tab == InferenceTab::corpus) m_corpus.text_path = r->argument;
            if (!r->argument.empty() && r->tab == InferenceTab::template_lab) m_template_against = r->argument;
            request(r->tab);
        }
    }
    m_controller->poll();
    run_pending(ctx);

    load_bar(ctx);
    ImGui::Separator();
    if (!ImGui::BeginTabBar("inference_tabs")) return;
    InferenceController& c = *m_controller;
    constexpr std::pair<const char*, InferenceTab> kTabs[] = {
        {"Tokenizer", InferenceTab::tokenizer}, {"Generate", InferenceTab::generate},
        {"Layers", InferenceTab::layers},       {"A/B", InferenceTab::ab},
        {"Corpus", InferenceTab::corpus},       {"Divergence", InferenceTab::divergence},
        {"Memory", InferenceTab::memory},       {"Template", InferenceTab::template_lab},
        {"Console", InferenceTab::console}};
    for (const auto& [label, which] : kTabs) {
        if (!tab(label, which)) continue;
        switch (which) {
            case InferenceTab::tokenizer:
                m_tokenizer.draw(ctx, c);
                break;
            case InferenceTab::generate:
                m_generate.draw(ctx, c);
                break;
            case InferenceTab::layers:
                m_layers.draw(ctx, c);
                break;
            case InferenceTab::ab:
                m_ab.draw(ctx, c);
                break;
            case InferenceTab::corpus:
                m_corpus.draw(ctx, c, m_ab);
                break;
            case InferenceTab::divergence:
                m_divergence.draw(ctx, c, m_ab);
                break;
            case InferenceTab::memory:
                m_memory.draw(ctx, c);
                break;
            case InferenceTab::template_lab:
                m_template.draw(ctx);
                break;
            case InferenceTab::console:
                m_console.draw(ctx, c);
                break;
        }
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
    m_select.reset();
    // "Compare in A/B" in the Corpus view: the A/B view re-runs the pair on that position's text.
    if (auto prompt = m_corpus.take_ab_prompt()) {
        m_ab.prompt = std::move(*prompt);
        m_ab.options.max_tokens = 0;
        request(InferenceTab::ab);
    }
}

}  // namespace mlens
