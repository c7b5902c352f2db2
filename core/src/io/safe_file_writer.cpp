#include "mlens/io/safe_file_writer.h"
#include "mlens/io/file_type.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "mlens/io/owner_stamp.h"
#include "mlens/io/path_parts.h"
#include "mlens/io/temp_registry.h"
#include "mlens/io/store_shape.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

// The process's file-creation mask, read from /proc/self/status ("Umask:", Linux 4.7 on) so that
// no other thread sees it changed; where that line is missing, umask(2) set and put back.
mode_t process_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return mask;
}

// Long enough for any name; keeps ".<name>.tmp-XXXXXX" within NAME_MAX for the longest names.
constexpr size_t kTempNameKeep = 200;

Error output_error(ErrorCode code, std::string message) { return Error{code, "output", std::nullopt, std::move(message)}; }

// Called right after the failing system call: errno still holds its reason.
Error io_error(const std::string& what, const std::string& path) {
    const int reason = errno;
    return output_error(ErrorCode::E_IO, what + " " + escape_for_display(path) + ": " + std::strerror(reason));
}

FileIdentity identity_of(const struct stat& st) { return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}; }

Error not_regular(const std::string& shown, mode_t mode) {
    return output_error(ErrorCode::E_OUTPUT_NOT_REGULAR,
                        "refusing to write to " + escape_for_display(shown) + ": it is " + file_type_text(mode) +
                            ", and only a regular file is ever replaced");
}

// Where the output really goes: the path itself, or the regular file its symbolic link leads to.
struct Target {
    std::string path;
    std::string folder;
    std::string name;
    std::optional<struct stat> existing;
};

Result<Target> resolve_target(const std::string& shown) {
    if (shown.empty()) return output_error(ErrorCode::E_OUTPUT_NOT_REGULAR, "no output path given");
    if (shown.back() == '/')
        return output_error(ErrorCode::E_OUTPUT_NOT_REGULAR, "refusing to write to " + escape_for_display(shown) + ": it names a folder");
    Target t;
    t.path = shown;
    struct stat ls {};
    if (::lstat(shown.c_str(), &ls) == 0) {
        if (S_ISLNK(ls.st_mode)) {
            char* real = ::realpath(shown.c_str(), nullptr);
            if (!real) {
                const int reason = errno;
                return output_error(ErrorCode::E_OUTPUT_NOT_REGULAR,
                                    "refusing to write to " + escape_for_display(shown) + ": a symbolic link that leads to no file (" +
                                        std::strerror(reason) + ")");
            }
            t.path = real;
            std::free(real);
        }
        struct stat st {};
        if (::stat(t.path.c_str(), &st) != 0) return io_error("cannot use", shown);
        if (!S_ISREG(st.st_mode)) return not_regular(shown, st.st_mode);
        t.existing = st;
    } else if (errno != ENOENT) {
        return io_error("cannot use", shown);
    }
    t.folder = parent_of(t.path);
    t.name = base_name(t.path);
    return t;
}

// The folder and every folder above it, symbolic links resolved: "/a/b" gives "/a/b", "/a", "/".
std::vector<std::string> ancestors_of(const std::string& folder) {
    std::vector<std::string> out;
    char* real = ::realpath(folder.c_str(), nullptr);
    if (!real) return out;
    std::string path = real;
    std::free(real);
    while (true) {
        out.push_back(path);
        if (path == "/") break;
        const size_t slash = path.rfind('/');
        path = slash == 0 ? "/" : path.substr(0, slash);
    }
    return out;
}

// The folder an input puts out of bounds: the Ollama store it lies in, or the blobs folder of a
// blob outside any store (the rule in the header).
std::optional<std::string> protected_folder_of(const std::string& input) {
    char* real = ::realpath(input.c_str(), nullptr);
    if (!real) return std::nullopt;
    const std::string path = real;
    std::free(real);
    if (is_store_root(path)) return path;
    if (is_store_root(parent_of(path))) return parent_of(path);
    std::string folder = parent_of(path);
    while (folder != "/") {
        const std::string name = base_name(folder);
        const std::string root = parent_of(folder);
        if ((name == "blobs" || name == "manifests") && is_store_root(root)) return root;
        folder = root;
    }
    if (base_name(parent_of(path)) == "blobs" && is_blob_file_name(base_name(path))) return parent_of(path);
    return std::nullopt;
}

