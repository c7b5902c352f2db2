// GGUF header parsing. The rules and codes are malformed-inputs.md A3; gguf_reader.h states the
// contract. Parsing is a single forward pass through a bounded Cursor: every length is compared
// with the bytes remaining before anything is allocated, so memory is bounded by the file size.
#include "mlens/formats/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "gguf_layout_checks.h"
#include "gguf_semantic_checks.h"
#include "gguf_split.h"
#include "gguf_string_scan.h"
#include "gguf_string_split.h"
#include "name_index.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_byte_order.h"
#include "mlens/io/checked_math.h"
#include "mlens/io/cursor.h"
#include "mlens/io/source_read_error.h"
#include "mlens/text/escape.h"
#include "mlens/util/parallel.h"

namespace mlens {

namespace {

// The Model converts a big-endian file's tensor blocks through gguf_byte_order.h.
constexpr BlockByteOrder kBigEndianBlocks{
    [](uint32_t type) { return has_big_endian_layout(type); },
    [](const std::string& type_name) { return big_endian_refusal(type_name); },
    [](uint32_t type, uint8_t* blocks, uint64_t n_blocks) { reverse_block_fields(type, blocks, n_blocks); }};

constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;  // key length, 1 key byte, type, 1 value byte
constexpr uint64_t kMinKvBytesV1 = 4 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;  // name length, 1 byte, n_dims, type, offset
constexpr uint64_t kMinTensorInfoBytesV1 = 4 + 1 + 4 + 4 + 8;

// A declared count of items of at least `per_item` bytes each is plausible when it fits in the
// bytes remaining. One item more is let through, so that a file cut inside the last item it
// declares is reported as a truncation of that item (malformed-inputs.md G30) rather than as a
// bad count; loops stay bounded by the bytes remaining either way.
bool count_fits(uint64_t count, uint64_t remaining, uint64_t per_item) { return count <= remaining / per_item + 1; }

std::string indexed(const char* base, uint64_t i, const char* suffix = "") {
    return std::string(base) + "[" + std::to_string(i) + "]" + suffix;
}

// Decision: '-' is accepted besides [a-z0-9_.] because llama.cpp's own architecture names use it
// ("command-r.block_count", "nomic-bert-moe.context_length").
bool key_charset_ok(const std::string& key) {
    for (unsigned char c : key)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) return false;
    return true;
}

class GgufParser {
public:
    GgufParser(Model& model, ByteSourcePtr source, uint32_t file, const GgufLimits& limits, JobContext* job)
        : m_model(model),
          m_source(std::move(source)),
          m_file(file),
          m_limits(limits),
          m_job(job),
          m_cur(*m_source, 0),
          m_keys(model.metadata),
          m_tensor_names(model.tensors) {}

    bool run() {
        SourceFile& sf = m_model.files[m_file];
        uint64_t n_tensors = 0, n_kv = 0;
        if (!read_preamble(n_tensors, n_kv)) return false;
        sf.version = m_version;
        sf.big_endian = m_cur.swap_bytes();
        if (sf.big_endian) sf.block_order = &kBigEndianBlocks;
        for (uint64_t i = 0; i < n_kv; ++i) {
            if (!read_kv(i)) return false;
            if ((i & 4095) == 0 && cancelled()) return false;
        }
        if (!apply_alignment()) return false;
        sf.alignment = m_alignment;
        size_t first_tensor = m_model.tensors.size();
        for (uint64_t i = 0; i < n_tensors; ++i) {
            if (!read_tensor_info(i) || ((i & 1023) == 0 && cancelled())) {
                // The data section starts after the last tensor info: without it no offset is known.
                for (size_t k = first_tensor; k < m_model.tensors.size(); ++k) m_model.tensors[k].presence = DataPresence::unknown;
                return false;
            }
        }
        sf.header_bytes = m_cur.position();
        auto data_start = checked_align_up(m_cur.position(), m_alignment);
        sf.data_start = data_start.value_or(m_source->size());
        GgufLayoutContext layout{m_model, m_file, first_tensor, m_alignment, sf.header_bytes};
        return check_gguf_layout(layout);
    }

private:
    bool cancelled() {
        if (!job_cancelled(m_job)) return false;
        const Error cancelled = cancelled_error("parsing", m_cur.position());
        return fail(cancelled.code, cancelled.field, cancelled.offset, cancelled.message);
    }

    bool fail(ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        m_model.diagnostics.push_back({Severity::error, "GGUF", std::move(code), std::move(field), offset, std::move(message), m_file});
        m_model.partial = true;
        return false;
    }

    void error(ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        m_model.diagnostics.push_back({Severity::error, "GGUF", std::move(code), std::move(field), offset, std::move(message), m_file});
    }

    void warn(ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        m_model.diagnostics.push_back({Severity::warning, "GGUF", std::move(code), std::move(field), offset, std::move(message), m_file});
    }

