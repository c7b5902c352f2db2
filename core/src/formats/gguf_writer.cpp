#include "mlens/formats/gguf_writer.h"

#include <algorithm>
#include <cstring>

#include "mlens/formats/gguf_byte_order.h"

#include "mlens/io/checked_math.h"
#include "mlens/model/model_inputs.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kCopyChunk = 4u << 20;

// Appends GGUF-encoded header bytes to a buffer, numbers in the chosen byte order.
class HeaderEncoder {
public:
    HeaderEncoder(std::vector<uint8_t>& out, GgufByteOrder order) : m_out(out), m_big(order == GgufByteOrder::big) {}

    bool big_endian() const { return m_big; }
    void u32(uint32_t v) { number(&v, 4); }
    void u64(uint64_t v) { number(&v, 8); }
    void raw(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        m_out.insert(m_out.end(), b, b + n);
    }
    void string(std::string_view s) {
        u64(s.size());
        raw(s.data(), s.size());
    }
    void scalar(const Scalar& s) {
        uint32_t size = value_type_size(s.type);
        uint64_t bits = s.bits;
        number(&bits, size);
    }
    size_t size() const { return m_out.size(); }

private:
    // The first `size` bytes of a little-endian number (this host's order), reversed for big-endian.
    void number(const void* p, size_t size) {
        const size_t at = m_out.size();
        raw(p, size);
        if (m_big) std::reverse(m_out.begin() + static_cast<std::ptrdiff_t>(at), m_out.end());
    }

    std::vector<uint8_t>& m_out;
    bool m_big;
};

Status copy_range(const ByteSource& src, uint64_t offset, uint64_t length, HeaderEncoder& enc) {
    std::vector<uint8_t> chunk(std::min(length, kCopyChunk));
    while (length > 0) {
        uint64_t n = std::min(length, kCopyChunk);
        if (!src.read(offset, n, chunk.data()))
            return Error{ErrorCode::E_IO, "", offset, "cannot read " + std::to_string(n) + " bytes of " + escape_for_display(src.path())};
        enc.raw(chunk.data(), n);
        offset += n;
        length -= n;
    }
    return ok_status();
}

Status encode_array(const ArrayIndex& a, HeaderEncoder& enc) {
    enc.u32(static_cast<uint32_t>(a.element_type));
    enc.u64(a.count);
    bool same_layout = a.swap_bytes == enc.big_endian() && (a.element_type != ValueType::string || a.string_length_bytes == 8);
    if (same_layout) return copy_range(*a.source, a.data_offset, a.data_length, enc);
    if (a.element_type == ValueType::string) {
        bool ok = true;
        uint64_t seen = 0;
        a.for_each_string(0, UINT64_MAX, [&](uint64_t, std::string_view s) {
            enc.string(s);
            ++seen;
            return true;
        });
        ok = seen == a.count;
        if (!ok) return Error{ErrorCode::E_IO, "", a.data_offset, "cannot read a string array element"};
        return ok_status();
    }
    for (uint64_t i = 0; i < a.count; ++i) enc.scalar(a.scalar_at(i));
    return ok_status();
}

Status encode_value(const Value& v, HeaderEncoder& enc) {
    enc.u32(static_cast<uint32_t>(v.type));
    if (v.type == ValueType::array) {
        if (!v.array) return Error{ErrorCode::E_INVALID, "", std::nullopt, "array value without elements"};
        return encode_array(*v.array, enc);
    }
    if (v.type == ValueType::string) {
        if (!v.lazy_text) {
            enc.string(v.text);
            return ok_status();
        }
        enc.u64(v.lazy_text->length);
        return copy_range(*v.lazy_text->source, v.lazy_text->offset, v.lazy_text->length, enc);
    }
    enc.scalar(v.scalar);
    return ok_status();
}

uint64_t model_alignment(const Model& model) {
    const MetadataEntry* e = model.find("general.alignment");
    if (e && e->value.type == ValueType::u32 && is_power_of_two(e->value.scalar.bits)) return e->value.scalar.bits;
    return 32;
}

void pad_to(std::vector<uint8_t>& out, uint64_t base, uint64_t alignment) {
    uint64_t rem = (base + out.size()) % alignment;
    if (rem) out.resize(out.size() + (alignment - rem), 0);
}

// ggml's writer always pads the header; gguf-py leaves a tensor-less file unpadded. A tensor-less
// Model read from a file keeps that file's choice, so both kinds round-trip byte for byte.
bool pad_after_tensor_infos(const Model& model) {
    if (!model.tensors.empty() || model.files.empty() || !model.files[0].source) return true;
    return model.files[0].source->size() > model.files[0].header_bytes;
}