CommitStepHook g_commit_hook = nullptr;

Status commit_step(CommitStep step, size_t index) { return g_commit_hook ? g_commit_hook(step, index) : ok_status(); }

}  // namespace

std::optional<FileIdentity> file_identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return identity_of(st);
}

void OutputGuard::add_input(const std::string& path) {
    if (auto id = file_identity(path)) add_input(*id, path);
}

void OutputGuard::add_input(FileIdentity id, std::string path) {
    if (auto folder = protected_folder_of(path)) add_protected_folder(*folder);
    m_inputs.push_back({id, std::move(path)});
}

void OutputGuard::add_protected_folder(const std::string& path) {
    const auto id = file_identity(path);
    if (!id) return;
    for (const Input& known : m_protected)
        if (known.id == *id) return;
    m_protected.push_back({*id, path});
}

Status OutputGuard::check_folder(const std::string& folder, const std::string& shown) const {
    if (m_protected.empty()) return ok_status();
    for (const std::string& ancestor : ancestors_of(folder)) {
        auto id = file_identity(ancestor);
        if (!id) continue;
        for (const Input& p : m_protected)
            if (p.id == *id)
                return output_error(ErrorCode::E_OUTPUT_IN_STORE,
                                    "refusing to write " + escape_for_display(shown) + " inside " + escape_for_display(p.path) + ", " +
                                        (is_store_root(p.path) ? "an Ollama store" : "the blobs folder of an Ollama store") +
                                        " this operation reads, which is never written to");
    }
    return ok_status();
}

Result<SafeFileWriter> SafeFileWriter::create(const std::string& path, OutputGuard& guard) {
    auto target = resolve_target(path);
    if (!target) return target.error();
    std::optional<FileIdentity> existing;
    if (target->existing) existing = identity_of(*target->existing);
    if (existing)
        for (const OutputGuard::Input& in : guard.m_inputs)
            if (in.id == *existing)
                return output_error(
                    ErrorCode::E_OUTPUT_IS_INPUT,
                    "refusing to write " + escape_for_display(path) + " over the input file " + escape_for_display(in.path));
    if (existing && is_blob_file_name(target->name))
        return output_error(ErrorCode::E_OUTPUT_IN_STORE,
                            "refusing to write over " + escape_for_display(path) +
                                ": it is named as an Ollama blob, whose name is the digest of its bytes");
    struct stat folder_st {};
    if (::stat(target->folder.c_str(), &folder_st) != 0) return io_error("cannot use the folder", target->folder);
    const FileIdentity folder = identity_of(folder_st);
    if (Status s = guard.check_folder(target->folder, path); !s) return s.error();
    for (const OutputGuard::Output& out : guard.m_outputs)
        if ((existing && out.existing == existing) || (out.folder == folder && out.name == target->name))
            return output_error(
                ErrorCode::E_OUTPUTS_SAME_FILE,
                escape_for_display(path) + " and " + escape_for_display(out.path) + " are the same file; each output needs its own");

    sweep_stale_temporaries(target->folder);
    std::string temp = target->folder + "/." + target->name.substr(0, kTempNameKeep) + ".tmp-" + owner_stamp() + "-XXXXXX";
    const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return io_error("cannot create a temporary file in", target->folder);
    struct stat temp_st {};
    if (::fstat(fd, &temp_st) != 0) {
        Error e = io_error("cannot use the temporary file", temp);
        ::close(fd);
        ::unlink(temp.c_str());
        return e;
    }

    SafeFileWriter w;
    w.m_shown = path;
    w.m_target = target->path;
    w.m_folder = target->folder;
    w.m_temp = std::move(temp);
    w.m_fd = fd;
    w.m_temp_slot = register_temp_file(w.m_temp);
    w.m_written_id = identity_of(temp_st);
    w.m_mode = target->existing ? target->existing->st_mode & 0777 : 0666 & ~process_umask();
    for (const OutputGuard::Input& in : guard.m_inputs) w.m_inputs.push_back(in.id);
    guard.m_outputs.push_back({folder, target->name, existing, path});
    return w;
}