    // A read that failed: past the end (E_TRUNCATED), or of bytes the file holds that its source
    // could not give (a remote source's download limit or network error, an I/O error): that
    // reason, with its code, never a truncation.
    bool truncated(const std::string& field, uint64_t need) {
        if (need > m_cur.remaining())
            return fail(ErrorCode::E_TRUNCATED, field, m_cur.position(),
                        "need " + std::to_string(need) + " bytes, have " + std::to_string(m_cur.remaining()));
        const Error e = source_read_error(*m_source, field, m_cur.position(), "cannot read " + std::to_string(need) + " bytes");
        return fail(e.code, e.field, e.offset, e.message);
    }

    // A count or length: u64, or u32 in GGUF v1.
    bool read_count(uint64_t& v) {
        if (m_version != 1) return m_cur.read_u64(v);
        uint32_t v32;
        if (!m_cur.read_u32(v32)) return false;
        v = v32;
        return true;
    }
    uint64_t count_bytes() const { return m_version == 1 ? 4 : 8; }

    bool read_preamble(uint64_t& n_tensors, uint64_t& n_kv) {
        std::string magic;
        if (!m_cur.read_string(magic, 4)) return truncated("magic", 4);
        if (magic != "GGUF") {
            std::string what = "expected 47 47 55 46 (\"GGUF\"), found " + hex_bytes(magic);
            if (is_legacy_ggml_magic(magic)) what += ": legacy format not supported (GGML/GGMF/GGJT/GGLA)";
            if (magic == "FUGG") what += ": byte-reversed magic; not a byte order marker (big-endian GGUF keeps the magic GGUF)";
            return fail(ErrorCode::E_BAD_MAGIC, "magic", 0, what);
        }
        uint32_t version;
        if (!m_cur.read_u32(version)) return truncated("version", 4);
        // A big-endian file's version (1..3) reads as 0xNN000000: its low 16 bits are zero.
        if (version != 0 && (version & 0xFFFF) == 0) {
            uint32_t swapped = __builtin_bswap32(version);
            if (swapped > 3)
                return fail(
                    ErrorCode::E_UNSUPPORTED_VERSION, "version", 4,
                    "version " + std::to_string(version) + " (" + std::to_string(swapped) + " read big-endian); supported: 1, 2, 3");
            m_cur.set_swap_bytes(true);
            version = swapped;
            warn(ErrorCode::W_BIG_ENDIAN, "version", 4, "big-endian file, read byte-swapped (llama.cpp reads little-endian only)");
        }
        if (version == 0) return fail(ErrorCode::E_BAD_VERSION, "version", 4, "version 0 is not valid");
        if (version > 3)
            return fail(ErrorCode::E_UNSUPPORTED_VERSION, "version", 4, "version " + std::to_string(version) + " (supported: 1, 2, 3)");
        m_version = version;
        m_model.files[m_file].version = version;  // known even when a count below fails
        if (version == 1) warn(ErrorCode::W_GGUF_V1, "version", 4, "GGUF v1 (32-bit counts and lengths); llama.cpp no longer loads it");

        uint64_t at = m_cur.position();
        if (!read_count(n_tensors)) return truncated("n_tensors", count_bytes());
        uint64_t kv_at = m_cur.position();
        if (!read_count(n_kv)) return truncated("n_kv", count_bytes());

        uint64_t rest = m_cur.remaining();
        uint64_t per_tensor = m_version == 1 ? kMinTensorInfoBytesV1 : kMinTensorInfoBytes;
        uint64_t per_kv = m_version == 1 ? kMinKvBytesV1 : kMinKvBytes;
        if (!count_fits(n_tensors, rest, per_tensor))
            return fail(ErrorCode::E_COUNT, "n_tensors", at,
                        std::to_string(n_tensors) + " exceeds max possible " + std::to_string(rest / per_tensor) + " (" +
                            std::to_string(rest) + " bytes remaining / " + std::to_string(per_tensor) + " bytes per tensor info)");
        if (!count_fits(n_kv, rest, per_kv))
            return fail(ErrorCode::E_COUNT, "n_kv", kv_at,
                        std::to_string(n_kv) + " exceeds max possible " + std::to_string(rest / per_kv) + " (" + std::to_string(rest) +
                            " bytes remaining / " + std::to_string(per_kv) + " bytes per KV)");
        if (n_tensors > m_limits.max_tensors)
            return fail(ErrorCode::E_LIMIT, "n_tensors", at,
                        std::to_string(n_tensors) + " exceeds limit max_tensors=" + std::to_string(m_limits.max_tensors));
        if (n_kv > m_limits.max_kv)
            return fail(ErrorCode::E_LIMIT, "n_kv", kv_at,
                        std::to_string(n_kv) + " exceeds limit max_kv=" + std::to_string(m_limits.max_kv));
        return true;
    }

