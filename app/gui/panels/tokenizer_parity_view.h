// TokenizerParityView (Tokenizer › Parity): this GGUF's vocabulary against a Hugging Face
// tokenizer.json, as `mlens tokenizer-parity` reports it (tokenizer_parity.h,
// text_token_parity.h): both sides' model, pre-tokenizer and counts, the differences by kind with
// their ids (a token id links to the Vocabulary tab), and, for an optional text file, the first
// token where llama.cpp and Hugging Face's tokenizers part, as chips of both sides.
//
// Contract:
//  - The tokenizer.json path starts as the tokenizer.json beside the document's file when one is
//    there; Browse… opens the file chooser (all files). Nothing runs by itself: Compare starts
//    one job, which checks the pair and, with a text file, tokenizes it in a vocabulary-only
//    worker of its own; Cancel stops it. The result stays until the next Compare.
//  - The kind filter shows one kind's differences or all; counts are the full totals even where
//    the list is capped (kMaxListedPerKind per kind), which the view says.
#pragma once

#include <optional>
#include <string>

#include "mlens/analysis/tokenizer_parity.h"
#include "mlens/infer/text_token_parity.h"
#include "panels/panel.h"
#include "state/job_runner.h"
#include "widgets/file_chooser.h"

namespace mlens {

struct TokenizerParityResult {
    TokenizerParityCheck check;
    std::optional<TextTokenParity> text;
    std::string text_path;
};

class TokenizerParityView {
public:
    // Returns a token id whose link was clicked (the panel scrolls the vocabulary to it).
    std::optional<uint64_t> draw(PanelContext& ctx);
    void draw_windows();

    // For tests and the start option: compare with this tokenizer.json (and text file) now.
    void start(PanelContext& ctx, const std::string& tokenizer_json, const std::string& text_file = {});
    const std::optional<TokenizerParityResult>& result() const { return m_result; }
    bool running() const { return static_cast<bool>(m_job); }

private:
    void poll();
    void draw_inputs(PanelContext& ctx);
    void draw_summary(const TokenizerParityResult& r);
    std::optional<uint64_t> draw_differences(const TokenizerParity& p);
    void draw_text(const TokenizerParityResult& r);

    bool m_prefilled = false;
    std::string m_json_path, m_text_path;
    FileChooser m_chooser;
    std::string* m_choosing = nullptr;
    JobHandle<TokenizerParityResult> m_job;
    std::optional<TokenizerParityResult> m_result;
    std::string m_status;
    int m_kind = -1;  // -1: every kind
};

}  // namespace mlens
