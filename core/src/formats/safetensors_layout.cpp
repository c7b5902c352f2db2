#include "safetensors_layout.h"

#include <algorithm>
#include <numeric>

#include "mlens/io/checked_math.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

enum class SizeProblem { none, element_overflow, bit_overflow, partial_byte };

struct TensorSize {
    SizeProblem problem = SizeProblem::none;
    uint64_t elements = 0;
    uint64_t bits = 0;
};

// ne is the shape reversed; the product runs in the file's order, as the reference computes it,
// so a zero dimension after an overflowing prefix still overflows.
TensorSize tensor_size(const TensorInfo& t, SafetensorsDtype dtype) {
    TensorSize s;
    s.elements = 1;
    for (auto it = t.ne.rbegin(); it != t.ne.rend(); ++it) {
        auto product = checked_mul(s.elements, *it);
        if (!product) {
            s.problem = SizeProblem::element_overflow;
            s.elements = 0;
            return s;
        }
        s.elements = *product;
    }
    auto bits = checked_mul(s.elements, safetensors_dtype_bits(dtype));
    if (!bits) {
        s.problem = SizeProblem::bit_overflow;
        return s;
    }
    s.bits = *bits;
    if (s.bits % 8 != 0) s.problem = SizeProblem::partial_byte;
    return s;
}

std::string quoted(const std::string& name) { return "\"" + escape_for_display(name, 64) + "\""; }

}  // namespace

void size_safetensors_tensors(Model& model, size_t first, const std::vector<SafetensorsEntry>& entries, uint64_t data_start) {
    for (size_t i = 0; i < entries.size(); ++i) {
        TensorInfo& t = model.tensors[first + i];
        TensorSize s = tensor_size(t, entries[i].dtype);
        t.n_elements = s.elements;
        t.n_bytes = s.problem == SizeProblem::none ? std::optional<uint64_t>(s.bits / 8) : std::nullopt;
        t.data_offset = checked_add(data_start, entries[i].begin).value_or(UINT64_MAX);
    }
}

bool check_safetensors_layout(Model& model, uint32_t file, size_t first, const std::vector<SafetensorsEntry>& entries,
                              uint64_t data_start) {
    auto fail = [&](ErrorCode code, std::string field, uint64_t offset, std::string message) {
        model.diagnostics.push_back({Severity::error, "safetensors", code, std::move(field), offset, std::move(message), file});
        model.partial = true;
        return false;
    };
    auto by_range = [&](size_t a, size_t b) {
        return entries[a].begin != entries[b].begin ? entries[a].begin < entries[b].begin : entries[a].end < entries[b].end;
    };
    std::vector<size_t> order(entries.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (!std::is_sorted(order.begin(), order.end(), by_range)) std::stable_sort(order.begin(), order.end(), by_range);

    uint64_t expected = 0;
    const TensorInfo* previous = nullptr;
    for (size_t i : order) {
        const SafetensorsEntry& e = entries[i];
        const TensorInfo& t = model.tensors[first + i];
        auto name = [&] { return escape_for_display(t.name, 64); };
        auto range = [&] { return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]"; };
        if (e.end < e.begin)
            return fail(ErrorCode::InvalidOffset, name() + ".data_offsets", e.offsets_at,
                        "data_offsets " + range() + " end before they begin");
        if (e.begin != expected) {
            std::string why = !previous ? "the first tensor's data must start at 0"
                : e.begin > expected    ? "a gap of " + std::to_string(e.begin - expected) + " bytes after " + quoted(previous->name) +
                    ", which ends at " + std::to_string(expected)
                                     : "it overlaps " + quoted(previous->name) + ", which ends at " + std::to_string(expected);
            return fail(ErrorCode::InvalidOffset, name() + ".data_offsets", e.offsets_at, "data_offsets " + range() + ": " + why);
        }
        TensorSize s = tensor_size(t, e.dtype);
        const char* dtype = safetensors_dtype_name(e.dtype);
        if (s.problem == SizeProblem::element_overflow)
            return fail(ErrorCode::ValidationOverflow, name() + ".shape", e.shape_at, "the element count overflows 64 bits");
        if (s.problem == SizeProblem::bit_overflow)
            return fail(ErrorCode::ValidationOverflow, name() + ".shape", e.shape_at,
                        std::to_string(s.elements) + " elements of " + dtype + " overflow 64 bits");
        if (s.problem == SizeProblem::partial_byte)
            return fail(ErrorCode::MisalignedSlice, name() + ".shape", e.shape_at,
                        std::to_string(s.elements) + " elements of " + dtype + " are " + std::to_string(s.bits) +
                            " bits, not a whole number of bytes");
        if (e.end - e.begin != s.bits / 8)
            return fail(ErrorCode::TensorInvalidInfo, name() + ".data_offsets", e.offsets_at,
                        "data_offsets " + range() + " hold " + std::to_string(e.end - e.begin) + " bytes; " + std::to_string(s.elements) +
                            " elements of " + dtype + " need " + std::to_string(s.bits / 8));
        expected = e.end;
        previous = &t;
    }

    const uint64_t file_size = model.files[file].source->size();
    auto data_end = checked_add(data_start, expected);
    if (!data_end || *data_end > file_size)
        return fail(ErrorCode::MetadataIncompleteBuffer, "data", file_size,
                    "the tensor data ends at " + (data_end ? std::to_string(*data_end) : std::string("more than 2^64")) +
                        ", past the end of the file (" + std::to_string(file_size) + " bytes)");
    if (*data_end < file_size)
        return fail(ErrorCode::MetadataIncompleteBuffer, "data", *data_end,
                    std::to_string(file_size - *data_end) + " bytes after the end of the tensor data");
    return true;
}

}  // namespace mlens
