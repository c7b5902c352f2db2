// Model: the one format-neutral structure every reader produces and every view consumes.
//
// Contract:
//  - A Model owns the ByteSources of its files (several for split GGUFs and sharded
//    safetensors), so tensor bytes and lazy values stay readable as long as the Model lives.
//  - metadata keeps file order; tensors keep file order (shards in shard order).
//  - A damaged file still yields a Model: everything that parsed completely is present, `partial`
//    is true when parsing stopped early, and the reason is an error Diagnostic. Nothing
//    half-parsed is exposed.
//  - Every header field that came from a file records its absolute byte range there.
//  - Quantized tensors stored as several entries (Ollama/MLX tensor blobs: packed `T`, `T.scale`,
//    `T.bias`, `T.global_scale`) stay separate TensorInfos, as stored. The packed entry carries
//    `quant`, the logical view (quantization type, group size, unpacked shape, its companions);
//    each companion names the packed entry in `part_of`. Readers without such tensors leave both
//    empty.
//  - `groups` gathers tensors that belong together beyond their names, e.g. the experts of one
//    MoE layer (packed per expert or stacked): a kind, how it is laid out, how many items
//    (experts) it holds, and its member tensors. Empty for formats without groups.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/byte_source.h"
#include "mlens/model/diagnostic.h"
#include "mlens/model/value.h"

namespace mlens {

enum class Format { gguf, safetensors, unknown };
const char* format_name(Format f);
// The format with its version where the format has one: "GGUF v3"; "safetensors" (unversioned);
// "GGUF" for version 0, a GGUF none of whose files was read (a store's missing blob).
std::string format_and_version(Format f, uint32_t version);

struct ByteRange {
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t end() const { return offset + length; }
};

// How the tensor blocks of a file stored in another byte order become ggml's (little-endian)
// layout, given by the reader of such a file (a big-endian GGUF: gguf_byte_order.h), so that the
// Model reads them without knowing the format.
struct BlockByteOrder {
    bool (*has_layout)(uint32_t ggml_type);  // whether blocks of this type can be converted
    std::string (*refusal)(const std::string& type_name);  // why blocks of this type cannot
    void (*reverse)(uint32_t ggml_type, uint8_t* blocks, uint64_t n_blocks);  // converts in place
};

struct SourceFile {
    std::string path;
    ByteSourcePtr source;
    uint32_t version = 0;  // GGUF version
    bool big_endian = false;
    const BlockByteOrder* block_order = nullptr;  // set with big_endian; null: stored as ggml lays out
    uint64_t alignment = 32;  // GGUF data alignment
    uint64_t data_start = 0;  // absolute offset of the tensor data section; 0 while not known
    uint64_t header_bytes = 0;  // bytes of header + metadata + tensor infos (before padding)
    // A split model's later part: its own split.no as the part has it (nullopt: it has none),
    // which llama.cpp checks against the part's place; the model's metadata is the first part's.
    std::optional<Value> own_split_no;

    // The data section starts after the tensor-info list: a file cut inside that list never says
    // where (its tensors are DataPresence::unknown).
    bool data_start_known() const { return data_start != 0; }
};

struct MetadataEntry {
    std::string key;
    Value value;
    uint32_t file = 0;
    ByteRange key_range;  // length prefix + key bytes
    ByteRange type_range;  // the type id (and array element type + count for arrays)
    ByteRange value_range;  // the value bytes (for arrays: all elements)
    ByteRange range() const { return {key_range.offset, value_range.end() - key_range.offset}; }
};

// Storage type of a tensor. For GGUF: a ggml type id; `known` is false for ids the pinned ggml
// does not know (then block size and byte size are unknown).
struct StorageType {
    uint32_t id = 0;
    std::string name;  // "Q4_K", "F32", or "unknown(43)"
    bool known = false;
    uint64_t block_size = 0;  // elements per block
    uint64_t block_bytes = 0;  // bytes per block
};

// The logical view of a tensor stored quantized across several entries (see the contract).
struct QuantLayout {
    std::string type;  // "int4", "int8", "nvfp4", "mxfp4", "mxfp8", else as declared
    std::string mode;  // how values decode: "affine", "nvfp4", "mxfp4", "mxfp8"
    uint32_t bits = 0;  // bits per packed value
    uint64_t group_size = 0;  // values sharing one scale
    std::string origin;  // where type and group size came from, for display
    std::string declared;  // the type string as the file wrote it (aliases kept), or empty
    std::vector<uint64_t> logical_ne;  // unpacked shape, GGUF order (ne[0] fastest)
    uint64_t logical_elements = 0;
    std::optional<size_t> scale;  // indices into Model::tensors
    std::optional<size_t> bias;
    std::optional<size_t> global_scale;