    // A field's path, spelled out only when a diagnostic names it (a header of 10k tensors
    // would otherwise build 10k paths that no one reads).
    class FieldName {
    public:
        FieldName(const std::string& text) : m_text(&text) {}
        FieldName(const char* base, uint64_t index, const char* suffix) : m_base(base), m_index(index), m_suffix(suffix) {}
        std::string text() const { return m_text ? *m_text : indexed(m_base, m_index, m_suffix); }

    private:
        const std::string* m_text = nullptr;
        const char* m_base = nullptr;
        uint64_t m_index = 0;
        const char* m_suffix = nullptr;
    };

    // Reads a length-prefixed string into out. `cap` is the named limit for its length; a string
    // present in full but longer than the cap is rejected with `too_long_code`.
    bool read_string(const FieldName& field, std::string& out, uint64_t cap, const char* cap_name,
                     ErrorCode too_long_code = ErrorCode::E_LIMIT) {
        uint64_t len_at = m_cur.position();
        uint64_t len;
        if (!read_count(len)) return truncated(field.text(), count_bytes());
        if (len > m_cur.remaining()) {
            if (len > cap)
                return fail(ErrorCode::E_STRING_LENGTH, field.text(), len_at,
                            "length " + std::to_string(len) + " exceeds the " + std::to_string(m_cur.remaining()) + " bytes remaining");
            return truncated(field.text(), len);
        }
        if (len > cap)
            return fail(too_long_code, field.text(), len_at,
                        "length " + std::to_string(len) + " exceeds limit " + cap_name + "=" + std::to_string(cap));
        if (!m_cur.read_string(out, len)) return truncated(field.text(), len);
        return true;
    }

    bool read_scalar(ValueType type, Scalar& out) {
        out.type = type;
        switch (value_type_size(type)) {
            case 1: {
                uint8_t v;
                if (!m_cur.read_u8(v)) return false;
                out.bits = v;
                return true;
            }
            case 2: {
                uint16_t v;
                if (!m_cur.read_u16(v)) return false;
                out.bits = v;
                return true;
            }
            case 4: {
                uint32_t v;
                if (!m_cur.read_u32(v)) return false;
                out.bits = v;
                return true;
            }
            case 8:
                return m_cur.read_u64(out.bits);
            default:
                return false;
        }
    }

    bool read_value_type(const std::string& field, ValueType& type) {
        uint64_t at = m_cur.position();
        uint32_t raw;
        if (!m_cur.read_u32(raw)) return truncated(field, 4);
        if (raw >= kValueTypeCount)
            return fail(ErrorCode::E_VALUE_TYPE, field, at, "value type " + std::to_string(raw) + " (valid: 0..12)");
        type = static_cast<ValueType>(raw);
        return true;
    }

    bool read_kv(uint64_t i) {
        MetadataEntry e;
        e.file = m_file;
        uint64_t key_at = m_cur.position();
        const std::string key_field = indexed("kv", i, ".key");
        uint64_t key_len;
        if (!read_count(key_len)) return truncated(key_field, count_bytes());
        if (key_len == 0) return fail(ErrorCode::E_EMPTY_KEY, key_field, key_at, "key of length 0");
        m_cur.seek(key_at);
        if (!read_string(key_field, e.key, m_limits.max_key_bytes, "max_key_bytes", ErrorCode::E_KEY_TOO_LONG)) return false;
        e.key_range = {key_at, m_cur.position() - key_at};
        if (const size_t nul = e.key.find('\0'); nul != std::string::npos)
            warn(ErrorCode::W_KEY_CHARSET, key_field, key_at,
                 "key \"" + escape_for_display(e.key) + "\" holds a NUL byte: llama.cpp reads it as \"" +
                     escape_for_display(e.key.substr(0, nul)) + "\"");
        else if (!key_charset_ok(e.key))
            warn(ErrorCode::W_KEY_CHARSET, key_field, key_at,
                 "key \"" + escape_for_display(e.key) + "\" has characters outside [a-z0-9_.-]");
        // A duplicate is reported and kept in file order; lookups find the first occurrence.
        const bool duplicate = m_keys.contains(e.key);
        if (duplicate) error(ErrorCode::E_DUPLICATE_KEY, key_field, key_at, "\"" + escape_for_display(e.key) + "\" appears more than once");

        uint64_t type_at = m_cur.position();
        if (!read_value_type(indexed("kv", i, ".type"), e.value.type)) return false;
        e.type_range = {type_at, 4};
        uint64_t value_at = m_cur.position();
        std::optional<StringArrayCheck> element_check;
        if (e.value.type == ValueType::array) element_check = string_array_check_for(e.key);
        if (!read_value(i, e, element_check ? &*element_check : nullptr)) return false;
        e.value_range = {value_at, m_cur.position() - value_at};
        if (element_check) element_check->finish(m_model, e);
        if (e.value.is_array()) {
            e.type_range.length = e.value.array->data_offset - type_at;
            e.value_range = {e.value.array->data_offset, e.value.array->data_length};
        }
        m_model.metadata.push_back(std::move(e));
        if (!duplicate) m_keys.add(m_model.metadata.size() - 1);
        return true;
    }

