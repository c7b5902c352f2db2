// ErrorCode: the machine code every Error and Diagnostic carries.
//
// Contract:
//  - One enumerator per code; its name is the code's text (ErrorCode::E_TRUNCATED prints as
//    "E_TRUNCATED"), so the text in output and JSON is the same as before codes were typed.
//    E_* name violations and failures, W_* warnings (malformed-inputs.md A3 lists the reader
//    codes; the others belong to the operations that raise them), F_* the findings of fsck
//    (analysis/fsck.h); the CamelCase names are the safetensors header errors, named as the
//    reference implementation names them.
//  - code_name(code) is that text; code_from_name(text) is the inverse, nullopt for text that
//    names no code (the worker wire uses it to read codes back).
//  - is_json_syntax_code(code) is true for the codes the JSON reader raises (E_JSON_*), which
//    callers rename to the code of the document they were reading.
//  - operator<< writes the name (test reports, logs).
//  - Adding a code is one X(...) entry below; comparing codes is comparing enumerators.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace mlens {

// clang-format off
#define MLENS_ERROR_CODES(X) \
    X(E_ALIGNMENT) X(E_ALIGNMENT_TOO_LARGE) X(E_ALIGNMENT_TYPE) X(E_ARGS) X(E_ARRAY_LENGTH) X(E_BAD_DIGEST) \
    X(E_BAD_MAGIC) X(E_BAD_NAME) X(E_BAD_VERSION) X(E_BIG_ENDIAN_TYPE) X(E_BLOB_MISSING) X(E_BLOCK_MISALIGNED) \
    X(E_BLOCK_SIZE) X(E_BUSY) X(E_BYTE_SIZE_OVERFLOW) X(E_CANCELLED) X(E_CHANGED) X(E_CONFIG_JSON) \
    X(E_CONFIG_MISSING) X(E_CONFIG_TOO_LARGE) X(E_CONTEXT) X(E_COUNT) X(E_DATA_OP) X(E_DETOKENIZE) \
    X(E_DIGEST_MISMATCH) X(E_DIMS) X(E_DIM_RANGE) X(E_DUPLICATE_KEY) X(E_DUPLICATE_TENSOR) \
    X(E_ELEMENT_OVERFLOW) X(E_EMPTY_KEY) X(E_EMPTY_PROMPT) X(E_ENCODE) X(E_EOF) X(E_EXPORT_CHECK) \
    X(E_EXPORT_FOR_LOAD) X(E_FD_LIMIT) X(E_FILE_CHANGED) X(E_INDEX_JSON) X(E_INDEX_SCHEMA) X(E_INVALID) \
    X(E_INVALID_UTF8) X(E_IO) X(E_JSON_LAYER) X(E_JSON_START) X(E_JSON_SYNTAX) X(E_JSON_UTF8) \
    X(E_KEY_TOO_LONG) X(E_LIMIT) X(E_LLAMA_CONTEXT) X(E_LLAMA_DECODE) X(E_LLAMA_LOAD) X(E_LLAMA_STOPPED) \
    X(E_MANIFEST_JSON) X(E_MANIFEST_SCHEMA) X(E_MANIFEST_TOO_LARGE) X(E_NEEDS_IMATRIX) X(E_NESTED_ARRAY) \
    X(E_NOT_A_MODEL) X(E_NOT_DIRECTORY) X(E_NOT_FOUND) X(E_NOT_GGUF) X(E_NOT_LOADED) X(E_NOT_REGULAR) \
    X(E_NOT_REGULAR_FILE) X(E_NO_FONT) X(E_NO_MEMORY) X(E_NO_MODEL_LAYER) X(E_NO_TEMPLATE) X(E_NO_VISION) \
    X(E_NO_WORKER) X(E_OUTPUTS_SAME_FILE) X(E_OUTPUT_IS_INPUT) X(E_OUTPUT_NOT_REGULAR) X(E_OUTPUT_REPLACED) \
    X(E_OUTSIDE_ROOT) X(E_PARAMS_JSON) X(E_PERMISSION) X(E_PROMPT) X(E_RANGE) X(E_SAME_SESSION) X(E_SHAPE) \
    X(E_SHARD_MISSING) X(E_SHARD_NAME) X(E_SIZE_MISMATCH) X(E_SIZE_OVERFLOW) X(E_SPLIT_MISSING) \
    X(E_STORE_ROOT) X(E_STRING_LENGTH) X(E_SYMLINK_LOOP) X(E_TEMPLATE) X(E_TENSOR_MISALIGNED) \
    X(E_TENSOR_NAME_TOO_LONG) X(E_TENSOR_OFFSET) X(E_TENSOR_OUT_OF_BOUNDS) X(E_TENSOR_OVERLAP) \
    X(E_TENSOR_TYPE) X(E_TOKENIZE) X(E_TOKEN_ID) X(E_TOO_LARGE) X(E_TOO_MANY_LAYERS) X(E_TRUNCATED) \
    X(E_TRUNCATED_DATA) X(E_UNKNOWN_SIZE) X(E_UNSUPPORTED) X(E_UNSUPPORTED_TYPE) X(E_UNSUPPORTED_VERSION) \
    X(E_VALUE_TYPE) X(E_VOCAB_MISMATCH) X(E_VOCAB_ONLY) X(E_WIRE) \
    X(E_EXPERT_LAYOUT) X(E_EXPORT) X(E_IMATRIX_SHAPE) X(E_IMATRIX_VALUE) X(E_KLD_BASE) X(E_KV_TYPE) X(E_MODELFILE) X(E_NOT_IMATRIX) X(E_NO_ARCH) X(E_OUTPUT_EXISTS) X(E_OUTPUT_IN_STORE) X(E_TEXT_TOO_SHORT) X(E_USAGE) \
    X(E_EDIT_CONFLICT) X(E_EDIT_UNSUPPORTED) X(E_EDIT_VERIFY) X(E_IN_PLACE_NO_FIT) X(E_UNDO_MISMATCH) X(E_HARD_LINKED) \
    X(E_DOWNLOAD_LIMIT) X(E_HTTP) X(E_NETWORK) X(E_NO_RANGE) X(E_REMOTE_CHANGED) \
    X(W_ALIGNMENT) X(W_BAD_GROUP_SIZE) X(W_BIG_ENDIAN) X(W_BLOB_HARDLINKED) X(W_BLOB_OTHER_OWNER) \
    X(W_BLOB_WORLD_WRITABLE) X(W_BOOL_NOT_01) X(W_DEPRECATED_MEDIA_TYPE) X(W_DUPLICATE_TENSOR_NAME) \
    X(W_EMPTY_TENSOR_NAME) X(W_EXPERT_COUNT_MISMATCH) X(W_FILE_TYPE_LABEL) X(W_GGUF_V1) X(W_INDEX_MISMATCH) X(W_INVALID_NAME) \
    X(W_INVALID_UTF8) X(W_KEY_CHARSET) X(W_LEADING_WHITESPACE) X(W_LEGACY_BLOB_NAME) X(W_LLAMA_ABORT) \
    X(W_MANIFEST_MEDIA_TYPE) X(W_NONCANONICAL_LAYOUT) X(W_NONPORTABLE_NAME) X(W_NOT_CHECKED) \
    X(W_NOT_REGULAR_FILE) X(W_NO_MANIFESTS) X(W_PADDING_NONZERO) X(W_QUANT_AMBIGUOUS) X(W_QUANT_MISSING_BIAS) \
    X(W_QUANT_SHAPE_MISMATCH) X(W_QUANT_UNKNOWN) X(W_SCAN_LIMIT) X(W_SIDE_FILE_SKIPPED) X(W_SPLIT_METADATA) \
    X(W_SYMLINK_SKIPPED) X(W_TENSOR_NAME_LENGTH) X(W_TEXT_NOT_UTF8) X(W_TOKENIZER_METADATA) X(W_TRAILING_DATA) \
    X(W_UNKNOWN_FIELD) X(W_UNKNOWN_MEDIA_TYPE) X(W_UNKNOWN_QUANT_TYPE) X(W_UNKNOWN_TENSOR_TYPE) \
    X(F_BEYOND_F16) X(F_DEAD_EXPERT) X(F_DUPLICATE_EXPERT) X(F_DUPLICATE_TENSOR) X(F_INF) X(F_NAN) X(F_NOT_SCANNED) \
    X(F_READ_FAILED) X(F_SCALE_INF) X(F_SCALE_NAN) X(F_SCALE_SUBNORMAL) X(F_SCALE_ZERO) X(F_ZERO_COLUMNS) X(F_ZERO_ROWS) \
    X(F_ZERO_TENSOR) \
    X(InvalidHeader) X(InvalidHeaderStart) X(InvalidHeaderDeserialization) X(InvalidHeaderLength) X(HeaderTooSmall) X(HeaderTooLarge) \
    X(InvalidOffset) X(ValidationOverflow) X(MisalignedSlice) X(TensorInvalidInfo) X(MetadataIncompleteBuffer)
// clang-format on

enum class ErrorCode : uint16_t {
#define MLENS_ERROR_CODE_ENUMERATOR(name) name,
    MLENS_ERROR_CODES(MLENS_ERROR_CODE_ENUMERATOR)
#undef MLENS_ERROR_CODE_ENUMERATOR
};

std::string_view code_name(ErrorCode code);
std::optional<ErrorCode> code_from_name(std::string_view text);
bool is_json_syntax_code(ErrorCode code);
inline std::ostream& operator<<(std::ostream& out, ErrorCode code) { return out << code_name(code); }

}  // namespace mlens
