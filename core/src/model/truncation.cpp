#include "mlens/model/truncation.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "mlens/io/checked_math.h"
#include "mlens/text/escape.h"
#include "mlens/text/natural_order.h"

namespace mlens {

namespace {

struct FileShortfall {
    uint64_t size = 0;
    uint64_t wanted = 0;  // furthest tensor end
    std::vector<std::pair<uint64_t, uint64_t>> missing;  // [begin, end) past the size
    uint64_t affected = 0;
    uint64_t tensors = 0;
};

// Bytes covered by the union of the ranges.
uint64_t covered_bytes(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
    std::sort(ranges.begin(), ranges.end());
    uint64_t total = 0, reached = 0;
    for (const auto& [begin, end] : ranges) {
        uint64_t from = std::max(begin, reached);
        if (end > from) total += end - from;
        reached = std::max(reached, end);
    }
    return total;
}

// The end of the tensor data of GGUF file `file` as ggml packs it (gguf.cpp): each tensor's bytes
// padded to the alignment, in tensor-info order, from the data start; the last one's padding may
// be left out. nullopt for another format or a tensor of unknown size.
std::optional<uint64_t> packed_end(const Model& model, uint32_t file) {
    if (model.format != Format::gguf) return std::nullopt;
    const SourceFile& f = model.files[file];
    uint64_t next = f.data_start, end = f.data_start;  // where the next tensor would start; the last one's end
    for (const TensorInfo& t : model.tensors) {
        if (t.file != file) continue;
        if (!t.n_bytes) return std::nullopt;
        const uint64_t padding = f.alignment > 1 && *t.n_bytes % f.alignment ? f.alignment - *t.n_bytes % f.alignment : 0;
        end = checked_add(next, *t.n_bytes).value_or(UINT64_MAX);
        next = checked_add(end, padding).value_or(UINT64_MAX);
    }
    return end;
}

bool is_truncation_summary(const Diagnostic& d) { return d.code == ErrorCode::E_TRUNCATED_DATA && d.field == "data"; }

// The tensors of `file` whose data the end of the file cuts, by name in natural order.
std::vector<size_t> cut_tensors(const Model& model, uint32_t file) {
    std::vector<size_t> out;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        if (t.file == file && (t.presence == DataPresence::partial || t.presence == DataPresence::missing)) out.push_back(i);
    }
    std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) { return natural_less(model.tensors[a].name, model.tensors[b].name); });
    return out;
}

}  // namespace

void mark_missing_data(Model& model) {
    for (const Diagnostic& d : model.diagnostics)
        if (d.code == ErrorCode::E_TRUNCATED_DATA) return;
    std::vector<FileShortfall> files(model.files.size());
    for (size_t f = 0; f < model.files.size(); ++f)
        if (model.files[f].source) files[f].size = model.files[f].source->size();
    for (TensorInfo& t : model.tensors) {
        if (t.file >= files.size() || !model.files[t.file].source || model.files[t.file].data_start == 0) continue;
        FileShortfall& f = files[t.file];
        ++f.tensors;
        if (!t.n_bytes || *t.n_bytes == 0) continue;
        const uint64_t end = checked_add(t.data_offset, *t.n_bytes).value_or(UINT64_MAX);
        if (end <= f.size) continue;
        t.presence = t.data_offset >= f.size ? DataPresence::missing : DataPresence::partial;
        f.missing.emplace_back(std::max(t.data_offset, f.size), end);
        f.wanted = std::max(f.wanted, end);
        ++f.affected;
    }
    std::vector<Diagnostic> summaries;
    for (size_t i = 0; i < files.size(); ++i) {
        const FileShortfall& f = files[i];
        if (f.affected == 0) continue;
        std::string message = "file ends at " + std::to_string(f.size) + " of " + std::to_string(f.wanted) +
            " bytes: " + std::to_string(covered_bytes(f.missing)) + " bytes of tensor data missing; " + std::to_string(f.affected) +
            " of " + std::to_string(f.tensors) + " tensors affected";
        // A file that holds every byte its tensors need is not cut short: its offsets are wrong.
        if (offsets_past_end(model, static_cast<uint32_t>(i)))
            message += " (not a cut file: the " + std::to_string(*packed_end(model, static_cast<uint32_t>(i))) +
                " bytes its header and tensors need, as ggml packs them, are all there; the header's offsets place tensors past "
                "its end)";
        if (model.files.size() > 1)
            message = escape_for_display(std::filesystem::path(model.files[i].path).filename().string(), 80) + ": " + message;
        summaries.push_back({Severity::error, format_name(model.format), ErrorCode::E_TRUNCATED_DATA, "data", f.size, std::move(message),
                             static_cast<uint32_t>(i)});
    }
    model.diagnostics.insert(model.diagnostics.begin(), std::make_move_iterator(summaries.begin()),
                             std::make_move_iterator(summaries.end()));
}

