// SafeFileWriter: the one way ModelLens writes a file. Every output (exports, CSV, PNG, settings)
// goes through it, so the same rules hold everywhere.
//
// Contract:
//  - An OutputGuard lists what one operation reads (its inputs, by device and inode) and the
//    outputs it has already opened. create() refuses, before opening anything for writing:
//      * a target that exists and is not a regular file (device, FIFO, socket, directory) or is
//        a symbolic link that leads nowhere: E_OUTPUT_NOT_REGULAR;
//      * a target that is one of the inputs (same device and inode, so symlinks and hard links
//        count): E_OUTPUT_IS_INPUT;
//      * a target that is the same file as an earlier output of the same guard (an existing file
//        by device and inode; a new one by its folder's device and inode and its name):
//        E_OUTPUTS_SAME_FILE;
//      * a target anywhere inside a protected folder: E_OUTPUT_IN_STORE. Every ancestor folder
//        of the target (its folder with symbolic links resolved, up to /) is compared by device
//        and inode with the protected folders, never by path, so a store reached through a bind
//        mount or a symlinked parent is the same store. add_input protects, besides the file:
//          - the whole Ollama store an input lies in: an input inside <root>/blobs/ or
//            <root>/manifests/ (symbolic links resolved) where <root> is a store root
//            (is_store_root, store_shape.h), an input lying directly in a store root (a GGUF
//            put beside blobs/ and manifests/), or an input that is a store root itself;
//          - the folder of a blob-named input ("sha256-<64 hex>") in a folder named "blobs"
//            outside any store root.
//        add_protected_folder protects a folder named by the caller (a store model's root when
//        the input was a reference rather than a path);
//      * an existing file named as an Ollama blob ("sha256-<64 hex>", the file a symbolic link
//        leads to included), wherever it lies: its name is the digest of its bytes, so no output
//        replaces it (E_OUTPUT_IN_STORE), as no edit in place changes it.
//    A symbolic link to a regular file is written through: the file it leads to is replaced and
//    the link stays.
//  - Bytes go to a temporary file "<folder>/.<name>.tmp-<owner stamp>-XXXXXX" beside the target
//    (owner_stamp.h); before creating it, create() sweeps the folder of temporaries whose owner
//    is gone (sweep_stale_temporaries), each removal reported as a notice. Every write,
//    flush and close is checked; a failure (full disk, file-size limit, permission) is E_IO
//    naming the target and the system's reason, and the temporary file is removed.
//  - temp_path() names the temporary file so a caller can verify what it wrote (re-read it)
//    before commit(). commit() flushes (fsync), closes, checks the target again (it may have
//    become an input or a non-regular file meanwhile) and renames the temporary file into place
//    atomically. After the rename it checks that the target is still the file it wrote (same
//    device and inode): when another writer replaced it first, commit() fails with
//    E_OUTPUT_REPLACED and leaves that other file alone. Permissions are the replaced file's read,
//    write and execute bits (never its set-user-ID, set-group-ID or sticky bits: the new file is
//    the writing user's, and a set-user-ID bit would pass to that owner), or for a new file 0666
//    less the process's umask, as open(2) would create it. The new file is a new inode owned by
//    the writer: the replaced file's owner, extended attributes and other names (hard links) stay
//    with the old one.
//  - A writer destroyed before commit() (error, cancel, exception) removes its temporary file.
//    While it exists, the temporary file is listed in the temporary-file registry
//    (temp_registry.h), so a CLI interrupted by SIGINT/SIGTERM removes it too.
//  - withdraw() undoes a commit when a later step of the same operation failed: it removes the
//    target only while it is still the file this writer wrote, never another writer's file.
//  - Messages escape paths for display. Thread-compatible: one writer per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/result.h"

namespace mlens {

struct FileIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    bool operator==(const FileIdentity&) const = default;
};

// The identity of the file `path` leads to (symlinks followed); nullopt when it cannot be stat'ed.
std::optional<FileIdentity> file_identity(const std::string& path);