// Canonical packed offsets: each tensor's data padded to the alignment, in Model order.
Result<std::vector<uint64_t>> canonical_offsets(const Model& model, uint64_t alignment) {
    std::vector<uint64_t> offsets;
    uint64_t next = 0;
    for (const TensorInfo& t : model.tensors) {
        if (!t.n_bytes)
            return Error{ErrorCode::E_UNKNOWN_SIZE, t.name, std::nullopt, "cannot write a tensor of unknown type " + t.type.name};
        offsets.push_back(next);
        auto end = checked_add(next, *t.n_bytes);
        auto aligned = end ? checked_align_up(*end, alignment) : std::nullopt;
        if (!aligned) return Error{ErrorCode::E_SIZE_OVERFLOW, t.name, std::nullopt, "tensor data size overflows"};
        next = *aligned;
    }
    return offsets;
}

}  // namespace

Result<std::vector<uint64_t>> gguf_data_offsets(const Model& model) { return canonical_offsets(model, model_alignment(model)); }

Result<std::vector<uint8_t>> gguf_header_bytes(const Model& model, GgufByteOrder order) {
    const uint64_t alignment = model_alignment(model);
    auto offsets = canonical_offsets(model, alignment);
    if (!offsets) return offsets.error();
    if (order == GgufByteOrder::big)
        for (const TensorInfo& t : model.tensors)
            if (!has_big_endian_layout(t.type.id))
                return Error{ErrorCode::E_BIG_ENDIAN_TYPE, t.name, std::nullopt, big_endian_refusal(t.type.name)};
    std::vector<uint8_t> out;
    HeaderEncoder enc(out, order);
    enc.raw("GGUF", 4);
    enc.u32(!model.files.empty() && model.files[0].version == 2 ? 2 : 3);
    enc.u64(model.tensors.size());
    enc.u64(model.metadata.size());
    for (const MetadataEntry& e : model.metadata) {
        enc.string(e.key);
        Status s = encode_value(e.value, enc);
        if (!s) return Error{s.error().code, e.key, s.error().offset, s.error().message};
    }
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        enc.string(t.name);
        enc.u32(static_cast<uint32_t>(t.ne.size()));
        for (uint64_t ne : t.ne) enc.u64(ne);
        enc.u32(t.type.id);
        enc.u64((*offsets)[i]);
    }
    if (pad_after_tensor_infos(model)) pad_to(out, 0, alignment);
    return out;
}

Result<std::vector<uint8_t>> gguf_value_bytes(const Value& value) {
    std::vector<uint8_t> out;
    HeaderEncoder enc(out, GgufByteOrder::little);
    if (Status s = encode_value(value, enc); !s) return s.error();
    return out;
}

Status write_gguf_into(SafeFileWriter& w, const Model& model, JobContext* job, const TensorDataProvider& provider, GgufByteOrder order) {
    auto header = gguf_header_bytes(model, order);
    if (!header) return header.error();
    if (Status s = w.write(header->data(), header->size()); !s) return s;

    const uint64_t alignment = model_alignment(model);
    uint64_t total = 0, done = 0;
    for (const TensorInfo& t : model.tensors) total += t.n_bytes.value_or(0);
    std::vector<uint8_t> chunk;
    static const uint8_t kZeros[64] = {};
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        const uint64_t n_bytes = *t.n_bytes;
        // Big-endian output reverses fields block by block, so its chunks hold whole blocks.
        const uint64_t block = std::max<uint64_t>(t.type.block_bytes, 1);
        const uint64_t step = order == GgufByteOrder::big ? std::max(kCopyChunk / block, uint64_t{1}) * block : kCopyChunk;
        for (uint64_t off = 0; off < n_bytes; off += step) {
            if (job_cancelled(job)) return cancelled_error("write");
            uint64_t n = std::min(step, n_bytes - off);
            chunk.resize(n);
            Status s = provider ? provider(i, off, n, chunk.data()) : model.read_tensor_bytes(i, off, n, chunk.data());
            if (!s) return s;
            if (order == GgufByteOrder::big) reverse_block_fields(t.type.id, chunk.data(), n / block);
            if (Status ws = w.write(chunk.data(), n); !ws) return ws;
            done += n;
            job_report(job, total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
        }
        uint64_t rem = w.bytes_written() % alignment;
        for (uint64_t pad = rem ? alignment - rem : 0; pad > 0;) {
            uint64_t n = std::min<uint64_t>(pad, sizeof kZeros);
            if (Status ws = w.write(kZeros, n); !ws) return ws;
            pad -= n;
        }
    }
    return ok_status();
}

Status write_gguf(const Model& model, const std::string& path, JobContext* job, const TensorDataProvider& provider, GgufByteOrder order) {
    OutputGuard guard = output_guard_for(model);
    auto file = SafeFileWriter::create(path, guard);
    if (!file) return file.error();
    if (Status s = write_gguf_into(*file, model, job, provider, order); !s) return s;
    return file->commit();
}

}  // namespace mlens
