#include "mlens/edit/edit_in_place.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "edit_steps.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/path_parts.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/io/store_shape.h"
#include "mlens/io/temp_registry.h"
#include "mlens/io/unique_fd.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr char kUndoMagic[8] = {'M', 'L', 'U', 'N', 'D', 'O', '0', '2'};
constexpr uint64_t kUndoFieldBytes = 32;  // the magic and the three sizes
constexpr uint64_t kUndoChecksumBytes = 64;  // SHA-256 in hex
constexpr uint64_t kUndoHeaderBytes = kUndoFieldBytes + kUndoChecksumBytes;

std::atomic<InPlaceStepHook> g_step_hook{nullptr};

constexpr const char* kEditInstead = "write a copy with -o";

void step_done(InPlaceStep step) {
    if (InPlaceStepHook hook = g_step_hook.load()) hook(step);
}

Error failure(ErrorCode code, std::string message) { return Error{code, "file", std::nullopt, std::move(message)}; }

Error errno_failure(const std::string& what, const std::string& path) {
    const int reason = errno;
    const ErrorCode code = reason == EACCES || reason == EROFS || reason == EPERM ? ErrorCode::E_PERMISSION : ErrorCode::E_IO;
    return failure(code, what + " " + escape_for_display(path) + ": " + std::strerror(reason));
}

Status read_exact(int fd, uint8_t* p, uint64_t length, uint64_t offset, const std::string& path) {
    while (length > 0) {
        const ssize_t n = ::pread(fd, p, length, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_failure("cannot read", path);
        if (n == 0) return failure(ErrorCode::E_FILE_CHANGED, escape_for_display(path) + " is shorter than when it was opened");
        p += n;
        length -= static_cast<uint64_t>(n);
        offset += static_cast<uint64_t>(n);
    }
    return ok_status();
}

// The file an undo holds open and locked, read through its descriptor: what is parsed is that
// file alone (not its path's file of the moment, nor the shards beside a split model's part).
class LockedFileSource final : public ByteSource {
public:
    LockedFileSource(int fd, const std::string& path, uint64_t size) : ByteSource(path, size), m_fd(fd) {}
    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        return contains(offset, length) && read_exact(m_fd, static_cast<uint8_t*>(dst), length, offset, path()).ok();
    }

private:
    int m_fd;
};

// The bytes of a file an edit in place may change, [from, to): a GGUF's from its key count (the
// magic, version and tensor count never change) and a safetensors file's from after its header
// length (the same whenever a header fits in place), up to the data. Empty for a file of
// neither format or whose data start is unknown.
struct HeaderSpan {
    uint64_t from = 0, to = 0;
};

HeaderSpan editable_header_span(const ByteSourcePtr& file) {
    // An edit in place is made to a little-endian GGUF (magic "GGUF") or a safetensors file.
    constexpr uint64_t kGgufKeyCountAt = 16, kSafetensorsLengthBytes = 8;
    char magic[4] = {};
    const bool gguf = file->read(0, sizeof magic, magic) && std::memcmp(magic, "GGUF", sizeof magic) == 0;
    const Model header = gguf ? read_gguf(file) : read_safetensors(file);
    if (header.files.empty() || !header.files[0].data_start_known()) return {};
    return {gguf ? kGgufKeyCountAt : kSafetensorsLengthBytes, header.files[0].data_start};
}

// One positioned write, then flushed.
Status write_and_flush(int fd, const uint8_t* p, uint64_t length, uint64_t offset, const std::string& path) {
    if (Status s = write_at(fd, p, length, offset, path); !s) return s;
    if (::fsync(fd) != 0) return errno_failure("cannot flush", path);
    return ok_status();
}