    bool read_value(uint64_t i, MetadataEntry& e, StringArrayCheck* element_check) {
        Value& v = e.value;
        std::string field = indexed("kv", i, ".value");
        if (v.type == ValueType::string) return read_string_value(field, v);
        if (v.type == ValueType::array) return read_array(i, e, element_check);
        uint64_t at = m_cur.position();
        if (!read_scalar(v.type, v.scalar)) return truncated(field, value_type_size(v.type));
        if (v.type == ValueType::boolean && v.scalar.bits > 1)
            warn(ErrorCode::W_BOOL_NOT_01, field, at, "BOOL byte is " + std::to_string(v.scalar.bits) + ", not 0 or 1");
        return true;
    }

    bool read_string_value(const std::string& field, Value& v) {
        uint64_t len_at = m_cur.position();
        uint64_t len;
        if (!read_count(len)) return truncated(field, count_bytes());
        if (len > m_cur.remaining()) {
            m_cur.seek(len_at);
            std::string ignored;
            return read_string(field, ignored, m_limits.max_string_bytes, "max_string_bytes");
        }
        if (len > m_limits.max_string_bytes)
            return fail(ErrorCode::E_LIMIT, field, len_at,
                        "length " + std::to_string(len) + " exceeds limit max_string_bytes=" + std::to_string(m_limits.max_string_bytes));
        uint64_t text_at = m_cur.position();
        if (len <= Value::kInlineStringBytes) {
            if (!m_cur.read_string(v.text, len)) return truncated(field, len);
            if (!utf8_valid(v.text)) warn(ErrorCode::W_INVALID_UTF8, field, text_at, "string is not valid UTF-8");
        } else {
            v.lazy_text = LazyBytes{m_source, text_at, len};
            m_cur.skip(len);
        }
        return true;
    }

    bool read_array(uint64_t i, MetadataEntry& e, StringArrayCheck* element_check) {
        auto index = std::make_shared<ArrayIndex>();
        std::string type_field = indexed("kv", i, ".array.type");
        uint64_t elem_type_at = m_cur.position();
        uint32_t raw;
        if (!m_cur.read_u32(raw)) return truncated(type_field, 4);
        if (raw == static_cast<uint32_t>(ValueType::array))
            return fail(ErrorCode::E_NESTED_ARRAY, indexed("kv", i), elem_type_at, "array of arrays is not allowed");
        if (raw >= kValueTypeCount)
            return fail(ErrorCode::E_VALUE_TYPE, type_field, elem_type_at, "element type " + std::to_string(raw) + " (valid: 0..12)");
        index->element_type = static_cast<ValueType>(raw);
        std::string field = indexed("kv", i, ".value");
        uint64_t count_at = m_cur.position();
        if (!read_count(index->count)) return truncated(field, count_bytes());
        index->source = m_source;
        index->swap_bytes = m_cur.swap_bytes();
        index->string_length_bytes = static_cast<uint32_t>(count_bytes());
        index->data_offset = m_cur.position();
        uint64_t elem_min = index->element_type == ValueType::string ? count_bytes() : value_type_size(index->element_type);
        auto need = checked_mul(index->count, elem_min);
        if (!need || *need > m_cur.remaining())
            return fail(ErrorCode::E_ARRAY_LENGTH, field, count_at,
                        "count " + std::to_string(index->count) + " × " + std::to_string(elem_min) + " bytes > " +
                            std::to_string(m_cur.remaining()) + " bytes remaining");
        if (index->count > m_limits.max_array_elements)
            return fail(ErrorCode::E_LIMIT, field, count_at,
                        "count " + std::to_string(index->count) +
                            " exceeds limit max_array_elements=" + std::to_string(m_limits.max_array_elements));
        if (index->element_type == ValueType::string) {
            if (!index_string_elements(field, *index, element_check)) return false;
        } else {
            if (index->element_type == ValueType::boolean) check_bool_array(field, *index);
            m_cur.skip(*need);
        }
        index->data_length = m_cur.position() - index->data_offset;
        e.value.array = std::move(index);
        return true;
    }

    void check_bool_array(const std::string& field, const ArrayIndex& index) {
        for (uint64_t k = 0; k < index.count; ++k) {
            const uint8_t* b = m_cur.peek(1);
            uint64_t at = m_cur.position();
            if (b && *b > 1) {
                warn(ErrorCode::W_BOOL_NOT_01, field + "[" + std::to_string(k) + "]", at,
                     "BOOL byte is " + std::to_string(*b) + ", not 0 or 1");
                break;
            }
            m_cur.skip(1);
        }
        m_cur.seek(index.data_offset);
    }

