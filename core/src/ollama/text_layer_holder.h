// The text layers of one manifest view held once per distinct blob and within one budget, for the
// store's view (manifest_view.h) and a registry's (registry_view.h) alike. Internal to
// core/ollama.
//
// Contract: TextLayerHolder(text_bytes, budget).text_of(layer, expected, read) is the text of the
// layer's blob: read(max_bytes) is called at most once per distinct digest (layers naming one
// blob share its TextBlob, or its error), with max_bytes the smaller of text_bytes and what the
// budget has left. A blob whose expected bytes (the smaller of `expected`, what its layer or blob
// says it holds, and text_bytes) would go past what is left is not read: its layers get
// E_TOO_LARGE at the layer's field ("max_view_text_bytes"). What all reads returned stays within
// the budget.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "mlens/ollama/manifest.h"
#include "mlens/ollama/text_blob.h"
#include "mlens/result.h"

namespace mlens {

class TextLayerHolder {
public:
    TextLayerHolder(uint64_t text_bytes, uint64_t budget) : m_text_bytes(text_bytes), m_budget(budget) {}

    Result<std::shared_ptr<const TextBlob>> text_of(const ManifestLayer& layer, uint64_t expected,
                                                    const std::function<Result<TextBlob>(uint64_t max_bytes)>& read);

private:
    uint64_t m_text_bytes, m_budget, m_held = 0;
    std::map<std::string, Result<std::shared_ptr<const TextBlob>>> m_texts;  // by digest
};

}  // namespace mlens