// A file without write permission is read-only for everyone here, root included. The file is
// locked (flock, exclusive) for as long as the descriptor is open: another ModelLens editing or
// undoing it in place meanwhile is E_BUSY.
Result<UniqueFd> open_for_writing(const std::string& path, uint64_t expected_size) {
    struct stat before {};
    if (::stat(path.c_str(), &before) == 0 && (before.st_mode & 0222) == 0)
        return failure(ErrorCode::E_PERMISSION, escape_for_display(path) + " is read-only (no write permission); nothing was written");
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP) return failure(ErrorCode::E_OUTPUT_NOT_REGULAR, escape_for_display(path) + " is a symbolic link; edit the file it leads to");
        return errno_failure("cannot open for writing", path);
    }
    UniqueFd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return errno_failure("cannot stat", path);
    if (!S_ISREG(st.st_mode)) return failure(ErrorCode::E_OUTPUT_NOT_REGULAR, escape_for_display(path) + " is not a regular file");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return failure(ErrorCode::E_BUSY, "another process is editing " + escape_for_display(path) + " in place; nothing was written");
        return errno_failure("cannot lock", path);
    }
    if (static_cast<uint64_t>(st.st_size) != expected_size)
        return failure(ErrorCode::E_FILE_CHANGED, escape_for_display(path) + " changed since it was opened");
    return owned;
}

// The file an edit or an undo writes in place, opened, locked and checked before any byte is
// written (the refusals of the contract that do not depend on the plan): not inside an Ollama
// store, not named as a blob, a regular file of `expected_size` with one name. `doing` names the
// operation in the messages ("an edit in place", "an undo") and `instead` what to do instead.
Status refuse_store_file(const std::string& path, OutputGuard& guard, const char* doing, const char* instead) {
    guard.add_input(path);
    if (Status s = guard.check_folder(parent_of(path), path); !s) return s;
    // A blob reached without its store around it (the blobs folder mounted elsewhere, say) is
    // still a blob: its name is its digest.
    if (is_blob_file_name(base_name(path)))
        return failure(ErrorCode::E_OUTPUT_IN_STORE,
                       escape_for_display(path) +
                           " is named as an Ollama store's blob (sha256-DIGEST): its name is the digest of its bytes, which " + doing +
                           " would change; " + instead + ". Nothing was written");
    return ok_status();
}

Result<UniqueFd> open_in_place(const std::string& path, uint64_t expected_size, OutputGuard& guard, const char* doing,
                               const char* instead) {
    if (Status s = refuse_store_file(path, guard, doing, instead); !s) return s.error();
    auto fd = open_for_writing(path, expected_size);
    if (!fd) return fd.error();
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return errno_failure("cannot stat", path);
    if (st.st_nlink > 1)
        return failure(ErrorCode::E_HARD_LINKED,
                       escape_for_display(path) + " has " + std::to_string(st.st_nlink) + " names (hard links): " + doing +
                           " would change the file under every one of them (an Ollama store's blob, say); " + instead +
                           ". Nothing was written");
    return fd;
}

// A sparse scratch file in the temporary folder for llama.cpp's dry run: a name of its own
// (mkstemp, never a fixed name another user could plant a link or a folder at) that a sweep knows
// as a temporary (owner_stamp.h: ".<name>.tmp-<stamp>-XXXXXX"), removed when this goes.
class ScratchFile {
public:
    static Result<ScratchFile> create() {
        ScratchFile f;
        f.m_path = system_temp_folder() + "/.mlens-edit-check.gguf.tmp-" + owner_stamp() + "-XXXXXX";
        const int fd = ::mkostemp(f.m_path.data(), O_CLOEXEC);
        if (fd < 0) return errno_failure("cannot make a scratch file in", system_temp_folder());
        f.m_fd = UniqueFd(fd);
        f.m_slot = register_temp_file(f.m_path);  // a signal removes it too
        return f;
    }
    ScratchFile(ScratchFile&& other) noexcept
        : m_path(std::move(other.m_path)), m_fd(std::move(other.m_fd)), m_slot(std::exchange(other.m_slot, -1)) {}
    ScratchFile& operator=(ScratchFile&&) = delete;
    ~ScratchFile() {
        if (!m_fd.valid()) return;
        ::unlink(m_path.c_str());
        if (m_slot >= 0) unregister_temp_file(m_slot);
    }
    int descriptor() const { return m_fd.get(); }
    const std::string& path() const { return m_path; }

private:
    ScratchFile() = default;
    std::string m_path;
    UniqueFd m_fd;
    int m_slot = -1;
};