    // Records where each element of a STRING array starts, checks its length, and checks the
    // text: valid UTF-8 (the first invalid element is reported) and the key's element check.
    // Elements that lie wholly in a window read at their start are scanned in place there
    // (gguf_string_scan.h); any other element, and every element that breaks a rule, goes
    // through index_one_string, which reports what is wrong. After the first window, an array
    // estimated to hold kSplitMinBytes more is scanned in two parts at once (scan_in_two_parts).
    bool index_string_elements(const std::string& field, ArrayIndex& index, StringArrayCheck* element_check) {
        index.string_offsets = StringOffsets(index.data_offset, index.count);  // bounded: count × 4 <= bytes remaining
        StringScan scan{field, index, element_check};
        uint64_t k = 0;
        if (!scan_elements(scan, k, index.data_offset + kScanWindowBytes, index.count)) return false;
        if (!scan_in_two_parts(scan, k)) return false;
        return scan_elements(scan, k, UINT64_MAX, index.count);
    }

    static constexpr uint64_t kCancelCheckMask = 65535;  // the job is asked after each 65,536 elements
    static constexpr uint64_t kScanWindowBytes = 256 << 10;  // stays in the core's cache between the read and the scan
    static constexpr uint64_t kSplitMinBytes = 1 << 20;
    static constexpr uint64_t kTailMargin = 4096;
    static constexpr double kTailSlotShare = 0.6;

    struct StringScan {
        const std::string& field;
        ArrayIndex& index;
        StringArrayCheck* element_check;
        bool warned_utf8 = false;
    };

    // Indexes elements from k on, up to element_end, while they start before byte_end; false once
    // one breaks a rule (reported) or the job is cancelled.
    bool scan_elements(StringScan& scan, uint64_t& k, uint64_t byte_end, uint64_t element_end) {
        while (k < element_end && m_cur.position() < byte_end) {
            const uint64_t stop = std::min(element_end, (k | kCancelCheckMask) + 1);
            k = scan_buffered_strings(scan, k, stop, byte_end);
            if (k < stop && m_cur.position() < byte_end && !index_one_string(scan, k++)) return false;
            if ((k & kCancelCheckMask) == 0 && job_cancelled(m_job)) return cancelled();
        }
        return true;
    }

    // With the first elements scanned, an array of 8-byte little-endian lengths in a file (a
    // source with a file's identity: a read costs a copy out of the page cache, whereas a remote
    // source fetches ahead in order) estimated (from its first elements' mean size) to hold
    // kSplitMinBytes more is scanned in two parts: this thread (the head) scans up to about the
    // middle of what remains while a second one scans a StringArrayTail from there
    // (gguf_string_split.h), then takes the tail's elements where its own scan arrives at one.
    // The tail writes its offsets straight into the table, from a guess of its first element's
    // index above the estimate (kTailSlotShare of what remains), and the head writes below that
    // slot; the tail's elements that do not fit above it go to a buffer of its own. They are moved
    // down to where they belong once. A head that has more elements than guessed moves the tail's
    // offsets to the table's end to go on, keeping all but the tail's last kTailMargin elements
    // (it may have read on past the array, and the head goes on with any element not taken).
    bool scan_in_two_parts(StringScan& scan, uint64_t& k) {
        ArrayIndex& index = scan.index;
        const uint64_t count = index.count;
        if (k == 0 || k >= count || m_version == 1 || m_cur.swap_bytes() || !m_source->stamp()) return true;
        const uint64_t done_bytes = m_cur.position() - index.data_offset;
        const double rest_estimate = static_cast<double>(done_bytes) / static_cast<double>(k) * static_cast<double>(count - k);
        if (rest_estimate < kSplitMinBytes || rest_estimate / 2 >= static_cast<double>(m_cur.remaining())) return true;
        const uint64_t from = m_cur.position() + static_cast<uint64_t>(rest_estimate / 2);
        const uint64_t tail_slot = k + static_cast<uint64_t>(static_cast<double>(count - k) * kTailSlotShare);
        uint32_t* const table = index.string_offsets.next_slots() - k;  // slot i of the table
        std::optional<StringArrayCheck> tail_check;
        if (scan.element_check) tail_check = scan.element_check->fresh();
        StringArrayTail tail(*m_source, index.data_offset, from, m_limits.max_string_bytes, count - k, table + tail_slot, count - tail_slot,
                             std::move(tail_check), m_job);
        bool head_ok = true;
        parallel_for(2, 2, [&](uint64_t part) {
            if (part == 1) {
                tail.scan();
                return true;
            }
            head_ok = scan_elements(scan, k, from, tail_slot);
            return head_ok;
        });
        if (!head_ok) return false;
        if (tail.count() == 0) return true;
        uint64_t head_end = tail_slot;
        if (!scan_elements(scan, k, tail.start(), head_end)) return false;  // the tail's first element may lie past `from`
        if (m_cur.position() < tail.start() && k == head_end && tail.in_place() > kTailMargin && count - tail.in_place() > head_end) {
            head_end = count - tail.in_place() + kTailMargin;
            const uint64_t kept = tail.in_place() - kTailMargin;
            const uint32_t* const moved = tail.slots();
            tail.first_moving_to(table + head_end, kept);
            std::memmove(table + head_end, moved, kept * sizeof(uint32_t));
            if (!scan_elements(scan, k, tail.start(), head_end)) return false;
        }
        take_tail(scan, tail, k);
        return true;
    }

