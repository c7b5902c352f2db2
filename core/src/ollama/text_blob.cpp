#include "mlens/ollama/text_blob.h"

#include <algorithm>

#include "mlens/formats/strict_json.h"

namespace mlens {

namespace {

// Accepts any JSON object: only the parser's own rules apply.
class AnyJson final : public JsonHandler {
public:
    bool begin_object(const JsonToken&) override { return true; }
    bool end_object(const JsonToken&) override { return true; }
    bool begin_array(const JsonToken&) override { return true; }
    bool end_array(const JsonToken&) override { return true; }
    bool key(std::string&, const JsonToken&) override { return true; }
    bool string_value(std::string&, const JsonToken&) override { return true; }
    bool unsigned_value(uint64_t, const JsonToken&) override { return true; }
    bool other_value(JsonKind, const JsonToken&) override { return true; }
    std::string field() const override { return ""; }
};

}  // namespace

Result<TextBlob> read_text_blob(const Store& store, const BlobLookup& blob, uint64_t max_bytes) {
    auto source = store.open_blob(blob);
    if (!source) return source.error();
    TextBlob out;
    out.size = (*source)->size();
    out.text.resize(static_cast<size_t>(std::min(out.size, max_bytes)));
    if (!(*source)->read(0, out.text.size(), out.text.data()))
        return Error{ErrorCode::E_IO, "", std::nullopt, blob.name + ": cannot read (the file changed or shrank)"};
    return out;
}

Status check_json_text(std::string_view text, ErrorCode code, const std::string& field) {
    AnyJson handler;
    auto parsed = parse_strict_json(text, 0, handler);
    if (parsed) return ok_status();
    const Error& e = parsed.error();
    std::string detail = e.code == ErrorCode::E_DUPLICATE_KEY ? "duplicate key: " + e.message : e.message;
    return Error{code, field, e.offset, detail};
}

}  // namespace mlens