// E_OUTPUT_REPLACED when `path` no longer names the open file (renamed over, or removed).
Status still_at_path(int fd, const std::string& path) {
    struct stat open_st {}, path_st {};
    if (::fstat(fd, &open_st) != 0) return errno_failure("cannot stat", path);
    if (open_st.st_nlink == 0 || ::stat(path.c_str(), &path_st) != 0 || path_st.st_dev != open_st.st_dev || path_st.st_ino != open_st.st_ino)
        return failure(ErrorCode::E_OUTPUT_REPLACED, escape_for_display(path) + " was replaced or removed while it was edited");
    return ok_status();
}

// The undo file's checksum: SHA-256 of its fields and of the old and new bytes.
std::string undo_checksum(const uint8_t* fields, const uint8_t* spans, uint64_t span_bytes) {
    std::string text(reinterpret_cast<const char*>(fields), kUndoFieldBytes);
    text.append(reinterpret_cast<const char*>(spans), 2 * span_bytes);
    return sha256_hex_digest(text);
}

// The file as it reads once the new header is laid over its first bytes.
class HeaderOverlay : public ByteSource {
public:
    HeaderOverlay(ByteSourcePtr base, const std::vector<uint8_t>& header) : ByteSource(base->path(), base->size()), m_base(std::move(base)), m_header(header) {}
    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length)) return false;
        auto* out = static_cast<uint8_t*>(dst);
        if (offset < m_header.size()) {
            const uint64_t n = std::min<uint64_t>(length, m_header.size() - offset);
            std::memcpy(out, m_header.data() + offset, n);
            out += n;
            offset += n;
            length -= n;
        }
        return length == 0 || m_base->read(offset, length, out);
    }

private:
    ByteSourcePtr m_base;
    const std::vector<uint8_t>& m_header;
};

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

Error no_fit(const EditPlan& plan) {
    if (plan.new_data_start > plan.old_data_start)
        return failure(ErrorCode::E_IN_PLACE_NO_FIT, "the new header needs " + std::to_string(plan.new_data_start - plan.old_data_start) +
                                                         " more bytes than the old header and its padding hold; write a new file with -o");
    return failure(ErrorCode::E_IN_PLACE_NO_FIT, "the new header is " + std::to_string(plan.old_data_start - plan.new_data_start) +
                                                     " bytes shorter once padded, so the tensor data would have to move; write a new file with -o");
}

}  // namespace

std::string undo_path_for(const std::string& path) { return path + ".mlens-undo"; }

const char* in_place_step_name(InPlaceStep step) { return step == InPlaceStep::undo_saved ? "undo_saved" : "header_written"; }

void set_in_place_step_hook(InPlaceStepHook hook) { g_step_hook.store(hook); }

