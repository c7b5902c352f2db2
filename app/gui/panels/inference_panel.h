// InferencePanel (center, GGUF documents): test inference through llama.cpp. A load bar — load
// with progress and cancel, optionally vocab-only or as is (SessionOptions::as_is: no upstream
// export even for an Ollama-made GGUF), with a thread count (0: the default of threads.h); the
// facts llama.cpp reports; llama.cpp's own error text when it cannot load; "llama.cpp stopped:
// REASON" with the worker's last log lines and a Reload button when the worker process died; a
// banner when the file went through the compat export — over sub-tabs: Tokenizer, Generate,
// Layers, A/B, Corpus (KLD over a text), Divergence (per layer), Memory (plan vs llama.cpp),
// Template (every chat template of the model rendered and compared) and the Console of captured
// llama.cpp log lines.
//
// Contract:
//  - One InferenceController (one WorkerSession) per document panel, made on first draw. Every heavy
//    operation is a job on it; while one runs the run buttons are disabled and the load bar shows
//    its progress with a Cancel button.
//  - Nothing loads by itself: the user presses Load, or the start option "--select infer:VIEW"
//    (the link this panel accepts) loads the model (the tokenizer: its vocabulary only) and, once
//    loaded, shows VIEW and runs it on its default input (ab, corpus, divergence: against the B of the
//    A/B view, by default the next ready GGUF document, or the file itself when no other is open;
//    they wait until no document is still opening). "corpus:FILE" scores the text file FILE.
//    "template" renders the templates without loading the model here (the lab loads what it
//    needs itself); "template:FILE" renders against the open document FILE names
//    (paired_document.h names_file, or a store model reference naming its manifest).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "panels/inference_ab_view.h"
#include "panels/inference_console_view.h"
#include "panels/inference_corpus_view.h"
#include "panels/inference_divergence_view.h"
#include "panels/inference_generate_view.h"
#include "panels/inference_layers_view.h"
#include "panels/inference_memory_view.h"
#include "panels/inference_template_view.h"
#include "panels/inference_tokenizer_view.h"
#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

enum class InferenceTab { tokenizer, generate, layers, ab, corpus, divergence, memory, template_lab, console };

// "tokenizer", "generate", "layers", "ab", "corpus", "divergence", "memory", "template", "console";
// nullopt for anything else.
std::optional<InferenceTab> inference_tab_named(std::string_view name);
// What "--select infer:REQUEST" asks for: "VIEW", "corpus:FILE" (the text file to score) or
// "template:FILE" (the open model to compare with); nullopt for an unknown view or an argument
// to another view.
struct InferenceRequest {
    InferenceTab tab;
    std::string argument;
};
std::optional<InferenceRequest> parse_inference_request(std::string_view request);
// The names above, comma-separated (help texts).
const char* inference_tab_names();

class InferencePanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    // "infer:VIEW": loads the model and runs that tab.
    bool accept_link(std::string_view link, Document& doc) override;

    // For tests and the start option.
    InferenceController* controller() { return m_controller.get(); }
    bool vocab_only = false;
    bool load_as_is = false;  // "Load as is": no upstream export, even for an Ollama-made GGUF
    int threads = 0;  // 0: the default (threads.h)
    void show(InferenceTab tab) { m_select = tab; }
    // Loads (when not loaded) and runs `tab` on its current input once loaded.
    void request(InferenceTab tab);
    InferenceTokenizerView& tokenizer_view() { return m_tokenizer; }
    InferenceGenerateView& generate_view() { return m_generate; }
    InferenceLayersView& layers_view() { return m_layers; }
    InferenceAbView& ab_view() { return m_ab; }
    InferenceCorpusView& corpus_view() { return m_corpus; }
    InferenceDivergenceView& divergence_view() { return m_divergence; }
    InferenceMemoryView& memory_view() { return m_memory; }
    InferenceTemplateView& template_view() { return m_template; }

private:
    std::optional<std::string> m_linked_view;  // from an "infer:VIEW" link, run at the next draw
    void load_bar(PanelContext& ctx);
    void start_load(PanelContext& ctx);
    // "llama.cpp stopped: REASON", the worker's last log lines and a Reload button.
    void stopped_box(PanelContext& ctx);
    void facts_line(const ModelSummary& file);
    void run_pending(PanelContext& ctx);
    bool tab(const char* label, InferenceTab which);

    std::unique_ptr<InferenceController> m_controller;
    std::optional<InferenceTab> m_select;  // sub-tab to bring forward next frame
    std::optional<InferenceTab> m_pending;  // sub-tab to run once the model is loaded
    InferenceTokenizerView m_tokenizer;
    InferenceGenerateView m_generate;
    InferenceLayersView m_layers;
    InferenceAbView m_ab;
    InferenceCorpusView m_corpus;
    InferenceDivergenceView m_divergence;
    InferenceMemoryView m_memory;
    InferenceTemplateView m_template;
    std::string m_template_against;  // "template:FILE": the document to compare with
    InferenceConsoleView m_console;
};

}  // namespace mlens
