// Lookups in a store at the cost of one system call each, for a caller that resolves many blobs
// or reads many manifests in one run (the store check, a store model's open). Store::find_blob
// and Store::read_manifest (store.h) are these with a fresh BlobDirectory or ManifestFolder, so
// every rule of store.h holds here unchanged.
//
// Contract:
//  - open_blob_directory opens <root>/blobs once (O_PATH, links followed, as a path through it
//    would be) and resolves its real path once. find_blob_in then costs one fstatat in it (two
//    for a symlink): a blob that is a regular file has the real path <real blobs/>/<name>; only a
//    blob that is a symlink is resolved with realpath on its own. When blobs/ cannot be opened,
//    every lookup fails as a path through it would (E_BLOB_MISSING when absent, E_SYMLINK_LOOP,
//    E_PERMISSION); when blobs/ resolves outside the root, every blob is E_OUTSIDE_ROOT naming
//    where it resolves to.
//  - open_listed_blob_directory is open_blob_directory that also lists blobs/ once, every entry
//    lstat'ed (on two threads): `files` is then what Store::blob_files gives, and find_blob_in
//    takes an entry's metadata from that listing instead of asking again, so a store's check and
//    list cost one stat per blob in all. A blob name is found in the listing by its digest
//    (DigestIndex), any other name by a search of the sorted names. The listing stands in for a lookup only when it is of
//    the very directory the descriptor holds (blobs/ not a symlink, same device and inode); a
//    name it did not see (created since, past kMaxDirectoryEntries) is stat'ed as before.
//  - Readability (E_PERMISSION) is decided from the blob's mode and owner against the effective
//    user and group taken when the BlobDirectory was opened: root reads everything; the owner by
//    the owner's read bit; a member of the file's group (the effective group) by the group's bit;
//    anyone when the group's and everyone's bits are both set. Only when those bits do not grant
//    it is the kernel asked (faccessat, AT_EACCESS), so a refusal always carries the kernel's
//    reason and supplementary groups are honoured. Decided: a reader an access control list
//    denies although the mode bits grant it is not caught here; the open that reads the blob
//    reports it.
//  - read_manifest_in reuses the ManifestFolder's descriptor of manifests/<host>/<ns>/<model> (or
//    the error opening it gave) when the manifest is in the same model folder as the one read
//    before, instead of opening the four directories again; the scan lists manifests sorted by
//    path, so a store's tags are read with one folder open per model.
//    With ManifestDigest::skipped the manifest's own sha256 (StoredManifest::digest) is left
//    empty: for a caller that never shows it (the store check and the list it hands manifests to).
//  - A BlobDirectory or ManifestFolder describes the store as it was when opened: keep one for a
//    run, not across runs.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/unique_fd.h"
#include "mlens/ollama/digest_index.h"
#include "mlens/ollama/store.h"

namespace mlens {

struct BlobDirectory {
    UniqueFd fd;  // blobs/, opened with O_PATH; invalid when it could not be opened
    int open_errno = 0;  // why it could not be opened
    std::string real_path;  // canonical path of blobs/, when opened and resolved
    int realpath_errno = 0;  // why realpath failed, when it did
    uid_t euid = 0;  // the effective ids readability is judged for
    gid_t egid = 0;
    std::vector<BlobFile> files;  // open_listed_blob_directory: blobs/ as Store::blob_files lists it (sorted by name)
    // Per entry of `files`, its lstat, when the listing is of `fd`'s directory (else empty); an
    // entry that could not be stat'ed has st_mode 0 and is asked again.
    std::vector<struct stat> listed;
    // With `listed`: every entry named "sha256-<64 lowercase hex>" by its digest (its index in
    // `files`), so a blob name is found by its digest; other names are searched for by name.
    DigestIndex listed_index;
    // The listing's lstat of `name`, or null when the listing has none.
    const struct stat* listed_stat(std::string_view name) const;
};

BlobDirectory open_blob_directory(const Store& store);
BlobDirectory open_listed_blob_directory(const Store& store);
BlobLookup find_blob_in(const Store& store, const BlobDirectory& blobs, const BlobDigest& digest);

// The model folder (manifests/<host>/<namespace>/<model>) of the last manifest read through it.
struct ManifestFolder {
    std::string key;  // "<host>/<namespace>/<model>", "" before the first read
    UniqueFd fd;
    int open_errno = 0;  // why the folder could not be opened
};

enum class ManifestDigest { computed, skipped };

StoredManifest read_manifest_in(const Store& store, ManifestFolder& folder, const ManifestRef& ref,
                                ManifestDigest digest = ManifestDigest::computed);

}  // namespace mlens
