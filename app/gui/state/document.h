// Document: one opened file — a model, an Ollama store or an importance matrix — and what the
// views share about it (selection, links between panels).
//
// Contract:
//  - A Document is created in state `opening` with no content; the workspace fills `content`
//    (a ModelDocument, a StoreDocument or an ImatrixDocument) and `parse_ms` from the open job
//    and moves it to `ready` (or `failed` with `error` and `error_code` when the path names
//    nothing that opens: missing, not a model file, unreadable; a damaged model is `ready` with
//    diagnostics).
//  - The content is immutable once published and may be shared with worker threads; model(),
//    index(), store() and imatrix() give the parts of the content that is one, else null.
//  - The DocumentIndex (document_index.h) is built on the worker with the model.
//  - Panels share no navigation state here: each keeps what a link named (panel.h).
//  - `edits` are the metadata edits staged on a model document (metadata_edits.h); the file itself
//    is never changed: Save As writes a new one.
//  - Selection names one thing the inspector shows; indices refer to the Model's vectors (for
//    tokens: the token id in the tokenizer's vocabulary).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "job_runner.h"
#include "metadata_edits.h"
#include "mlens/analysis/document_index.h"
#include "mlens/model/model.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/quant/imatrix.h"
#include "store_document.h"

namespace mlens {

enum class DocumentState { opening, ready, failed };
enum class SelectionKind { none, header, metadata, tensor, diagnostic, token, finding };

struct Selection {
    SelectionKind kind = SelectionKind::none;
    size_t index = 0;
    bool operator==(const Selection&) const = default;
};

// Bytes of a file that a selection points at.
struct ByteTarget {
    uint32_t file = 0;
    uint64_t offset = 0;  // first byte to show
    ByteRange highlight;  // the selected field's bytes
    std::string label;  // what the bytes are, escaped
};

// An opened model file (or folder, or store model) and its index.
struct ModelDocument {
    std::shared_ptr<const Model> model;
    std::shared_ptr<const DocumentIndex> index;
    // A registry's model (ollama://): its manifest, config and text layers as fetched with the
    // open, from the manifest the model was opened from (registry_view.h); null for any other.
    std::shared_ptr<const ManifestView> registry;
};

// What the last finished health scan of a model (the Health panel's fsck pass) counted.
struct ValueScanCounts {
    size_t errors = 0, warnings = 0, notes = 0;
    uint64_t tensors_scanned = 0, tensors = 0;
    std::string present_files;  // ModelSummary::present_files_text(): empty unless split parts are missing
};

// An Ollama store's model list (store_document.h); replaced whole when its digest pass ends.
using StoreDocumentPtr = std::shared_ptr<const StoreDocument>;

// A llama-imatrix importance matrix.
struct ImatrixDocument {
    std::shared_ptr<const Imatrix> imatrix;
};

// What an opened document is; empty while it opens or when it failed.
using DocumentContent = std::variant<std::monostate, ModelDocument, StoreDocumentPtr, ImatrixDocument>;

class Document {
public:
    uint64_t id = 0;
    std::string path;
    std::string title;  // file name, escaped for display
    DocumentState state = DocumentState::opening;
    std::string error;  // escaped message; when failed
    std::optional<ErrorCode> error_code;  // its code (E_NOT_A_MODEL, E_NOT_FOUND, ...)
    DocumentContent content;
    double parse_ms = 0.0;
    JobPtr job;

    Selection selection;
    // The bytes of the selected health finding (SelectionKind::finding, set by the Health panel).
    std::optional<ByteTarget> finding_bytes;
    std::string focus_panel;  // center panel id to bring forward, once
    // Links a panel posted for the others ("metadata:GROUP", "weights:TENSOR", ...: each panel's
    // header names its scheme); the shell offers them to the panels in order (route_link) before
    // the next panels draw and brings the taker forward.
    std::vector<std::string> pending_links;
    // Set by the Health panel when a scan finishes: the status bar then shows the scan's counts
    // after the reader's, since "structure ok" says nothing about the values.
    std::optional<ValueScanCounts> value_scan;
    // Metadata edits staged in the Metadata panel, not yet saved (the tab marks them; closing asks).
    MetadataEdits edits;

    bool ready() const { return state == DocumentState::ready && !std::holds_alternative<std::monostate>(content); }
    bool is_model() const { return std::holds_alternative<ModelDocument>(content); }
    bool is_store() const { return std::holds_alternative<StoreDocumentPtr>(content); }
    bool is_imatrix() const { return std::holds_alternative<ImatrixDocument>(content); }
    const std::shared_ptr<const Model>& model() const;
    const std::shared_ptr<const DocumentIndex>& index() const;
    const std::shared_ptr<const ManifestView>& registry() const;  // null unless a registry's model
    const StoreDocumentPtr& store() const;
    const std::shared_ptr<const Imatrix>& imatrix() const;
    // Selects and asks the shell to show `panel` (empty = leave the center panels alone).
    void select(Selection s, std::string panel = {});
    void follow(std::string link) { pending_links.push_back(std::move(link)); }
    std::optional<ByteTarget> byte_target() const;
};

// Reads up to `max` bytes of file `file` at `offset`, clamped to the file's end.
std::vector<uint8_t> read_file_bytes(const Model& model, uint32_t file, uint64_t offset, uint64_t max);

}  // namespace mlens
