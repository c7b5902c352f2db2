// Owner stamps: every temporary file or folder ModelLens creates carries the process that owns it
// in its name, so that one left behind by a SIGKILL (or by a llama.cpp worker that died) can be
// told from one that is still being written, and removed by the next run.
//
// Contract:
//  - owner_stamp() is "<pid>-<start>-<space>" of the calling process: its pid, its start time in
//    clock ticks since boot (field 22 of /proc/self/stat), and the pid space the pid is counted
//    in: the machine (/etc/machine-id) and the pid namespace (the inode of /proc/self/ns/pid) as
//    one 32-bit FNV-1a number in decimal. The three name one process for the machine's uptime: a
//    pid reused by a later process has another start time, and a process in a container (another
//    pid namespace) or on another machine sharing the folder has another space.
//  - stamp_of_process(pid) is the same for another process of this pid space, nullopt when it
//    does not exist.
//  - owner_gone(stamp) is true only when it can be proved: the stamp is of this pid space, and no
//    process has its pid or the process with that pid started at another time. A stamp of another
//    space, a stamp of two fields (older versions wrote "<pid>-<start>", which does not say its
//    space), a stamp that does not parse, or a process whose /proc entry cannot be read, is never
//    called gone.
//  - Temporary names, each "<prefix><stamp>-<6 random characters>":
//      ".<name>.tmp-"   a SafeFileWriter's file beside its target (safe_file_writer.h);
//      ".<name>.prev-"  a previous file kept by commit_all until every file of the operation is
//                       in place;
//      "mlens-load-"    the folder of a converted copy under the temp folder (model_loader.h);
//      ".<name>.part-"  an export folder being assembled (store_export.h).
//    parse_temp_name() splits such a name into its kind, the target name it belongs to and the
//    stamp; any other name is nullopt.
//  - sweep_stale_temporaries(folder) removes, in `folder` only (never below it, never following a
//    symbolic link), every temporary of this user (owned by the effective user id: in a shared
//    folder such as /tmp another user's files are never touched, even by root) whose owner is gone: ".tmp-" files, "mlens-load-" and ".part-"
//    folders (with what they hold). A ".prev-" file of a gone owner is the previous content of its
//    target left by a commit that was killed part way: it is never removed, it is reported so the
//    user can restore it. Each removal and each kept previous file is one notice to the notice
//    sink (set_temp_notice_sink); the sweep returns how many entries it removed. Errors (an
//    unreadable folder, a file that vanished) are not reported: the sweep is best effort.
//  - A notice is given once per process, however many sweeps find the same file.
//  - The notice sink is process-wide; the CLI prints notices to stderr as "note: ...", the GUI
//    logs them. Without a sink, notices are dropped. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace mlens {

enum class TempKind { writer_file, previous_file, load_folder, export_folder };

struct TempName {
    TempKind kind = TempKind::writer_file;
    std::string target;  // the name of the file the temporary belongs to ("" for load folders)
    std::string stamp;  // "<pid>-<start>-<space>" (or an older version's "<pid>-<start>")
};

std::string owner_stamp();
std::optional<std::string> stamp_of_process(pid_t pid);
bool owner_gone(std::string_view stamp);

std::optional<TempName> parse_temp_name(std::string_view name);

// A temporary whose owner is gone, in one folder: its name, what the name says, and its size.
struct StaleTemporary {
    std::string name;
    TempName temp;
    uint64_t bytes = 0;  // the file's size; 0 for a folder
};

// The temporaries of `folder` (not below it) that a sweep may act on: names parse_temp_name
// accepts, of this user, a regular file for the file kinds and a folder for the folder kinds (a
// symbolic link never), whose owner is gone. sweep_stale_temporaries acts on these; a cache with
// temporaries of its own (range_cache.h) counts and removes its kinds among them.
std::vector<StaleTemporary> stale_temporaries(const std::string& folder);
size_t sweep_stale_temporaries(const std::string& folder);
// The system temp folder (TMPDIR, else /tmp), where converted copies go.
std::string system_temp_folder();

void set_temp_notice_sink(std::function<void(const std::string&)> sink);
// The sink of a command-line program: "<program>: note: <message>" on stderr.
void print_temp_notices(std::string program);
void temp_notice(const std::string& message);

}  // namespace mlens
