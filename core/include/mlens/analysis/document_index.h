// DocumentIndex: everything derived from a Model that its views list and draw, computed once
// (on a worker thread in the app): the logical tensors every tensor listing shows
// (logical_tensors, summary.h), the summary and layers computed from them, metadata groups,
// tokenizer facts, whether llama.cpp loads it (loadability.h), and the code points used by the file's strings (so fonts can provide their
// glyphs).
//
// Contract:
//  - build_document_index reads only the Model; the index is immutable once built and may be
//    shared between threads with the Model it was built from.
//  - Metadata groups: "general.*", the architecture's "ARCH.*" (when named and not general or
//    tokenizer), "tokenizer.*", then "other"; entries in file order; empty groups left out.
//  - Special tokens are the integer "tokenizer.ggml.*_token_id" entries, ordered bos, eos, pad,
//    unk, eot, eom, sep, cls, mask, then the rest in file order.
//  - tokenizer.encoding is piece_encoding(tokenizer.ggml.model) (byte_level_bpe.h);
//    piece_encoding_of(id) is that of one token, by its token type.
//  - A cancelled job stops the code point pass early (code_points then partial).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/loadability.h"
#include "mlens/analysis/model_overview.h"
#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/model/summary.h"
#include "mlens/text/byte_level_bpe.h"

namespace mlens {

struct MetadataGroup {
    std::string label;  // "general.*", "llama.*", "tokenizer.*", "other"
    std::string prefix;  // "general.", ...; empty for the "other" group
    std::vector<size_t> entries;  // indices into Model::metadata, file order
};

struct SpecialToken {
    std::string role;  // "bos", "eos", "pad", "unk", ...
    int64_t id = 0;  // as stored; may be negative or out of range
};

struct TokenizerInfo {
    std::shared_ptr<const ArrayIndex> tokens;  // STRING array, or null
    size_t tokens_entry = 0;  // its index in Model::metadata (when tokens is set)
    std::shared_ptr<const ArrayIndex> types;  // integer array, or null
    std::shared_ptr<const ArrayIndex> scores;  // float array, or null
    std::string model;  // tokenizer.ggml.model, escaped
    std::string pre;  // tokenizer.ggml.pre, escaped
    uint64_t merges = 0;
    std::vector<SpecialToken> special;
    std::optional<size_t> chat_template;  // index into Model::metadata
    PieceEncoding encoding = PieceEncoding::plain;  // how the pieces store their text
    uint64_t count() const { return tokens ? tokens->count : 0; }
    PieceEncoding piece_encoding_of(uint64_t id) const;
};

struct DocumentIndex {
    std::vector<LogicalTensor> tensors;
    ModelSummary summary;
    std::vector<MetadataGroup> metadata_groups;
    std::vector<LayerSummary> layers;
    TokenizerInfo tokenizer;
    Loadability loads;  // assess_loadability(model): the Inspector, status bar and Diagnostics show it
    ModelOverview overview;  // model_overview(model): the first lines of the Inspector
    // Code points (sorted, unique, all >= 0x80) used by the file's strings: all of them (with the
    // text a byte-level vocabulary's pieces stand for, as the app shows them), and those of the
    // text shown in the monospace font (keys, string values, tensor names).
    std::vector<uint32_t> code_points;
    std::vector<uint32_t> mono_code_points;
};

DocumentIndex build_document_index(const Model& model, JobContext* job = nullptr);

}  // namespace mlens