    // Sets logical_ne and logical_elements from the packed entry's shape: 32 / bits values per
    // packed 32-bit word along ne[0]. False (and nothing set) when that overflows 64 bits.
    bool unpack_shape(const std::vector<uint64_t>& packed_ne);
};

// How much of a tensor's data its file holds (truncation.h sets partial and missing; the GGUF
// reader sets unknown; otherwise complete).
// unknown: the header was cut before the tensor-info list ended, so the data section (and
// where any tensor's data lies) was never located; such a tensor is not read at all.
enum class DataPresence { complete, partial, missing, unknown };
const char* data_presence_name(DataPresence p);  // "complete", "partial", "missing", "unknown"

struct TensorInfo {
    std::string name;
    StorageType type;
    std::vector<uint64_t> ne;  // GGUF order: ne[0] is the fastest-varying dimension
    uint64_t n_elements = 0;
    std::optional<uint64_t> n_bytes;  // unknown for unknown types
    uint64_t relative_offset = 0;  // as stored (GGUF: from the data section)
    uint64_t data_offset = 0;  // absolute offset in its file
    uint32_t file = 0;
    ByteRange info_range;  // the tensor-info record in the header
    std::optional<QuantLayout> quant;  // set on the packed entry of a multi-entry quantized tensor
    std::optional<size_t> part_of;  // set on its companions: index of the packed entry
    DataPresence presence = DataPresence::complete;

    double bits_per_weight() const;  // 0 when unknown or empty
    ByteRange data_range() const { return {data_offset, n_bytes.value_or(0)}; }
};

// Why a tensor of DataPresence::unknown is not read: E_TRUNCATED naming the tensor, at its info.
Error unlocated_data_error(const TensorInfo& t);

// Tensors that belong together, e.g. the experts of one MoE layer (see the contract).
struct TensorGroup {
    std::string name;  // e.g. "model.layers.1.mlp.experts"
    std::string kind;  // "experts"
    std::string layout;  // how the members are stored, for display
    uint64_t count = 0;  // items in the group (experts)
    std::vector<std::string> parts;  // what each item consists of, e.g. gate_proj, up_proj, down_proj
    std::vector<size_t> members;  // indices into Model::tensors (packed entries, not companions)
};

class Model {
public:
    Format format = Format::unknown;
    std::vector<SourceFile> files;
    std::vector<MetadataEntry> metadata;
    std::vector<TensorInfo> tensors;
    std::vector<TensorGroup> groups;
    std::vector<Diagnostic> diagnostics;
    bool partial = false;
    // The index in `files` of the file the model was opened by: a split model opened by its part
    // N (of any) has its parts in order, files[0] the first, and this N - 1.
    uint32_t opened_file = 0;

    const MetadataEntry* find(std::string_view key) const;
    std::optional<std::string> get_string(std::string_view key) const;
    std::optional<uint64_t> get_uint(std::string_view key) const;
    const TensorInfo* find_tensor(std::string_view name) const;
    std::vector<std::string> tensor_names() const;  // in tensor order, for "did you mean" hints

    size_t error_count() const;
    size_t warning_count() const;
    uint64_t total_file_bytes() const;
    // The files of a split model that could not be opened (gguf_split.h: their source stays
    // null and the open reports E_SPLIT_MISSING for each), in part order. The one rule for "a
    // part is missing" that summaries, health and loadability all ask.
    std::vector<uint32_t> missing_files() const;
    // The GGUF version of the first file present (a split model's parts share one); 0 when no
    // file is present or the model is no GGUF.
    uint32_t gguf_version() const;

    // Moves the diagnostics and tensors of `part`, a model read from one file, to the end of
    // this model's as file `file` (their file index set to it), and the part's file record to
    // files[file] (files must already hold that index). The part's metadata stays where it is.
    void take_part(Model& part, uint32_t file);

    // Reads `length` bytes of tensor `index` starting `offset` bytes into its data, in ggml's
    // (little-endian) layout: a file with a block_order (a big-endian GGUF) has its blocks
    // converted by it, and a type it has no layout for is refused with E_BIG_ENDIAN_TYPE. The
    // bytes as stored are the file's ByteSource's.
    Status read_tensor_bytes(size_t index, uint64_t offset, uint64_t length, void* dst) const;
    // Whether all of tensor `index`'s bytes are in its file, asked before a buffer for the whole
    // tensor is made: unlocated_data_error, or E_TRUNCATED_DATA (field "tensors", the data
    // offset) when its size is unknown or its range runs past the end of the file.
    Status check_tensor_data(size_t index) const;
};

}  // namespace mlens
