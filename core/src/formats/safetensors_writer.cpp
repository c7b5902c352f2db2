#include "mlens/formats/safetensors_writer.h"

#include <unordered_set>
#include <vector>

#include "keyed_hash.h"
#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_limits.h"
#include "mlens/io/checked_math.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/model/model_inputs.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kCopyChunk = 4u << 20;
constexpr uint64_t kLengthBytes = 8;

void append_json_string(std::string& out, std::string_view s) {
    static const char kHex[] = "0123456789abcdef";
    out += '"';
    for (char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    out += "\\u00";
                    out += kHex[(c >> 4) & 0xF];
                    out += kHex[c & 0xF];
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

bool written_as_metadata(const MetadataEntry& e) { return e.value.is_string() && !e.key.starts_with("file:"); }

Error invalid_utf8(const std::string& what) {
    return Error{ErrorCode::E_INVALID_UTF8, what, std::nullopt,
                 "\"" + escape_for_display(what) + "\" is not valid UTF-8 and cannot be JSON text"};
}

Result<std::string> metadata_json(const Model& model) {
    std::string out;
    std::unordered_set<std::string, KeyedHash> keys;
    for (const MetadataEntry& e : model.metadata) {
        if (!written_as_metadata(e)) continue;
        if (!keys.insert(e.key).second)
            return Error{ErrorCode::E_DUPLICATE_KEY, "__metadata__", std::nullopt,
                         "metadata key \"" + escape_for_display(e.key) + "\" appears twice"};
        std::string value = e.value.string_value();
        if (e.value.lazy_text && value.size() != e.value.lazy_text->length)
            return Error{ErrorCode::E_IO, escape_for_display(e.key), e.value.lazy_text->offset, "cannot read the metadata value"};
        if (!utf8_valid(e.key)) return invalid_utf8(e.key);
        if (!utf8_valid(value))
            return Error{ErrorCode::E_INVALID_UTF8, escape_for_display(e.key), std::nullopt, "the value is not valid UTF-8"};
        out += out.empty() ? "{" : ",";
        append_json_string(out, e.key);
        out += ':';
        append_json_string(out, value);
    }
    return out.empty() ? out : out + "}";
}

Status tensor_json(std::string& out, const TensorInfo& t, uint64_t begin, uint64_t& end) {
    const std::string name = escape_for_display(t.name, 64);
    auto dtype = safetensors_dtype_from_name(t.type.name);
    if (!dtype) return Error{ErrorCode::E_UNSUPPORTED_TYPE, name, std::nullopt, "type " + t.type.name + " is not a safetensors dtype"};
    std::optional<uint64_t> bits = checked_mul(t.n_elements, safetensors_dtype_bits(*dtype));
    if (!t.n_bytes || !bits || *bits != *t.n_bytes * 8)
        return Error{ErrorCode::E_UNSUPPORTED_TYPE, name, std::nullopt,
                     "the size of this " + t.type.name + " tensor is not its elements' size"};
    auto next = checked_add(begin, *t.n_bytes);
    if (!next) return Error{ErrorCode::E_SIZE_OVERFLOW, name, std::nullopt, "tensor data size overflows"};
    end = *next;
    if (out.size() > 1) out += ',';
    append_json_string(out, t.name);
    out += ":{\"dtype\":\"";
    out += safetensors_dtype_name(*dtype);
    out += "\",\"shape\":[";
    for (size_t i = t.ne.size(); i-- > 0;) {
        out += std::to_string(t.ne[i]);
        if (i > 0) out += ',';
    }
    out += "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
    return ok_status();
}

}  // namespace

Result<std::string> safetensors_header_text(const Model& model) {
    auto metadata = metadata_json(model);
    if (!metadata) return metadata.error();
    std::string out = "{";
    if (!metadata->empty()) out += "\"__metadata__\":" + *metadata;
    std::unordered_set<std::string, KeyedHash> names;
    uint64_t offset = 0;
    for (const TensorInfo& t : model.tensors) {
        if (!utf8_valid(t.name)) return invalid_utf8(t.name);
        if (t.name == "__metadata__" || !names.insert(t.name).second)
            return Error{ErrorCode::E_DUPLICATE_KEY, escape_for_display(t.name, 64), std::nullopt,
                         "\"" + escape_for_display(t.name) + "\" is reserved or names two tensors"};
        uint64_t end = 0;
        if (Status s = tensor_json(out, t, offset, end); !s) return s.error();
        offset = end;
    }
    out += '}';
    out.append((kLengthBytes - (kLengthBytes + out.size()) % kLengthBytes) % kLengthBytes, ' ');
    const SafetensorsLimits limits;
    if (out.size() > limits.max_header_bytes)
        return Error{ErrorCode::E_LIMIT, "header", std::nullopt,
                     "the header would have " + std::to_string(out.size()) +
                         " bytes, over limit max_header_bytes=" + std::to_string(limits.max_header_bytes)};
    return out;
}

Status write_safetensors(const Model& model, const std::string& path, JobContext* job) {
    auto header = safetensors_header_text(model);
    if (!header) return header.error();
    OutputGuard guard = output_guard_for(model);
    auto file = SafeFileWriter::create(path, guard);
    if (!file) return file.error();
    SafeFileWriter& w = *file;
    uint8_t length[kLengthBytes];
    for (uint64_t i = 0, n = header->size(); i < kLengthBytes; ++i, n >>= 8) length[i] = static_cast<uint8_t>(n);
    if (Status s = w.write(length, kLengthBytes); !s) return s;
    if (Status s = w.write(header->data(), header->size()); !s) return s;

    uint64_t total = 0, done = 0;
    for (const TensorInfo& t : model.tensors) total += *t.n_bytes;  // sizes checked by the header
    std::vector<uint8_t> chunk;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const uint64_t n_bytes = *model.tensors[i].n_bytes;
        for (uint64_t off = 0; off < n_bytes; off += kCopyChunk) {
            if (job_cancelled(job)) return cancelled_error("write");
            uint64_t n = std::min(kCopyChunk, n_bytes - off);
            chunk.resize(n);
            if (Status s = model.read_tensor_bytes(i, off, n, chunk.data()); !s) return s;
            if (Status s = w.write(chunk.data(), n); !s) return s;
            done += n;
            job_report(job, total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
        }
    }
    return w.commit();
}

}  // namespace mlens
