#include "gguf_layout_checks.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "mlens/io/checked_math.h"

namespace mlens {

namespace {

struct Span {
    uint64_t begin, end;
    size_t index;  // file-relative tensor index
};

std::string tensor_field(size_t i, const char* suffix = "") { return "tensors[" + std::to_string(i) + "]" + suffix; }

void add(Model& m, uint32_t file, Severity s, ErrorCode code, std::string field, uint64_t offset, std::string msg,
         std::optional<uint64_t> tensor = std::nullopt) {
    m.diagnostics.push_back({s, "GGUF", code, std::move(field), offset, std::move(msg), file, tensor});
}

void check_padding(const GgufLayoutContext& ctx, uint64_t data_start) {
    const ByteSource& src = *ctx.model.files[ctx.file].source;
    uint64_t end = std::min(data_start, src.size());
    if (end <= ctx.header_end) return;
    std::vector<uint8_t> pad(end - ctx.header_end);  // < alignment <= max_alignment
    if (!src.read(ctx.header_end, pad.size(), pad.data())) return;
    if (std::any_of(pad.begin(), pad.end(), [](uint8_t b) { return b != 0; }))
        add(ctx.model, ctx.file, Severity::warning, ErrorCode::W_PADDING_NONZERO, "padding", ctx.header_end,
            "padding before the tensor data is not all zeros");
}

}  // namespace

bool check_gguf_layout(const GgufLayoutContext& ctx) {
    Model& m = ctx.model;
    const uint64_t file_size = m.files[ctx.file].source->size();
    const uint64_t data_start = checked_align_up(ctx.header_end, ctx.alignment).value_or(UINT64_MAX);
    check_padding(ctx, data_start);

    std::vector<Span> spans;
    // Order and trailing-byte checks need every tensor's size and an in-bounds range.
    bool layout_known = true;
    uint64_t data_end = ctx.header_end;
    for (size_t k = ctx.first_tensor; k < m.tensors.size(); ++k) {
        TensorInfo& t = m.tensors[k];
        size_t i = k - ctx.first_tensor;
        uint64_t offset_field = t.info_range.end() - 8;
        auto absolute = checked_add(data_start, t.relative_offset);
        if (!absolute) {
            add(m, ctx.file, Severity::error, ErrorCode::E_TENSOR_OFFSET, tensor_field(i, ".offset"), offset_field,
                "offset " + std::to_string(t.relative_offset) + " from the data section at " + std::to_string(data_start) +
                    " does not fit in 64 bits",
                k);
            t.data_offset = file_size;
            layout_known = false;
            continue;
        }
        t.data_offset = *absolute;
        if (t.relative_offset % ctx.alignment != 0)
            add(m, ctx.file, Severity::error, ErrorCode::E_TENSOR_MISALIGNED, tensor_field(i, ".offset"), offset_field,
                "offset " + std::to_string(t.relative_offset) + " is not a multiple of the alignment " + std::to_string(ctx.alignment), k);
        if (!t.n_bytes) {
            // Unknown size: at least a non-empty tensor cannot start at or past the end of the file.
            layout_known = false;
            if (t.n_elements > 0 && t.data_offset >= file_size)
                add(m, ctx.file, Severity::error, ErrorCode::E_TENSOR_OUT_OF_BOUNDS, tensor_field(i), offset_field,
                    "data starts at " + std::to_string(t.data_offset) + ", not before the file size " + std::to_string(file_size), k);
            continue;
        }
        auto end = checked_add(t.data_offset, *t.n_bytes);
        // A zero-byte tensor occupies no bytes, so it is in bounds at any offset.
        if (*t.n_bytes > 0 && (!end || *end > file_size)) {
            add(m, ctx.file, Severity::error, ErrorCode::E_TENSOR_OUT_OF_BOUNDS, tensor_field(i), offset_field,
                "data range [" + std::to_string(t.data_offset) + ", " + (end ? std::to_string(*end) : std::string("overflow")) +
                    ") exceeds file size " + std::to_string(file_size),
                k);
            layout_known = false;
            continue;
        }
        if (*t.n_bytes > 0) {
            data_end = std::max(data_end, *end);
            spans.push_back({t.data_offset, *end, i});
        }
    }

    // Sorted by start, a range overlaps an earlier one exactly when it starts before the furthest
    // end seen so far.
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.index < b.index; });
    size_t furthest = 0;
    for (size_t s = 1; s < spans.size(); ++s) {
        if (spans[s].begin < spans[furthest].end) {
            const Span& later = spans[s].index > spans[furthest].index ? spans[s] : spans[furthest];
            const Span& other = &later == &spans[s] ? spans[furthest] : spans[s];
            add(m, ctx.file, Severity::error, ErrorCode::E_TENSOR_OVERLAP, tensor_field(later.index),
                m.tensors[ctx.first_tensor + later.index].info_range.end() - 8,
                "data range [" + std::to_string(later.begin) + ", " + std::to_string(later.end) + ") overlaps tensors[" +
                    std::to_string(other.index) + "] at [" + std::to_string(other.begin) + ", " + std::to_string(other.end) + ")",
                ctx.first_tensor + later.index);
        }
        if (spans[s].end > spans[furthest].end) furthest = s;
    }

    if (!layout_known) return true;
    uint64_t expected = 0;
    for (size_t k = ctx.first_tensor; k < m.tensors.size(); ++k) {
        const TensorInfo& t = m.tensors[k];
        if (t.relative_offset != expected) {
            add(m, ctx.file, Severity::warning, ErrorCode::W_NONCANONICAL_LAYOUT, tensor_field(k - ctx.first_tensor, ".offset"),
                t.info_range.end() - 8,
                "offset " + std::to_string(t.relative_offset) + " where the packed layout puts " + std::to_string(expected) +
                    " (valid, but llama.cpp refuses it)",
                k);
            break;
        }
        auto next = checked_add(expected, *t.n_bytes);
        expected = next ? checked_align_up(*next, ctx.alignment).value_or(UINT64_MAX) : UINT64_MAX;
    }
    uint64_t allowed_end = checked_align_up(data_end, ctx.alignment).value_or(UINT64_MAX);
    if (file_size > allowed_end)
        add(m, ctx.file, Severity::warning, ErrorCode::W_TRAILING_DATA, "", allowed_end,
            std::to_string(file_size - allowed_end) + " bytes after the last tensor");
    return true;
}

}  // namespace mlens