    // The tail's elements from the one at the cursor, when there is one and the tail saw nothing
    // wrong before it: they become elements k, k+1, ... (at most the array's count).
    void take_tail(StringScan& scan, const StringArrayTail& tail, uint64_t& k) {
        StringOffsets& offsets = scan.index.string_offsets;
        const std::optional<uint64_t> first = tail.index_of(m_cur.position());
        const std::optional<uint64_t> bad_text = scan.warned_utf8 ? std::nullopt : tail.first_invalid_utf8();
        const std::optional<uint64_t> failed = tail.first_check_failure();
        if ((bad_text && *bad_text < *first) || (failed && *failed < *first)) return;
        const uint64_t n = std::min({tail.count() - *first, scan.index.count - k, offsets.free_slots()});
        // The tail's offsets are read before the move, which may write over them.
        const bool warn_utf8 = bad_text && *bad_text < *first + n;
        const uint64_t bad_text_at = warn_utf8 ? tail.offset(*bad_text) : 0;
        const uint64_t first_at = tail.offset(*first), last_at = tail.offset(*first + n - 1), end_at = tail.offset(*first + n);
        tail.copy_to(offsets.next_slots(), *first, n);
        offsets.commit(n, first_at, last_at);
        if (warn_utf8) {
            warn(ErrorCode::W_INVALID_UTF8, indexed(scan.field.c_str(), k + *bad_text - *first), bad_text_at, "string is not valid UTF-8");
            scan.warned_utf8 = true;
        }
        if (failed && *failed < *first + n) scan.element_check->note_failure(k + *failed - *first);
        m_cur.seek(end_at);
        k += n;
    }

    // Scans elements [k, stop) that start before byte_end while each lies wholly in a window read
    // at its start and within the limits; returns the first element not scanned. Each window is
    // read once (an element cut by its end starts the next one).
    uint64_t scan_buffered_strings(StringScan& scan, uint64_t k, uint64_t stop, uint64_t byte_end) {
        StringOffsets& offsets = scan.index.string_offsets;
        while (k < stop && m_cur.remaining() >= count_bytes() && m_cur.position() < byte_end) {
            const uint64_t window_at = m_cur.position();
            // Near byte_end, little more than the elements that start before it is read.
            const uint64_t to_end = byte_end - window_at;
            const uint64_t available =
                std::min({kScanWindowBytes, m_cur.remaining(), to_end > kScanWindowBytes ? to_end : to_end + kScanPieceBytes});
            if (!m_scan_window) m_scan_window.reset(new uint8_t[kScanWindowBytes]);  // not zero-filled: read into first
            if (!m_source->read(window_at, available, m_scan_window.get())) break;
            const BufferedStrings window{m_scan_window.get(), window_at,      available, static_cast<uint32_t>(count_bytes()),
                                         m_cur.swap_bytes(),  offsets.base(), byte_end};
            uint32_t* const slots = offsets.next_slots();
            const WindowScan scanned = scan_window(window, m_limits.max_string_bytes, std::min(stop - k, offsets.free_slots()), k, slots,
                                                   scan.element_check, !scan.warned_utf8);
            if (scanned.count == 0) break;
            // The first element starts the window; the others lie less than a window after it.
            auto offset_of = [&](uint64_t i) { return window_at + static_cast<uint32_t>(slots[i] - slots[0]); };
            if (scanned.first_invalid_utf8) {
                warn(ErrorCode::W_INVALID_UTF8, indexed(scan.field.c_str(), k + *scanned.first_invalid_utf8),
                     offset_of(*scanned.first_invalid_utf8), "string is not valid UTF-8");
                scan.warned_utf8 = true;
            }
            offsets.commit(scanned.count, window_at, offset_of(scanned.count - 1));
            k += scanned.count;
            m_cur.skip(scanned.bytes);
        }
        return k;
    }