Result<InPlaceOutcome> edit_in_place(const Model& model, const EditPlan& plan, JobContext* job, unsigned fsck_threads,
                                      const DryRunChecker& dry_run) {
    const std::string& path = plan.path;
    OutputGuard guard;
    if (!plan.fits_in_place) {
        // The store and blob refusals come first: they hold whether or not the edit fits.
        if (Status s = refuse_store_file(path, guard, "an edit in place", kEditInstead); !s) return s.error();
        return no_fit(plan);
    }
    const std::string undo_path = undo_path_for(path);
    auto fd = open_in_place(path, plan.old_file_bytes, guard, "an edit in place", kEditInstead);
    if (!fd) return fd.error();
    // Checked under the lock: an edit that finished meanwhile left its undo file.
    struct stat undo_st {};
    if (::lstat(undo_path.c_str(), &undo_st) == 0)
        return failure(ErrorCode::E_OUTPUT_EXISTS,
                       escape_for_display(undo_path) + " exists from an earlier edit: run `mlens edit --undo` on the file or remove it first");

    const uint64_t span_at = plan.first_changed;
    const uint64_t span = plan.end_changed - plan.first_changed;
    std::vector<uint8_t> current(plan.header.size());
    if (Status s = read_exact(fd->get(), current.data(), current.size(), 0, path); !s) return s.error();
    for (uint64_t i = 0; i < current.size(); ++i)
        if (i < span_at || i >= plan.end_changed ? current[i] != plan.header[i] : current[i] != plan.old_span[i - span_at])
            return failure(ErrorCode::E_FILE_CHANGED, escape_for_display(path) + " changed since it was opened");

    InPlaceOutcome outcome;
    outcome.path = path;
    outcome.undo_path = span == 0 ? std::string() : undo_path;
    outcome.span_offset = span_at;
    outcome.span_bytes = span;
    auto overlay = std::make_shared<HeaderOverlay>(model.files[0].source, plan.header);
    Model edited = read_edited(plan, overlay);
    outcome.verification = verify_edit(model, plan, edited, job, fsck_threads);
    if (dry_run && outcome.verification.passed()) {
        // The file as the edit will leave it, for llama.cpp to load: the new header, then a hole
        // to the file's size, in a temporary file of the one output path that is never committed
        // (the writer removes it).
        auto scratch = ScratchFile::create();
        if (!scratch) return scratch.error();
        const std::string& scratch_path = scratch->path();
        if (Status s = write_and_flush(scratch->descriptor(), plan.header.data(), plan.header.size(), 0, scratch_path); !s) return s.error();
        if (::ftruncate(scratch->descriptor(), static_cast<off_t>(plan.old_file_bytes)) != 0)
            return errno_failure("cannot size", scratch_path);
        outcome.verification.ask_llama(dry_run, scratch_path, path);
    }
    if (job_cancelled(job)) return cancelled_error("edit");
    if (!outcome.verification.passed())
        return failure(ErrorCode::E_EDIT_VERIFY, outcome.verification.first_problem() + "; nothing was written");
    if (span == 0) return outcome;

    std::vector<uint8_t> undo(kUndoMagic, kUndoMagic + sizeof kUndoMagic);
    put_u64(undo, plan.old_file_bytes);
    put_u64(undo, span_at);
    put_u64(undo, span);
    std::vector<uint8_t> spans(plan.old_span);
    spans.insert(spans.end(), plan.header.begin() + static_cast<std::ptrdiff_t>(span_at), plan.header.begin() + static_cast<std::ptrdiff_t>(plan.end_changed));
    const std::string checksum = undo_checksum(undo.data(), spans.data(), span);
    undo.insert(undo.end(), checksum.begin(), checksum.end());
    undo.insert(undo.end(), spans.begin(), spans.end());
    if (Status s = still_at_path(fd->get(), path); !s) return s.error();
    if (Status s = write_files_safely(guard, {{undo_path, undo.data(), undo.size()}}); !s) return s.error();
    step_done(InPlaceStep::undo_saved);

    const uint8_t* span_bytes = plan.header.data() + span_at;
    if (Status s = write_and_flush(fd->get(), span_bytes, span, span_at, path); !s) return s.error();
    step_done(InPlaceStep::header_written);
    std::vector<uint8_t> back(span);
    if (Status s = read_exact(fd->get(), back.data(), span, span_at, path); !s) return s.error();
    if (std::memcmp(back.data(), span_bytes, span) != 0)
        return failure(ErrorCode::E_EDIT_VERIFY, "the header read back differs from what was written; `mlens edit --undo` restores it");
    // No longer at `path`: the edit went to the file that was there. Removed (no name left), it
    // is gone and so is the use of its undo file; renamed, it lives on under another name with
    // the new header, and the undo file holds the only copy of its old bytes.
    if (Status s = still_at_path(fd->get(), path); !s) {
        struct stat open_st {};
        const bool named_elsewhere = ::fstat(fd->get(), &open_st) == 0 && open_st.st_nlink > 0;
        Error e = s.error();
        if (named_elsewhere) {
            e.message += ": the edit went to the file that was there, which now has another name; its old header bytes are kept in " +
                         escape_for_display(undo_path) + " (name it FILE.mlens-undo beside that file and run `mlens edit FILE --undo` to " +
                         "restore them); the file now at that path was not edited";
        } else {
            ::unlink(undo_path.c_str());
            e.message += ": the edit went to the file that was there, which no longer is; the file now at that path was not edited";
        }
        return e;
    }
    return outcome;
}