SafeFileWriter::SafeFileWriter(SafeFileWriter&& other) noexcept
    : m_shown(std::move(other.m_shown)),
      m_target(std::move(other.m_target)),
      m_folder(std::move(other.m_folder)),
      m_temp(std::move(other.m_temp)),
      m_inputs(std::move(other.m_inputs)),
      m_fd(other.m_fd),
      m_temp_slot(other.m_temp_slot),
      m_mode(other.m_mode),
      m_written_id(other.m_written_id),
      m_written(other.m_written),
      m_committed(other.m_committed) {
    other.m_fd = -1;
    other.m_temp_slot = -1;
    other.m_temp.clear();
}

SafeFileWriter::~SafeFileWriter() { discard(); }

std::string SafeFileWriter::discard() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    std::string left;
    if (!m_committed && !m_temp.empty() && ::unlink(m_temp.c_str()) != 0 && errno != ENOENT)
        left = "; the temporary file " + escape_for_display(m_temp) + " was left: it cannot be removed (" + std::strerror(errno) + ")";
    unregister_temp_file(m_temp_slot);
    m_temp_slot = -1;
    return left;
}

Status SafeFileWriter::write(const void* data, uint64_t length) {
    if (m_fd < 0) return output_error(ErrorCode::E_IO, "cannot write " + escape_for_display(m_shown) + ": the file is already closed");
    const auto* p = static_cast<const uint8_t*>(data);
    while (length > 0) {
        const ssize_t n = ::write(m_fd, p, length);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ENOSPC;  // a regular file takes nothing only when the disk is full
        if (n <= 0) {
            Error e = io_error("cannot write", m_shown);
            e.message += discard();
            return e;
        }
        p += n;
        length -= static_cast<uint64_t>(n);
        m_written += static_cast<uint64_t>(n);
    }
    return ok_status();
}

Status SafeFileWriter::commit() {
    if (m_fd < 0) return output_error(ErrorCode::E_IO, "cannot finish " + escape_for_display(m_shown) + ": the file is already closed");
    auto fail = [this](Error e) -> Status {
        e.message += discard();
        return e;
    };
    if (::fchmod(m_fd, static_cast<mode_t>(m_mode)) != 0) return fail(io_error("cannot set the permissions of", m_shown));
    if (::fsync(m_fd) != 0) return fail(io_error("cannot flush", m_shown));
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) return fail(io_error("cannot close", m_shown));

    // The target may have changed since create(): never rename over something that is now an
    // input or not a regular file.
    struct stat st {};
    if (::stat(m_target.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) return fail(not_regular(m_shown, st.st_mode));
        for (const FileIdentity& in : m_inputs)
            if (in == identity_of(st))
                return fail(output_error(ErrorCode::E_OUTPUT_IS_INPUT,
                                         "refusing to write " + escape_for_display(m_shown) + ": it became one of the input files"));
    }
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0) return fail(io_error("cannot rename the finished file into", m_shown));
    m_committed = true;
    unregister_temp_file(m_temp_slot);
    m_temp_slot = -1;

    sync_folder(m_folder);  // durability of the rename itself

    auto now = file_identity(m_target);
    if (!now || !(*now == m_written_id))
        return output_error(
            ErrorCode::E_OUTPUT_REPLACED,
            escape_for_display(m_shown) + " was replaced by another writer right after this one finished; that file is left as is");
    return ok_status();
}

Status SafeFileWriter::withdraw() {
    if (!m_committed) {
        discard();
        return ok_status();
    }
    auto now = file_identity(m_target);
    if (!now || !(*now == m_written_id)) return ok_status();
    if (::unlink(m_target.c_str()) != 0) return io_error("cannot remove", m_shown);
    return ok_status();
}

void set_commit_step_hook(CommitStepHook hook) { g_commit_hook = hook; }

namespace {

// A new name "<folder>/.<name>.prev-<stamp>-XXXXXX" that holds the target's current file: a hard
// link, or a copy where links are not supported. Empty when the target does not exist.
Result<std::string> keep_previous(const std::string& target) {
    struct stat st {};
    if (::stat(target.c_str(), &st) != 0) return std::string();
    static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::random_device random;
    const std::string stem = parent_of(target) + "/." + base_name(target).substr(0, kTempNameKeep) + ".prev-" + owner_stamp() + "-";
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string name = stem;
        for (int i = 0; i < 6; ++i) name += kChars[random() % (sizeof kChars - 1)];
        if (::link(target.c_str(), name.c_str()) == 0) return name;
        if (errno == EEXIST) continue;
        if (errno != EPERM && errno != EOPNOTSUPP && errno != EMLINK && errno != EXDEV) break;
        std::error_code ec;
        if (std::filesystem::copy_file(target, name, ec)) return name;
        if (ec == std::errc::file_exists) continue;
        errno = ec.value();
        break;
    }
    return io_error("cannot keep the previous file while replacing", target);
}

}  // namespace