    // Element k, read field by field: reports a length past the end or over the limit, checks a
    // text that fits in the window (a longer one is not checked: no window holds it).
    bool index_one_string(StringScan& scan, uint64_t k) {
        const std::string& field = scan.field;
        uint64_t at = m_cur.position();
        uint64_t len;
        if (!read_count(len)) return truncated(indexed(field.c_str(), k), count_bytes());
        if (len > m_cur.remaining()) {
            if (len > m_limits.max_string_bytes)
                return fail(ErrorCode::E_STRING_LENGTH, indexed(field.c_str(), k), at,
                            "length " + std::to_string(len) + " exceeds the " + std::to_string(m_cur.remaining()) + " bytes remaining");
            return truncated(indexed(field.c_str(), k), len);
        }
        if (len > m_limits.max_string_bytes)
            return fail(
                ErrorCode::E_LIMIT, indexed(field.c_str(), k), at,
                "length " + std::to_string(len) + " exceeds limit max_string_bytes=" + std::to_string(m_limits.max_string_bytes));
        if (len <= Cursor::kWindowBytes && (!scan.warned_utf8 || scan.element_check)) {
            const uint8_t* p = m_cur.peek(len);
            if (p && !scan.warned_utf8 && !utf8_valid(p, len)) {
                warn(ErrorCode::W_INVALID_UTF8, indexed(field.c_str(), k), at, "string is not valid UTF-8");
                scan.warned_utf8 = true;
            }
            if (p && scan.element_check)
                scan.element_check->visit(
                    k, std::string_view(reinterpret_cast<const char*>(p), std::min(len, StringArrayCheck::kMaxVisitBytes)));
        }
        m_cur.skip(len);
        scan.index.string_offsets.append(at);
        return true;
    }

    bool apply_alignment() {
        for (const MetadataEntry& e : m_model.metadata) {
            if (e.file != m_file || e.key != "general.alignment") continue;
            if (e.value.type != ValueType::u32)
                return fail(ErrorCode::E_ALIGNMENT_TYPE, "general.alignment", e.type_range.offset,
                            std::string("declared ") + value_type_name(e.value.type) + ", must be UINT32");
            uint64_t a = e.value.scalar.bits;
            if (!is_power_of_two(a))
                return fail(ErrorCode::E_ALIGNMENT, "general.alignment", e.value_range.offset,
                            std::to_string(a) + " is not a power of two");
            if (a > m_limits.max_alignment)
                return fail(ErrorCode::E_ALIGNMENT_TOO_LARGE, "general.alignment", e.value_range.offset,
                            std::to_string(a) + " exceeds limit max_alignment=" + std::to_string(m_limits.max_alignment));
            if (a < 8)
                warn(ErrorCode::W_ALIGNMENT, "general.alignment", e.value_range.offset,
                     std::to_string(a) + " is unusual (spec: a multiple of 8)");
            m_alignment = a;
            break;
        }
        return true;
    }

    bool read_tensor_info(uint64_t i) {
        TensorInfo t;
        t.file = m_file;
        uint64_t start = m_cur.position();
        const FieldName name_field("tensors", i, ".name");
        if (!read_string(name_field, t.name, m_limits.max_tensor_name_bytes, "max_tensor_name_bytes", ErrorCode::E_TENSOR_NAME_TOO_LONG))
            return false;
        if (t.name.size() == m_limits.max_tensor_name_bytes)
            warn(ErrorCode::W_TENSOR_NAME_LENGTH, name_field.text(), start, "64-byte name: llama.cpp needs fewer than 64 bytes");
        if (t.name.empty()) warn(ErrorCode::W_EMPTY_TENSOR_NAME, name_field.text(), start, "empty tensor name");
        if (!utf8_valid(t.name)) warn(ErrorCode::W_INVALID_UTF8, name_field.text(), start, "tensor name is not valid UTF-8");
        const bool duplicate = m_tensor_names.contains(t.name);
        if (duplicate)
            error(ErrorCode::E_DUPLICATE_TENSOR, name_field.text(), start, "\"" + escape_for_display(t.name) + "\" appears more than once");

        uint64_t dims_at = m_cur.position();
        uint32_t n_dims;
        if (!m_cur.read_u32(n_dims)) return truncated(indexed("tensors", i, ".n_dims"), 4);
        if (n_dims > m_limits.max_tensor_dims)
            return fail(ErrorCode::E_DIMS, indexed("tensors", i, ".n_dims"), dims_at,
                        std::to_string(n_dims) + " dimensions (at most " + std::to_string(m_limits.max_tensor_dims) + ")");
        uint64_t ne_at = m_cur.position();
        t.n_elements = 1;
        bool overflow = false;
        for (uint32_t j = 0; j < n_dims; ++j) {
            auto ne_field = [&] { return indexed("tensors", i, (".ne[" + std::to_string(j) + "]").c_str()); };
            uint64_t at = m_cur.position();
            uint64_t ne;
            if (!read_count(ne)) return truncated(ne_field(), count_bytes());
            if (ne >= (1ull << 63)) return fail(ErrorCode::E_DIM_RANGE, ne_field(), at, std::to_string(ne) + " is not below 2^63");
            t.ne.push_back(ne);
            auto product = checked_mul(t.n_elements, ne);
            overflow = overflow || !product;
            t.n_elements = product.value_or(0);
        }
        if (overflow || t.n_elements > static_cast<uint64_t>(INT64_MAX))
            return fail(ErrorCode::E_ELEMENT_OVERFLOW, indexed("tensors", i, ".ne"), ne_at, "element count overflows 64 bits");

        uint64_t type_at = m_cur.position();
        uint32_t type_id;
        if (!m_cur.read_u32(type_id)) return truncated(indexed("tensors", i, ".type"), 4);
        if (type_id >= 0x80000000u)
            return fail(ErrorCode::E_TENSOR_TYPE, indexed("tensors", i, ".type"), type_at,
                        "type id " + std::to_string(type_id) + " is not a ggml type");
        t.type = describe_ggml_type(type_id);
        if (!t.type.known) {
            warn(ErrorCode::W_UNKNOWN_TENSOR_TYPE, indexed("tensors", i, ".type"), type_at,
                 "type id " + std::to_string(type_id) + " is unknown to the pinned ggml; size unknown");
        } else {
            if (m_cur.swap_bytes() && !has_big_endian_layout(type_id))
                error(ErrorCode::E_BIG_ENDIAN_TYPE, indexed("tensors", i, ".type"), type_at,
                      escape_for_display(t.name) + ": " + big_endian_refusal(t.type.name));
            uint64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
            if (ne0 % t.type.block_size != 0)
                return fail(
                    ErrorCode::E_BLOCK_MISALIGNED, indexed("tensors", i, ".ne[0]"), ne_at,
                    std::to_string(ne0) + " is not a multiple of " + t.type.name + "'s block size " + std::to_string(t.type.block_size));
            t.n_bytes = ggml_tensor_bytes(t.type, ne0, t.n_elements);
            if (!t.n_bytes) return fail(ErrorCode::E_BYTE_SIZE_OVERFLOW, indexed("tensors", i), start, "byte size does not fit in 64 bits");
        }
        if (!m_cur.read_u64(t.relative_offset)) return truncated(indexed("tensors", i, ".offset"), 8);
        t.info_range = {start, m_cur.position() - start};
        m_model.tensors.push_back(std::move(t));
        if (!duplicate) m_tensor_names.add(m_model.tensors.size() - 1);
        return true;
    }