Result<UndoOutcome> undo_edit(const std::string& path) {
    const std::string undo_path = undo_path_for(path);
    auto undo_source = open_file(undo_path);
    if (!undo_source) return failure(ErrorCode::E_NOT_FOUND, "no undo file " + escape_for_display(undo_path) + ": " + undo_source.error().message);
    const ByteSource& src = **undo_source;
    uint8_t head[kUndoHeaderBytes];
    if (!src.read(0, std::min<uint64_t>(src.size(), kUndoHeaderBytes), head) || src.size() < kUndoHeaderBytes ||
        std::memcmp(head, kUndoMagic, sizeof kUndoMagic) != 0)
        return failure(ErrorCode::E_UNDO_MISMATCH, escape_for_display(undo_path) + " is not an undo file of this ModelLens; nothing restored");
    const uint64_t file_bytes = get_u64(head + 8), span_at = get_u64(head + 16), span = get_u64(head + 24);
    if (span > file_bytes || span_at > file_bytes - span || (src.size() - kUndoHeaderBytes) / 2 != span ||
        src.size() != kUndoHeaderBytes + 2 * span)
        return failure(ErrorCode::E_UNDO_MISMATCH, escape_for_display(undo_path) + " is damaged: its sizes do not add up; nothing restored");
    std::vector<uint8_t> spans(2 * span);
    if (!src.read(kUndoHeaderBytes, spans.size(), spans.data())) return failure(ErrorCode::E_IO, "cannot read " + escape_for_display(undo_path));
    if (undo_checksum(head, spans.data(), span) != std::string(reinterpret_cast<const char*>(head) + kUndoFieldBytes, kUndoChecksumBytes))
        return failure(ErrorCode::E_UNDO_MISMATCH, escape_for_display(undo_path) + " is damaged: its checksum does not match; nothing restored");
    OutputGuard guard;
    auto fd = open_in_place(path, file_bytes, guard, "an undo",
                            "copy the file and its .mlens-undo file to a name of their own and undo the copy");
    if (!fd) {
        if (fd.error().code == ErrorCode::E_FILE_CHANGED)
            return failure(ErrorCode::E_UNDO_MISMATCH, escape_for_display(path) + " is not the size the undo file records; nothing restored");
        return fd.error();
    }
    // An edit in place changes header bytes only, never the fields before its keys: a span outside
    // them was never written by one.
    const HeaderSpan editable = editable_header_span(std::make_shared<LockedFileSource>(fd->get(), path, file_bytes));
    if (span_at < editable.from || span_at + span > editable.to)
        return failure(ErrorCode::E_UNDO_MISMATCH, escape_for_display(undo_path) + " names bytes " + std::to_string(span_at) + ".." +
                                                       std::to_string(span_at + span) + ", not header bytes an edit in place of " +
                                                       escape_for_display(path) + " changes; nothing restored");
    const std::vector<uint8_t> old_bytes(spans.begin(), spans.begin() + static_cast<std::ptrdiff_t>(span));
    const std::vector<uint8_t> new_bytes(spans.begin() + static_cast<std::ptrdiff_t>(span), spans.end());
    std::vector<uint8_t> current(span);
    if (Status s = read_exact(fd->get(), current.data(), span, span_at, path); !s) return s.error();
    UndoOutcome outcome;
    outcome.path = path;
    outcome.span_offset = span_at;
    if (current == old_bytes) {
        outcome.already_original = true;
    } else {
        for (uint64_t i = 0; i < span; ++i)
            if (current[i] != old_bytes[i] && current[i] != new_bytes[i])
                return failure(ErrorCode::E_UNDO_MISMATCH, "byte " + std::to_string(span_at + i) + " of " + escape_for_display(path) +
                                                               " is neither the edited nor the original value; nothing restored");
        if (Status s = write_and_flush(fd->get(), old_bytes.data(), span, span_at, path); !s) return s.error();
        outcome.bytes_restored = span;
    }
    if (::unlink(undo_path.c_str()) != 0) return errno_failure("restored, but cannot remove", undo_path);
    return outcome;
}

}  // namespace mlens
