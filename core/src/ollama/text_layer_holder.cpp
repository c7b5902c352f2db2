#include "text_layer_holder.h"

#include <algorithm>

namespace mlens {

Result<std::shared_ptr<const TextBlob>> TextLayerHolder::text_of(const ManifestLayer& layer, uint64_t expected,
                                                                 const std::function<Result<TextBlob>(uint64_t max_bytes)>& read) {
    if (auto known = m_texts.find(layer.blob->hex); known != m_texts.end()) return known->second;
    const uint64_t left = m_budget - m_held;
    Result<std::shared_ptr<const TextBlob>> text =
        Error{ErrorCode::E_TOO_LARGE, layer.field, std::nullopt,
              "not read: the text layers before it hold " + std::to_string(m_held) + " bytes of the " + std::to_string(m_budget) +
                  " all text layers may hold (max_view_text_bytes)"};
    if (std::min(expected, m_text_bytes) <= left) {
        auto got = read(std::min(m_text_bytes, left));
        if (got) {
            m_held += got->text.size();
            text = std::make_shared<const TextBlob>(std::move(*got));
        } else {
            text = got.error();
        }
    }
    m_texts.emplace(layer.blob->hex, text);
    return text;
}

}  // namespace mlens
