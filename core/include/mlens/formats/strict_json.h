// Strict JSON: an object parsed as a stream of events, under the rules malformed-inputs.md A3
// sets for safetensors headers (and, by reference, store manifests and index files).
//
// Contract:
//  - The text must be valid UTF-8; it is checked before parsing (E_JSON_UTF8 at the first
//    invalid byte). String escapes must decode to valid Unicode (no lone surrogates).
//  - Only JSON whitespace (space, tab, LF, CR) may surround the value. The first other byte must
//    be '{' (E_JSON_START, "expected an object"); empty or all-whitespace text is E_JSON_SYNTAX
//    "EOF while parsing"; anything but whitespace after the object, NUL bytes included, is
//    E_JSON_SYNTAX at its first byte. Comments,
//    single quotes, trailing commas, NaN and the like are syntax errors.
//  - Duplicate keys in any object at any depth (decoded, length-aware comparison) go to
//    JsonHandler::duplicate_key. Detection is a hash set per open object: linear time.
//  - Nesting deeper than JsonLimits::max_depth is E_LIMIT naming max_json_depth. The parser is
//    iterative; nothing recurses on the input's depth.
//  - Numbers: a non-negative integer in canonical decimal (no sign, fraction, exponent or leading
//    zero) that fits u64 arrives as unsigned_value; any other number (negative, fractional,
//    exponent, beyond u64) as other_value(JsonKind::number). A leading zero is E_JSON_SYNTAX at
//    the number.
//  - Every event carries its token's absolute byte range (`base` + position in the text), so
//    errors and Model byte ranges point into the file.
//  - Errors come back as Error with an absolute offset and field = handler.field(): E_JSON_UTF8,
//    E_JSON_START, E_JSON_SYNTAX (at the byte where parsing stopped), E_LIMIT, E_CANCELLED,
//    E_NO_MEMORY, or whatever the handler passed to reject(). No exception escapes.
//  - Time is linear in the text size; memory is the keys of the open objects plus what the
//    handler keeps. Texts of 4 GiB or more are refused (E_LIMIT, max_json_text_bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

struct JsonLimits {
    uint32_t max_depth = 128;  // max_json_depth: objects and arrays open at once
};

struct JsonToken {
    uint64_t offset = 0;  // absolute
    uint64_t length = 0;
    uint64_t end() const { return offset + length; }
};

enum class JsonKind { null, boolean, number };

// Receives the events of one parse. Each callback returns false to stop parsing; a handler that
// stops records why through reject().
class JsonHandler {
public:
    virtual ~JsonHandler() = default;

    virtual bool begin_object(const JsonToken& t) = 0;
    virtual bool end_object(const JsonToken& t) = 0;
    virtual bool begin_array(const JsonToken& t) = 0;
    virtual bool end_array(const JsonToken& t) = 0;
    virtual bool key(std::string& name, const JsonToken& t) = 0;  // t: the key's string token
    virtual bool string_value(std::string& s, const JsonToken& t) = 0;  // s decoded, t with quotes
    virtual bool unsigned_value(uint64_t v, const JsonToken& t) = 0;
    virtual bool other_value(JsonKind kind, const JsonToken& t) = 0;
    // A key already present in the object being parsed; the default rejects with E_DUPLICATE_KEY.
    virtual bool duplicate_key(const std::string& name, const JsonToken& t);
    // Field path of the current position, for errors the parser itself reports.
    virtual std::string field() const = 0;

    const std::optional<Error>& rejection() const { return m_rejection; }

protected:
    bool reject(ErrorCode code, std::string field, uint64_t offset, std::string message);

private:
    std::optional<Error> m_rejection;
};

struct JsonTextInfo {
    uint64_t leading_whitespace = 0;  // bytes of whitespace before the '{'
};

Result<JsonTextInfo> parse_strict_json(std::string_view text, uint64_t base, JsonHandler& handler, const JsonLimits& limits = {},
                                       JobContext* job = nullptr);

}  // namespace mlens
