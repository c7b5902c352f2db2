// InferenceTokenizerView (Inference › Tokenizer): text → llama.cpp's tokens as chips (id below,
// invisible characters made visible), the add_special / parse_special switches and the
// detokenized round trip; "Render chat template" renders sample_conversation() with llama.cpp's
// apply_chat_template (never with our code) and shows the prompt and its tokens.
//
// Contract: tokenizing runs on the main thread (it is quick) whenever the text, a switch or the
// session changes and no job holds the session; while one does, the last tokens stay shown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceTokenizerView {
public:
    void draw(PanelContext& ctx, InferenceController& c);
    // Tokenizes the current text and renders the chat template now (no-op while a job runs).
    void run(InferenceController& c);

    std::string text = "Hello world!\n\tTokens: <s> caf\xC3\xA9 na\xC3\xAFve";
    TokenizeOptions options;

    const std::optional<Result<TokenizeOutcome>>& result() const { return m_result; }
    const std::optional<Result<ChatRender>>& chat() const { return m_chat; }

private:
    void refresh(InferenceController& c);
    void draw_chat(PanelContext& ctx);

    std::optional<Result<TokenizeOutcome>> m_result;
    std::optional<Result<ChatRender>> m_chat;
    std::string m_chat_prompt;  // escaped for display
    bool m_stale = true;
    uint64_t m_serial = 0;
};

}  // namespace mlens