class OutputGuard {
public:
    // An input that cannot be stat'ed (gone, unreadable folder) is not listed: no output can be
    // the same file as it.
    void add_input(const std::string& path);
    void add_input(FileIdentity id, std::string path);
    void add_protected_folder(const std::string& path);
    // E_OUTPUT_IN_STORE when `folder` (an existing folder) lies in a protected folder, naming
    // `shown` as what was refused; ok otherwise. create() applies it to its target's folder;
    // writers of whole folders (store_export.h) apply it to where they place theirs.
    Status check_folder(const std::string& folder, const std::string& shown) const;

private:
    friend class SafeFileWriter;
    struct Input {
        FileIdentity id;
        std::string path;
    };
    struct Output {
        FileIdentity folder;
        std::string name;
        std::optional<FileIdentity> existing;
        std::string path;
    };
    std::vector<Input> m_inputs;
    std::vector<Input> m_protected;  // folders no output may lie in (stores, blobs folders)
    std::vector<Output> m_outputs;
};

class SafeFileWriter {
public:
    // Records the new output in `guard`, so a second output of the same operation cannot be it.
    static Result<SafeFileWriter> create(const std::string& path, OutputGuard& guard);

    SafeFileWriter(SafeFileWriter&& other) noexcept;
    SafeFileWriter& operator=(SafeFileWriter&&) = delete;
    SafeFileWriter(const SafeFileWriter&) = delete;
    ~SafeFileWriter();

    Status write(const void* data, uint64_t length);
    Status commit();
    Status withdraw();

    uint64_t bytes_written() const { return m_written; }
    // The temporary file's descriptor, for writers that place bytes by position or copy them in
    // the kernel (edit/edit_write.h); bytes_written() does not count what goes through it. -1
    // once closed. A failure on it is the caller's to report; dropping the writer removes the file.
    int descriptor() const { return m_fd; }
    const std::string& temp_path() const { return m_temp; }
    // The file that commit() replaces: the path given, or where its symbolic link leads.
    const std::string& target_path() const { return m_target; }

private:
    friend Status commit_all(std::vector<SafeFileWriter>& writers);
    SafeFileWriter() = default;
    // Closes and removes the temporary file; what to add to an error when it could not be
    // removed ("; the temporary file ... was left: ..."), else "".
    std::string discard();

    std::string m_shown;  // the path as given, for messages
    std::string m_target;
    std::string m_folder;  // the target's folder, synced after the rename
    std::string m_temp;
    std::vector<FileIdentity> m_inputs;  // checked again just before the rename
    int m_fd = -1;
    int m_temp_slot = -1;  // temp_registry slot, -1 when not registered
    unsigned m_mode = 0;  // set by create()
    FileIdentity m_written_id;
    uint64_t m_written = 0;
    bool m_committed = false;
};

// Commits the writers of one operation so that it places all of its files or none, whatever
// fails and whatever signal arrives:
//  1. every target that exists is kept as a previous file, a hard link
//     "<folder>/.<name>.prev-<owner stamp>-XXXXXX" (a copy where the filesystem has no hard links);
//  2. the writers commit in order; when one fails, each target already committed is restored
//     from its previous file by an atomic rename (or, when it had none, withdrawn), and the
//     error is returned;
//  3. once all are committed, the previous files are removed.
// SIGINT, SIGTERM and SIGHUP are deferred from step 1 to the end (SignalDeferral,
// temp_registry.h), so a signal during the commit ends the process after it, with every file new
// or every file as it was. A previous file that cannot be restored stays, named in the error. One writer alone is
// committed directly: its rename is already all or nothing.
Status commit_all(std::vector<SafeFileWriter>& writers);

// The steps of commit_all, for tests that stop or fail a commit part way: the hook runs before
// each step with the index of the writer concerned; an error it returns is that step's failure
// (ignored at drop_previous, when every file is already in place).
enum class CommitStep { keep_previous, rename, drop_previous };
using CommitStepHook = Status (*)(CommitStep step, size_t index);
void set_commit_step_hook(CommitStepHook hook);

struct OutputBytes {
    std::string path;
    const void* data = nullptr;
    uint64_t length = 0;
};

// Writes the files of one operation: every target is claimed first (a conflict fails before
// anything is written), then each is written, then all are committed (commit_all).
Status write_files_safely(OutputGuard& guard, const std::vector<OutputBytes>& files);

// Flushes a folder's entries (fsync of the folder), so that a rename into it or the files made in
// it survive a crash; a folder that cannot be opened or flushed changes nothing written, and is
// not an error.
void sync_folder(const std::string& folder);

}  // namespace mlens
