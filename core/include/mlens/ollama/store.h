// An Ollama model store, opened read-only: where stores are, which manifests they hold, and
// where each blob lives (ollama-store.md §3; malformed-inputs.md A3 "Ollama store").
//
// Contract:
//  - Nothing in the store is ever created, renamed, deleted or repaired; every open is O_RDONLY.
//  - Store::open canonicalises the root with realpath (a symlink to a store and a relative path
//    both work); it fails with E_NOT_FOUND or E_NOT_DIRECTORY. The root "/" opens like any
//    other: only <root>/manifests and <root>/blobs are ever read.
//  - scan() walks manifests/<host>/<namespace>/<model>/<tag> through directory descriptors opened
//    with O_NOFOLLOW, exactly four levels: a symlink anywhere under manifests/ is never followed
//    (W_SYMLINK_SKIPPED); a name outside the grammar of model_name.h, a directory where the tag
//    file should be (a fifth level), or a file where a directory should be is skipped with
//    W_INVALID_NAME; names that are valid but not portable (model_name.h, or equal to a sibling
//    but for case) get W_NONPORTABLE_NAME and are kept. A tag that is not a regular file is
//    skipped with W_NOT_REGULAR_FILE. A directory (manifests/ included) or entry that cannot be
//    read — permission denied, out of descriptors — is an error naming it (E_PERMISSION,
//    E_FD_LIMIT, E_IO), never a skip. At most kMaxDirectoryEntries entries per directory and
//    kMaxManifests manifests are visited (W_SCAN_LIMIT names the cap). Diagnostics name the entry
//    by its path relative to the root ("manifests/registry.ollama.ai/library/-evil").
//  - read_manifest opens the manifest of a valid name the same way (no symlink followed), refuses
//    a file above kMaxManifestBytes from its size before reading (E_MANIFEST_TOO_LARGE), and
//    parses it (manifest.h). Its diagnostics' fields are relative to the manifest.
//  - find_blob resolves a validated digest to blobs/sha256-<hex>, checked before any open:
//    lstat; a symlink is followed only by stat/realpath (E_SYMLINK_LOOP on a loop, E_BLOB_MISSING
//    when dangling); the target must be a regular file (E_NOT_REGULAR_FILE: FIFOs, devices,
//    sockets, directories, whatever a symlink points at) and its realpath must lie inside the
//    root (E_OUTSIDE_ROOT) and be readable by the effective user (E_PERMISSION; how, and at what
//    cost: store_lookup.h). When only the legacy name blobs/sha256:<hex> exists it is used with
//    W_LEGACY_BLOB_NAME (never renamed). Informational warnings: W_BLOB_HARDLINKED (st_nlink > 1),
//    W_BLOB_WORLD_WRITABLE, W_BLOB_OTHER_OWNER. No digest reaches a path unless
//    parse_blob_digest accepted it.
//  - open_blob opens a found blob for reading (open_file: regular file, O_NONBLOCK).
//  - blob_files lists blobs/ with each name classified (digest.h): partial downloads and
//    temporary files are recognised and labelled, never touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/byte_source.h"
#include "mlens/io/file_stamp.h"
#include "mlens/io/store_shape.h"
#include "mlens/job.h"
#include "mlens/model/diagnostic.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/manifest.h"
#include "mlens/ollama/model_name.h"

namespace mlens {

constexpr uint64_t kMaxDirectoryEntries = 100'000;  // max_directory_entries
constexpr uint64_t kMaxManifests = 100'000;  // max_manifests

struct StoreLocation {
    std::string path;
    std::string origin;  // "OLLAMA_MODELS", "home" (~/.ollama/models), "system" (/usr/share/ollama/...)
};

// Where stores may be, in Ollama's order: $OLLAMA_MODELS if set and non-empty (then only that),
// else ~/.ollama/models and the Linux service's /usr/share/ollama/.ollama/models.
std::vector<StoreLocation> default_store_locations();
// is_store_root, the store-root rule every command and view uses, is store_shape.h's.
// The default locations that are store roots.
std::vector<StoreLocation> find_stores();

struct ManifestRef {
    ModelName name;
    std::string path;  // relative to the root: manifests/<host>/<ns>/<model>/<tag>
    int64_t modified = 0;  // mtime, seconds since the epoch (what `ollama list` shows)
    uint64_t file_size = 0;
};

struct StoreScan {
    std::vector<ManifestRef> manifests;  // sorted by path
    std::vector<Diagnostic> diagnostics;  // fields: paths relative to the root
    // Every entry under manifests/ was taken: none was skipped (a symlink, an invalid name, a
    // file that is not regular, a folder where a tag file belongs, a scan limit) and no folder was
    // unreadable; false too when manifests/ itself is a symlink or not a folder. Only then can a
    // blob no manifest names be called unreferenced (StoreListing::references_known).
    bool complete = true;
};

struct StoredManifest {
    ManifestRef ref;
    bool found = false;
    FileStamp stamp;  // the manifest file's identity as read (zero when it was not read)
    std::string digest;  // sha256 of the manifest bytes, "sha256:<hex>"
    Manifest manifest;  // diagnostics: file-level ones first, then the parse's
    bool valid() const { return found && manifest.valid; }
    // The manifest file exists: it was read, or refused for what it is (too large, not a regular
    // file, unreadable) rather than for being absent (E_NOT_FOUND, E_BAD_NAME).
    bool present() const;
};

struct BlobLookup {
    std::optional<Error> error;  // E_BLOB_MISSING, E_SYMLINK_LOOP, E_NOT_REGULAR_FILE, E_OUTSIDE_ROOT,
        // E_PERMISSION, E_FD_LIMIT, E_IO
    std::string path;  // canonical absolute path, when found
    std::string name;  // relative to the root: blobs/sha256-<hex> (or the legacy name)
    uint64_t size = 0;
    int64_t modified = 0;
    uint64_t device = 0, inode = 0;  // identity of the file (verification cache key)
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool legacy_name = false;
    std::vector<Error> warnings;  // W_LEGACY_BLOB_NAME, W_BLOB_HARDLINKED, ...
    bool found() const { return !error; }
    // The cache key of the file as it was found (file_stamp.h).
    FileStamp stamp() const { return {device, inode, size, mtime_ns, ctime_ns}; }
};

struct BlobFile {
    std::string name;
    BlobFileName kind;
    bool regular = false;  // a regular file (not a symlink, directory, FIFO, ...)
    uint64_t size = 0;
};

class Store {
public:
    static Result<Store> open(const std::string& path);

    const std::string& root() const { return m_root; }
    // The absolute path of `relative` (a path relative to the root, e.g. "blobs"), spelled with
    // one slash between the two whatever the root (a root of "/" included).
    std::string path_of(std::string_view relative) const;
    StoreScan scan(JobContext* job = nullptr) const;
    StoredManifest read_manifest(const ModelName& name) const;
    StoredManifest read_manifest(const ManifestRef& ref) const;
    BlobLookup find_blob(const BlobDigest& digest) const;
    Result<ByteSourcePtr> open_blob(const BlobLookup& blob) const;
    std::vector<BlobFile> blob_files() const;  // sorted by name, at most kMaxDirectoryEntries

private:
    explicit Store(std::string root) : m_root(std::move(root)) {}
    std::string m_root;
};

// The diagnostic with its field placed under `location` (a path relative to the root): the form
// `mlens check` prints, "manifests/registry.ollama.ai/library/evil/latest layers[0].digest".
Diagnostic located(Diagnostic d, const std::string& location);

}  // namespace mlens