Status commit_all(std::vector<SafeFileWriter>& writers) {
    if (writers.size() == 1) return writers[0].commit();
    SignalDeferral deferred;  // a signal now ends the process once every file is in place
    std::vector<std::string> previous(writers.size());
    std::vector<std::optional<FileIdentity>> previous_id(writers.size());  // the target's file when it was kept
    // Removes the previous files kept: each only while its target still names that file or this
    // operation's new one; one whose target another writer replaced meanwhile may be the last
    // name of the old file, and is kept and noted, as is one that cannot be removed.
    auto drop_previous = [&] {
        for (size_t j = 0; j < previous.size(); ++j) {
            if (previous[j].empty()) continue;
            const auto now = file_identity(writers[j].m_target);
            const bool ours = now && ((previous_id[j] && *now == *previous_id[j]) || *now == writers[j].m_written_id);
            if (!ours)
                temp_notice("kept " + escape_for_display(previous[j]) + ": the previous content of " + escape_for_display(writers[j].m_target) +
                            ", which another writer replaced meanwhile; rename it back to restore it");
            else if (::unlink(previous[j].c_str()) != 0)
                temp_notice("kept " + escape_for_display(previous[j]) + ": the previous content of " + escape_for_display(writers[j].m_target) +
                            ", which cannot be removed (" + std::strerror(errno) + "); remove it by hand");
        }
    };
    for (size_t i = 0; i < writers.size(); ++i) {
        Status hooked = commit_step(CommitStep::keep_previous, i);
        const std::optional<FileIdentity> target_id = file_identity(writers[i].target_path());
        auto kept = hooked ? keep_previous(writers[i].target_path()) : Result<std::string>(hooked.error());
        if (!kept) {
            drop_previous();
            for (SafeFileWriter& w : writers) w.discard();
            return kept.error();
        }
        previous[i] = std::move(*kept);
        previous_id[i] = target_id;
    }
    for (size_t i = 0; i < writers.size(); ++i) {
        Status s = commit_step(CommitStep::rename, i);
        if (s) s = writers[i].commit();
        if (s) continue;
        Error failure = s.error();
        for (size_t j = i; j < writers.size(); ++j) writers[j].discard();
        std::string unrestored;
        for (size_t j = 0; j < i; ++j) {
            SafeFileWriter& w = writers[j];
            auto now = file_identity(w.m_target);
            if (!now || !(*now == w.m_written_id)) continue;  // another writer's file now: left alone
            if (previous[j].empty()) {
                (void)w.withdraw();
            } else if (::rename(previous[j].c_str(), w.m_target.c_str()) == 0) {
                previous[j].clear();
            } else {
                unrestored += (unrestored.empty() ? "" : ", ") + escape_for_display(previous[j]);
                previous[j].clear();  // kept: it is the only copy of the previous file
            }
        }
        drop_previous();
        if (!unrestored.empty()) failure.message += "; the previous files could not be put back and are kept as " + unrestored;
        return failure;
    }
    (void)commit_step(CommitStep::drop_previous, 0);  // every file is in place: nothing left to fail
    drop_previous();
    return ok_status();
}

Status write_files_safely(OutputGuard& guard, const std::vector<OutputBytes>& files) {
    std::vector<SafeFileWriter> writers;
    for (const OutputBytes& f : files) {
        auto writer = SafeFileWriter::create(f.path, guard);
        if (!writer) return writer.error();
        writers.push_back(std::move(*writer));
    }
    for (size_t i = 0; i < files.size(); ++i)
        if (Status s = writers[i].write(files[i].data, files[i].length); !s) return s;
    return commit_all(writers);
}

void sync_folder(const std::string& folder) {
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    ::fsync(dir);
    ::close(dir);
}

}  // namespace mlens
