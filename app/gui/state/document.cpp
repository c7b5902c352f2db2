#include "document.h"

#include <algorithm>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

// The part `Part` of alternative `Alt` of the content, else a null pointer.
template <typename Alt, typename Part>
const Part& part_of(const DocumentContent& content, const Part Alt::*member) {
    static const Part none;
    const Alt* alt = std::get_if<Alt>(&content);
    return alt ? alt->*member : none;
}

}  // namespace

const std::shared_ptr<const Model>& Document::model() const { return part_of(content, &ModelDocument::model); }
const std::shared_ptr<const DocumentIndex>& Document::index() const { return part_of(content, &ModelDocument::index); }
const std::shared_ptr<const ManifestView>& Document::registry() const { return part_of(content, &ModelDocument::registry); }
const std::shared_ptr<const Imatrix>& Document::imatrix() const { return part_of(content, &ImatrixDocument::imatrix); }
const StoreDocumentPtr& Document::store() const {
    static const StoreDocumentPtr none;
    const StoreDocumentPtr* store = std::get_if<StoreDocumentPtr>(&content);
    return store ? *store : none;
}

void Document::select(Selection s, std::string panel) {
    selection = s;
    if (!panel.empty()) focus_panel = std::move(panel);
}

std::optional<ByteTarget> Document::byte_target() const {
    if (!ready()) return std::nullopt;
    // A store or an importance matrix has no model bytes to point at, only a finding's.
    if (!is_model()) return selection.kind == SelectionKind::finding ? finding_bytes : std::nullopt;
    const Model& m = *model();
    switch (selection.kind) {
        case SelectionKind::none:
            return std::nullopt;
        case SelectionKind::header: {
            if (m.files.empty()) return std::nullopt;
            if (m.format == Format::safetensors) return ByteTarget{0, 0, {0, m.files[0].data_start}, "header length and JSON header"};
            // The fixed part: magic, version and the two counts (32-bit counts in GGUF v1).
            uint64_t fixed = m.files[0].version == 1 ? 16 : 24;
            return ByteTarget{0, 0, {0, fixed}, "magic, version, tensor and key counts"};
        }
        case SelectionKind::metadata: {
            if (selection.index >= m.metadata.size()) return std::nullopt;
            const MetadataEntry& e = m.metadata[selection.index];
            return ByteTarget{e.file, e.key_range.offset, e.range(), "key " + escape_for_display(e.key, 80)};
        }
        case SelectionKind::tensor: {
            if (selection.index >= m.tensors.size()) return std::nullopt;
            const TensorInfo& t = m.tensors[selection.index];
            return ByteTarget{t.file, t.data_offset, t.data_range(), "data of " + escape_for_display(t.name, 80)};
        }
        case SelectionKind::token: {
            const TokenizerInfo& t = index()->tokenizer;
            if (!t.tokens || selection.index >= t.count()) return std::nullopt;
            const ArrayIndex& a = *t.tokens;
            uint64_t offset = a.element_offset(selection.index);
            return ByteTarget{m.metadata[t.tokens_entry].file,
                              offset,
                              {offset, a.string_length_bytes + a.string_length_at(selection.index)},
                              "token " + std::to_string(selection.index) + ": length and bytes"};
        }
        case SelectionKind::diagnostic: {
            if (selection.index >= m.diagnostics.size()) return std::nullopt;
            const Diagnostic& d = m.diagnostics[selection.index];
            if (!d.offset) return std::nullopt;
            // Show a little context before the offending byte.
            uint64_t start = *d.offset >= 32 ? (*d.offset - 32) & ~uint64_t{15} : 0;
            return ByteTarget{d.file, start, {*d.offset, 1}, "diagnostic " + std::string(code_name(d.code))};
        }
        case SelectionKind::finding:
            return finding_bytes;
    }
    return std::nullopt;
}

std::vector<uint8_t> read_file_bytes(const Model& model, uint32_t file, uint64_t offset, uint64_t max) {
    if (file >= model.files.size() || !model.files[file].source) return {};
    const ByteSource& src = *model.files[file].source;
    if (offset >= src.size()) return {};
    std::vector<uint8_t> out(std::min(max, src.size() - offset));
    if (!src.read(offset, out.size(), out.data())) return {};
    return out;
}

}  // namespace mlens
