// plan_edit: what an EditList does to one GGUF file's header, worked out before any byte is
// written — the new header, where the tensor data goes, the diff, and how it can be written.
//
// Contract:
//  - Editable: a single-file GGUF, v2 or v3, little-endian, with no error diagnostics and its data
//    section located. Anything else is E_EDIT_UNSUPPORTED with the reason (a split GGUF, v1, a
//    big-endian file, a damaged file).
//  - A single safetensors file is edited in its __metadata__ (string values only: a type other
//    than STRING is E_VALUE_TYPE; no tensor may be named). The header JSON stays byte for byte
//    except the __metadata__ object, written anew as compact JSON with the keys in file order (new
//    keys last), or added first when the file has none (a null __metadata__ is replaced). The new
//    header is padded with spaces to the old length when it fits, so the data stays where it is
//    (fits_in_place), else to a multiple of 8; the data section moves whole as for GGUF.
//  - Each key may be named by at most one edit, as its key or a rename's new key (E_EDIT_CONFLICT).
//    Keys (set, and a rename's new key) must be non-empty (E_EMPTY_KEY), valid UTF-8
//    (E_INVALID_UTF8) and at most 65535 bytes (E_KEY_TOO_LONG). A key an edit adds (a set of a key
//    the file lacks, a rename's new key) has no control character, U+0000..U+001F or U+007F
//    (E_BAD_NAME: llama.cpp reads a key up to its first NUL); one the file has may still be set,
//    renamed or deleted. Delete and rename name a key the file has (E_NOT_FOUND); a rename onto a
//    key the file has is E_DUPLICATE_KEY. general.alignment cannot be edited
//    (E_EDIT_UNSUPPORTED): it places every tensor. Nor can split.count, split.no and
//    split.tensors.count, in any file (E_EDIT_UNSUPPORTED): they say how the parts of a split
//    model fit together (llama.cpp checks them against the parts' names and tensors), which an
//    edit of one part cannot check; llama-gguf-split writes them.
//  - A set edit is typed as edit_list.h says; setting a key the file has keeps its place, a new key
//    is appended after the file's keys. Setting a key to the value it has is still listed in the
//    diff (as a change of the same bytes).
//  - The new header is the file's own bytes wherever nothing changed: unchanged entries and the
//    tensor-info records are copied byte for byte (tensor types the linked ggml does not know
//    included), only the KV count, the edited entries and the padding are new. Tensor offsets are
//    relative to the data section and stay as they are; the data section is the file's bytes from
//    its old start to the end of the file, moved as a whole. The new data start is the header
//    size aligned up to the file's alignment (ggml finds the data there, so no other padding is
//    possible).
//  - fits_in_place: the new data start equals the old one (the header, padded, takes exactly the
//    old header's space), so only the header region changes. The planned data path is then
//    `clone` (the data region is cloned or copied in the kernel at the same offsets); otherwise
//    `stream` (the data is read and written once, shifted).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/edit/edit_list.h"
#include "mlens/model/model.h"

namespace mlens {

enum class KeyChangeKind { added, removed, changed, renamed };
const char* key_change_kind_name(KeyChangeKind kind);  // "added", "removed", "changed", "renamed"

struct KeyChange {
    KeyChangeKind kind = KeyChangeKind::changed;
    std::string key;
    std::string new_key;  // renamed
    std::string type_before, type_after;  // format_type spelling; empty where there is none
    std::string value_before, value_after;  // format_value (escaped, cut), empty where there is none
    uint64_t bytes_before = 0, bytes_after = 0;  // the whole KV entry in the header
};

enum class PlannedDataPath { clone, stream };
const char* planned_data_path_name(PlannedDataPath p);  // "clone", "stream"

struct TensorPlacement {
    std::string name;
    uint64_t old_offset = 0;  // absolute
    uint64_t new_offset = 0;  // absolute
};

struct EditPlan {
    Format format = Format::gguf;
    std::string path;  // the file edited
    std::vector<uint8_t> header;  // the new header, padded up to new_data_start
    uint64_t old_header_bytes = 0, new_header_bytes = 0;  // before padding
    uint64_t old_data_start = 0, new_data_start = 0;
    uint64_t old_file_bytes = 0;
    uint64_t data_bytes = 0;  // old_file_bytes - old_data_start, moved as a whole
    uint64_t alignment = 32;
    uint64_t key_count_before = 0, key_count_after = 0;
    std::vector<KeyChange> changes;
    std::vector<TensorPlacement> tensors;
    bool fits_in_place = false;
    PlannedDataPath data_path = PlannedDataPath::stream;

    uint64_t new_file_bytes() const { return new_data_start + data_bytes; }
    int64_t data_shift() const { return static_cast<int64_t>(new_data_start) - static_cast<int64_t>(old_data_start); }
    // The first and one-past-last byte where the new header differs from the file's (equal when
    // it does not differ); meaningful when fits_in_place.
    uint64_t first_changed = 0, end_changed = 0;
    std::vector<uint8_t> old_span;  // the file's bytes in [first_changed, end_changed) when planned
};

Result<EditPlan> plan_edit(const Model& model, const EditList& edits);

}  // namespace mlens
