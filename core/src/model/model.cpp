#include "mlens/model/model.h"

#include <cstring>

#include "mlens/io/checked_math.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

const char* format_name(Format f) {
    static constexpr NameRow<Format> kNames[] = {{Format::gguf, "GGUF"}, {Format::safetensors, "safetensors"}};
    return name_of(kNames, f, "unknown");
}

const char* data_presence_name(DataPresence p) {
    static constexpr NameRow<DataPresence> kNames[] = {
        {DataPresence::complete, "complete"}, {DataPresence::partial, "partial"}, {DataPresence::missing, "missing"},
        {DataPresence::unknown, "unknown"}};
    return name_of(kNames, p, "complete");
}

Error unlocated_data_error(const TensorInfo& t) {
    return Error{ErrorCode::E_TRUNCATED, "tensors", t.info_range.offset,
                 escape_for_display(t.name) +
                     " is not readable: the tensor-info list is cut before its end, so where the tensor's data lies is not known"};
}

std::string format_and_version(Format f, uint32_t version) {
    std::string text = format_name(f);
    if (f == Format::gguf && version != 0) text += " v" + std::to_string(version);  // 0: no file of it was read
    return text;
}

std::string Diagnostic::to_line() const {
    std::string s = severity == Severity::error ? "error: " : "warning: ";
    s += format + " " + Error{code, field, offset, message}.to_string();
    return s;
}

Diagnostic Diagnostic::from_error(const Error& e, std::string format, uint32_t file) {
    return Diagnostic{Severity::error, std::move(format), e.code, e.field, e.offset, e.message, file};
}

double TensorInfo::bits_per_weight() const {
    if (!n_bytes || n_elements == 0) return 0.0;
    return static_cast<double>(*n_bytes) * 8.0 / static_cast<double>(n_elements);
}

const MetadataEntry* Model::find(std::string_view key) const {
    for (const auto& e : metadata)
        if (e.key == key) return &e;
    return nullptr;
}

std::optional<std::string> Model::get_string(std::string_view key) const {
    const auto* e = find(key);
    if (!e || !e->value.is_string()) return std::nullopt;
    return e->value.string_value(Value::kInlineStringBytes);
}

std::optional<uint64_t> Model::get_uint(std::string_view key) const {
    const auto* e = find(key);
    if (!e || !value_type_is_integer(e->value.type)) return std::nullopt;
    return e->value.scalar.as_uint();
}

const TensorInfo* Model::find_tensor(std::string_view name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::vector<std::string> Model::tensor_names() const {
    std::vector<std::string> names;
    names.reserve(tensors.size());
    for (const auto& t : tensors) names.push_back(t.name);
    return names;
}

size_t Model::error_count() const {
    size_t n = 0;
    for (const auto& d : diagnostics) n += d.severity == Severity::error;
    return n;
}

size_t Model::warning_count() const { return diagnostics.size() - error_count(); }

uint64_t Model::total_file_bytes() const {
    uint64_t total = 0;
    for (const auto& f : files) total += f.source ? f.source->size() : 0;
    return total;
}

std::vector<uint32_t> Model::missing_files() const {
    std::vector<uint32_t> out;
    for (uint32_t f = 0; f < files.size(); ++f)
        if (!files[f].source) out.push_back(f);
    return out;
}

uint32_t Model::gguf_version() const {
    for (const SourceFile& f : files)
        if (f.source) return f.version;
    return 0;
}

Status Model::check_tensor_data(size_t index) const {
    if (index >= tensors.size()) return Error{ErrorCode::E_RANGE, "tensor", std::nullopt, "no such tensor"};
    const TensorInfo& t = tensors[index];
    if (t.presence == DataPresence::unknown) return unlocated_data_error(t);
    if (t.n_bytes && t.file < files.size() && files[t.file].source && files[t.file].source->contains(t.data_offset, *t.n_bytes))
        return ok_status();
    return Error{ErrorCode::E_TRUNCATED_DATA, "tensors", t.data_offset,
                 escape_for_display(t.name) + ": its data (" + (t.n_bytes ? std::to_string(*t.n_bytes) + " bytes" : "of unknown size") +
                     " at offset " + std::to_string(t.data_offset) + ") is not all in the file"};
}

Status Model::read_tensor_bytes(size_t index, uint64_t offset, uint64_t length, void* dst) const {
    if (index >= tensors.size()) return Error{ErrorCode::E_RANGE, "tensor", std::nullopt, "no such tensor"};
    const TensorInfo& t = tensors[index];
    if (t.presence == DataPresence::unknown) return unlocated_data_error(t);
    auto end = checked_add(offset, length);
    if (!t.n_bytes || !end || *end > *t.n_bytes) return Error{ErrorCode::E_RANGE, t.name, std::nullopt, "read outside the tensor's data"};
    if (t.file >= files.size() || !files[t.file].source) return Error{ErrorCode::E_IO, t.name, std::nullopt, "tensor file is not open"};
    const SourceFile& file = files[t.file];
    auto read = [&](uint64_t from, uint64_t n, void* out) -> Status {
        if (!file.source->read_ahead(t.data_offset + from, n, out, t.data_offset + *t.n_bytes)) {
            const std::string why = file.source->read_failure();
            return Error{ErrorCode::E_IO, "tensors", t.data_offset + from,
                         "cannot read " + std::to_string(n) + " bytes of " + escape_for_display(t.name) + (why.empty() ? "" : ": " + why)};
        }
        return ok_status();
    };
    const BlockByteOrder* order = file.block_order;
    if (!order) return read(offset, length, dst);
    if (!order->has_layout(t.type.id)) return Error{ErrorCode::E_BIG_ENDIAN_TYPE, t.name, std::nullopt, order->refusal(t.type.name)};
    // Fields are reversed block by block: a range that cuts a block reads its whole blocks.
    const uint64_t block = t.type.block_bytes;
    const uint64_t first = offset / block, last = (*end + block - 1) / block;
    if (offset % block == 0 && *end % block == 0) {
        if (Status s = read(offset, length, dst); !s) return s;
        order->reverse(t.type.id, static_cast<uint8_t*>(dst), last - first);
        return ok_status();
    }
    std::vector<uint8_t> blocks((last - first) * block);
    if (Status s = read(first * block, blocks.size(), blocks.data()); !s) return s;
    order->reverse(t.type.id, blocks.data(), last - first);
    std::memcpy(dst, blocks.data() + (offset - first * block), length);
    return ok_status();
}

bool QuantLayout::unpack_shape(const std::vector<uint64_t>& packed_ne) {
    if (packed_ne.empty() || bits == 0) return false;
    auto cols = checked_mul(packed_ne[0], 32 / bits);
    if (!cols) return false;
    logical_ne = packed_ne;
    logical_ne[0] = *cols;
    std::optional<uint64_t> n = 1;
    for (uint64_t d : logical_ne)
        if (n) n = checked_mul(*n, d);
    logical_elements = n.value_or(0);
    return true;
}

void Model::take_part(Model& part, uint32_t file) {
    files[file] = std::move(part.files[0]);
    const uint64_t first_tensor = tensors.size();
    for (Diagnostic& d : part.diagnostics) {
        d.file = file;
        if (d.tensor) *d.tensor += first_tensor;
        diagnostics.push_back(std::move(d));
    }
    for (TensorInfo& t : part.tensors) {
        t.file = file;
        tensors.push_back(std::move(t));
    }
    part.diagnostics.clear();
    part.tensors.clear();
}

}  // namespace mlens
