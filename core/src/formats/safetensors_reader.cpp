// One safetensors file: the length prefix, then the header through the strict JSON parser and
// the schema handler, then sizes and layout. safetensors_reader.h states the contract.
#include "mlens/formats/safetensors_reader.h"

#include <algorithm>
#include <iterator>

#include "mlens/io/checked_math.h"
#include "mlens/io/source_read_error.h"
#include "safetensors_header.h"
#include "safetensors_layout.h"

namespace mlens {

namespace {

constexpr uint64_t kLengthBytes = 8;

bool is_json_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

uint64_t load_u64_le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// The strict JSON layer's generic codes, renamed as the reference implementation names them.
ErrorCode header_code(ErrorCode code) {
    if (code == ErrorCode::E_JSON_UTF8) return ErrorCode::InvalidHeader;
    if (code == ErrorCode::E_JSON_START) return ErrorCode::InvalidHeaderStart;
    if (code == ErrorCode::E_JSON_SYNTAX) return ErrorCode::InvalidHeaderDeserialization;
    return code;
}

template <typename T>
void append(std::vector<T>& to, std::vector<T>&& from) {
    if (to.empty())
        to = std::move(from);
    else
        to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

bool looks_like_safetensors(const ByteSource& source) {
    uint8_t head[64];
    uint64_t n = std::min<uint64_t>(source.size(), sizeof head);
    if (n < kLengthBytes || !source.read(0, n, head)) return false;
    if ((load_u64_le(head) >> 32) == 0) return true;
    uint64_t i = kLengthBytes;
    while (i < n && is_json_space(head[i])) ++i;
    return i < n && head[i] == '{';
}

bool read_safetensors_into(Model& model, ByteSourcePtr source, uint32_t file, const SafetensorsLimits& limits, JobContext* job) {
    if (model.files.size() <= file) model.files.resize(file + 1);
    SourceFile& sf = model.files[file];
    sf.path = source->path();
    sf.source = source;
    sf.alignment = 1;
    model.format = Format::safetensors;
    auto diagnose = [&](Severity severity, ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        model.diagnostics.push_back({severity, "safetensors", std::move(code), std::move(field), offset, std::move(message), file});
    };
    auto fail = [&](ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        diagnose(Severity::error, std::move(code), std::move(field), offset, std::move(message));
        model.partial = true;
        return false;
    };
    auto fail_with = [&](const Error& e) { return fail(e.code, e.field, e.offset, e.message); };

    const uint64_t size = source->size();
    if (size < kLengthBytes)
        return fail(ErrorCode::HeaderTooSmall, "header", 0,
                    "the file has " + std::to_string(size) + " bytes; the header length alone needs 8");
    uint8_t prefix[kLengthBytes];
    // A read the source refused (a remote file past the download limit) is its reason, never a length.
    if (!source->read(0, kLengthBytes, prefix)) return fail_with(source_read_error(*source, "header", 0, "cannot read the header length"));
    const uint64_t n = load_u64_le(prefix);
    if (n > limits.max_header_bytes)
        return fail(ErrorCode::HeaderTooLarge, "header", 0,
                    "header length " + std::to_string(n) + " exceeds limit max_header_bytes=" + std::to_string(limits.max_header_bytes));
    auto data_start = checked_add(kLengthBytes, n);
    if (!data_start || *data_start > size)
        return fail(ErrorCode::InvalidHeaderLength, "header", 0,
                    "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) + " bytes)");
    sf.data_start = sf.header_bytes = *data_start;

    const size_t first = model.tensors.size();
    std::vector<SafetensorsEntry> entries;
    Result<JsonTextInfo> parsed = JsonTextInfo{};
    {
        std::string text(n, '\0');  // n <= max_header_bytes and <= the file size
        if (!source->read(kLengthBytes, n, text.data()))
            return fail_with(source_read_error(*source, "header", kLengthBytes, "cannot read the header"));
        SafetensorsHeaderHandler handler(text, kLengthBytes, source, file, limits);
        parsed = parse_strict_json(text, kLengthBytes, handler, JsonLimits{limits.max_json_depth}, job);
        append(model.metadata, std::move(handler.metadata));
        append(model.tensors, std::move(handler.tensors));
        append(model.diagnostics, std::move(handler.warnings));
        entries = std::move(handler.entries);
    }
    size_safetensors_tensors(model, first, entries, *data_start);
    if (!parsed) {
        const Error& e = parsed.error();
        return fail(header_code(e.code), e.field, e.offset, e.message);
    }
    if (parsed->leading_whitespace > 0)
        diagnose(Severity::warning, ErrorCode::W_LEADING_WHITESPACE, "header", kLengthBytes,
                 std::to_string(parsed->leading_whitespace) + " bytes of whitespace before the '{' that should begin the header");
    return check_safetensors_layout(model, file, first, entries, *data_start);
}

Model read_safetensors(ByteSourcePtr source, const SafetensorsLimits& limits, JobContext* job) {
    Model model;
    read_safetensors_into(model, std::move(source), 0, limits, job);
    return model;
}

Result<Model> open_safetensors(const std::string& path, const SafetensorsLimits& limits, JobContext* job) {
    auto source = open_file(path);
    if (!source) return source.error();
    return read_safetensors(*source, limits, job);
}

std::vector<uint64_t> shape_row_major(const TensorInfo& t) { return {t.ne.rbegin(), t.ne.rend()}; }

}  // namespace mlens
