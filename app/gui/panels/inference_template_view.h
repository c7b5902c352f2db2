// InferenceTemplateView (Inference › Template): the template lab (template_lab.h) of this
// document's model — the conversation rendered through every chat template the model carries (the
// GGUF's tokenizer.chat_template and its named variants by llama.cpp's chat layer, as
// llama-server renders them) and, with "against", through another open model's (a GGUF, an
// Ollama store model's TEMPLATE layer by Go's engine, a Hugging Face folder's template): each
// rendering with the chat layer's capabilities, its text (newlines shown as ↵, invisible
// characters escaped) and token ids, the differences against the first rendering (the first
// differing byte, the differing parts side by side, the first differing token), and the
// warnings with their codes, as `mlens template` prints them.
//
// Contract: Render starts run_template_lab as one JobRunner job of its own (it loads the
// vocabularies it needs in worker processes of its own; the Inference load bar is not needed),
// on the default conversation or on the messages file named in the box (read by
// read_conversation; its error is shown). The result stays until the next run; a new run
// cancels one still running.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlens/infer/template_lab.h"
#include "panels/panel.h"
#include "state/job_runner.h"

namespace mlens {

class InferenceTemplateView {
public:
    void draw(PanelContext& ctx);
    bool run(PanelContext& ctx);
    bool running() const { return static_cast<bool>(m_job); }
    const std::optional<Result<TemplateLabResult>>& result() const { return m_result; }

    std::string messages_path;  // "" : the default conversation
    uint64_t against_document = 0;  // 0: none

private:
    void picker(PanelContext& ctx);
    void rendering(const TemplateLabResult& lab, size_t i);
    void differences(const TemplateLabResult& lab);
    void warnings(const TemplateLabResult& lab);

    JobHandle<TemplateLabResult> m_job;
    std::optional<Result<TemplateLabResult>> m_result;
    std::string m_conversation_error;
};

}  // namespace mlens