namespace {

// The reader rows a truncation summary stands for: each E_TENSOR_OUT_OF_BOUNDS row whose tensor
// (Diagnostic::tensor) the summary of its file marked partial or missing. A row about a tensor
// the summary does not cover (one of unknown size) stays listed.
std::vector<bool> explained_rows(const Model& model) {
    std::vector<bool> explained(model.diagnostics.size(), false), summarized(model.files.size(), false);
    bool any = false;
    for (const Diagnostic& d : model.diagnostics)
        if (is_truncation_summary(d) && d.file < summarized.size()) any = summarized[d.file] = true;
    if (!any) return explained;
    for (size_t i = 0; i < model.diagnostics.size(); ++i) {
        const Diagnostic& d = model.diagnostics[i];
        if (d.code != ErrorCode::E_TENSOR_OUT_OF_BOUNDS || d.file >= summarized.size() || !summarized[d.file]) continue;
        if (!d.tensor || *d.tensor >= model.tensors.size() || model.tensors[*d.tensor].file != d.file) continue;
        const DataPresence p = model.tensors[*d.tensor].presence;
        explained[i] = p == DataPresence::partial || p == DataPresence::missing;
    }
    return explained;
}

}  // namespace

std::vector<ListedDiagnostic> listed_diagnostics(const Model& model) {
    const std::vector<bool> explained = explained_rows(model);
    std::vector<ListedDiagnostic> out;
    for (size_t i = 0; i < model.diagnostics.size(); ++i) {
        const Diagnostic& d = model.diagnostics[i];
        if (explained[i]) continue;
        out.push_back({i, is_truncation_summary(d) ? cut_tensors(model, d.file) : std::vector<size_t>()});
    }
    return out;
}

size_t listed_count(const Model& model) {
    const std::vector<bool> explained = explained_rows(model);
    return static_cast<size_t>(std::count(explained.begin(), explained.end(), false));
}

size_t listed_error_count(const Model& model) {
    const std::vector<bool> explained = explained_rows(model);
    size_t n = 0;
    for (size_t i = 0; i < model.diagnostics.size(); ++i) n += !explained[i] && model.diagnostics[i].severity == Severity::error;
    return n;
}

bool offsets_past_end(const Model& model, uint32_t file) {
    if (file >= model.files.size() || !model.files[file].source) return false;
    const std::optional<uint64_t> packed = packed_end(model, file);
    return packed && *packed <= model.files[file].source->size();
}

std::string cut_tensor_text(const Model& model, size_t tensor) {
    const TensorInfo& t = model.tensors[tensor];
    const uint64_t size = t.file < model.files.size() && model.files[t.file].source ? model.files[t.file].source->size() : 0;
    const uint64_t bytes = t.n_bytes.value_or(0);
    const uint64_t present = t.data_offset >= size ? 0 : std::min(bytes, size - t.data_offset);
    return std::to_string(present) + " of " + std::to_string(bytes) + " bytes present";
}

}  // namespace mlens