    Model& m_model;
    ByteSourcePtr m_source;
    uint32_t m_file;
    const GgufLimits& m_limits;
    JobContext* m_job;
    Cursor m_cur;
    uint32_t m_version = 3;
    uint64_t m_alignment = 32;
    NameIndex<MetadataEntry, &MetadataEntry::key> m_keys;
    NameIndex<TensorInfo, &TensorInfo::name> m_tensor_names;
    std::unique_ptr<uint8_t[]> m_scan_window;  // what scan_buffered_strings reads: kScanWindowBytes
};

}  // namespace

bool is_legacy_ggml_magic(std::string_view magic) {
    static const char* const kLegacy[] = {"lmgg", "fmgg", "tjgg", "algg", "ggml", "ggmf", "ggjt", "ggla"};
    for (const char* l : kLegacy)
        if (magic == l) return true;
    return false;
}

bool read_gguf_into(Model& model, ByteSourcePtr source, uint32_t file_index, const GgufLimits& limits, JobContext* job) {
    if (model.files.size() <= file_index) model.files.resize(file_index + 1);
    model.files[file_index].path = source->path();
    model.files[file_index].source = source;
    model.format = Format::gguf;
    GgufParser parser(model, std::move(source), file_index, limits, job);
    bool ok = parser.run();
    return ok;
}

Model read_gguf(ByteSourcePtr source, const GgufLimits& limits, JobContext* job) {
    Model model;
    if (read_gguf_into(model, std::move(source), 0, limits, job)) check_gguf_semantics(model, limits);
    return model;
}

Model read_gguf_with_siblings(ByteSourcePtr source, const GgufLimits& limits, JobContext* job) {
    const std::string path = source->path();
    Model model;
    if (!read_gguf_into(model, std::move(source), 0, limits, job)) return model;
    if (!open_split_siblings(model, path, limits, job)) return model;
    check_gguf_semantics(model, limits);
    return model;
}

std::optional<Model> read_split_model_with_part(ByteSourcePtr part, const std::string& part_path, const GgufLimits& limits,
                                                JobContext* job) {
    const std::optional<SplitName> name = parse_split_name(part_path);
    if (!name) return std::nullopt;
    Model model;
    if (read_gguf_into(model, std::move(part), 0, limits, job) && open_split_siblings(model, part_path, limits, job))
        check_gguf_semantics(model, limits);
    if (model.files.size() == 1) return std::nullopt;  // read alone: no part of a split model
    // The part stands where part_path is, whatever its source is named (a temporary, an overlay).
    if (name->number - 1 < model.files.size()) model.files[name->number - 1].path = part_path;
    model.opened_file = 0;
    return model;
}

Result<Model> open_gguf(const std::string& path, const GgufLimits& limits, JobContext* job) {
    auto source = open_file(path);
    if (!source) return source.error();
    return read_gguf_with_siblings(*source, limits, job);
}

}  // namespace mlens
