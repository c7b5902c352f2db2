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
//      * a target in the blobs folder of an Ollama store the operation reads (an input named
//        like a blob, "sha256-<64 hex>", in a folder named "blobs"; the folder by device and
//        inode): E_OUTPUT_IN_STORE, since a store is never written to.
//    A symbolic link to a regular file is written through: the file it leads to is replaced and
//    the link stays.
//  - Bytes go to a temporary file "<folder>/.<name>.tmp-XXXXXX" beside the target. Every write,
//    flush and close is checked; a failure (full disk, file-size limit, permission) is E_IO
//    naming the target and the system's reason, and the temporary file is removed.
//  - temp_path() names the temporary file so a caller can verify what it wrote (re-read it)
//    before commit(). commit() flushes (fsync), closes, checks the target again (it may have
//    become an input or a non-regular file meanwhile) and renames the temporary file into place
//    atomically. After the rename it checks that the target is still the file it wrote (same
//    device and inode): when another writer replaced it first, commit() fails with
//    E_OUTPUT_REPLACED and leaves that other file alone. Permissions are the replaced file's, or
//    0644 for a new file.
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
    std::vector<Input> m_store_folders;  // the blobs folders of the inputs that are store blobs
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
    const std::string& temp_path() const { return m_temp; }
    // The file that commit() replaces: the path given, or where its symbolic link leads.
    const std::string& target_path() const { return m_target; }

private:
    SafeFileWriter() = default;
    void discard();

    std::string m_shown;  // the path as given, for messages
    std::string m_target;
    std::string m_folder;  // the target's folder, synced after the rename
    std::string m_temp;
    std::vector<FileIdentity> m_inputs;  // checked again just before the rename
    int m_fd = -1;
    int m_temp_slot = -1;  // temp_registry slot, -1 when not registered
    unsigned m_mode = 0644;
    FileIdentity m_written_id;
    uint64_t m_written = 0;
    bool m_committed = false;
};

// Commits the writers of one operation in order; when one fails, those already committed are
// withdrawn, so the operation places all of its files or none.
Status commit_all(std::vector<SafeFileWriter>& writers);

struct OutputBytes {
    std::string path;
    const void* data = nullptr;
    uint64_t length = 0;
};

// Writes the files of one operation: every target is claimed first (a conflict fails before
// anything is written), then each is written, then all are committed (commit_all).
Status write_files_safely(OutputGuard& guard, const std::vector<OutputBytes>& files);

}  // namespace mlens
