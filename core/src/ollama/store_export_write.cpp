#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "mlens/compat/upstream_export.h"
#include "mlens/io/byte_source.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/path_parts.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/io/temp_registry.h"
#include "mlens/model/model_inputs.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/store_export.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

namespace fs = std::filesystem;
constexpr uint64_t kCopyChunk = 4u << 20;

Error write_error(ErrorCode code, const std::string& path, const std::string& message) {
    return Error{code, escape_for_display(path), std::nullopt, message};
}

// Removes the scratch folder unless the export placed it.
// The mode mkdir(2) would give a new folder: 0777 less the process's umask (read from
// /proc/self/status, since umask(2) cannot be read without setting it for every thread).
mode_t new_folder_mode() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("Umask:")) return static_cast<mode_t>(0777 & ~std::stoul(line.substr(6), nullptr, 8));
    return 0755;
}

// mkdtemp makes the folder 0700; the placed OUT_DIR gets the mode a plain mkdir would give.
class ScratchFolder {
public:
    ScratchFolder() = default;
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    ~ScratchFolder() {
        if (m_path.empty()) return;
        std::error_code ec;
        fs::remove_all(m_path, ec);
        unregister_temp_file(m_slot);
    }
    Status create(const std::string& parent, const std::string& name) {
        // The name cut to 200 bytes keeps ".NAME.part-<stamp>-XXXXXX" within NAME_MAX for any
        // OUT_DIR name; the owner stamp lets the next export remove a folder a killed one left.
        sweep_stale_temporaries(parent);
        std::string pattern = parent + "/." + name.substr(0, 200) + ".part-" + owner_stamp() + "-XXXXXX";
        if (!mkdtemp(pattern.data()))
            return write_error(ErrorCode::E_IO, parent, std::string("cannot create a folder there: ") + std::strerror(errno));
        m_path = pattern;
        m_slot = register_temp_file(m_path);
        ::chmod(m_path.c_str(), new_folder_mode());
        return ok_status();
    }
    void placed() {
        unregister_temp_file(m_slot);
        m_path.clear();
    }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    int m_slot = -1;
};

// OUT_DIR must be new or an empty folder, under an existing folder outside the store. Its parent
// is the folder the kernel resolves OUT_DIR's path up to its last name in, symlinks and ".." as on
// disk ("link/../x" is in the link's target's parent, wherever the link sits), found by realpath
// of that text, never by normalizing it; the folder is created in, checked in and renamed into
// that folder, by its real path.
Status check_out_dir(const std::string& out_dir, const OutputGuard& guard, std::string& parent_real, std::string& name) {
    if (out_dir.empty()) return write_error(ErrorCode::E_ARGS, out_dir, "no output folder");
    const size_t kept = out_dir.find_last_not_of('/');
    if (kept == std::string::npos) return write_error(ErrorCode::E_ARGS, out_dir, "names no new folder; give the name of the folder to create");
    const std::string trimmed = out_dir.substr(0, kept + 1);
    name = base_name(trimmed);
    // The folder is placed by renaming into its path, which "." and ".." can never be: refused
    // here, before anything is written, not by the rename at the end.
    if (name == "." || name == "..")
        return write_error(ErrorCode::E_ARGS, out_dir, "names no new folder (\".\" or \"..\"); give the name of the folder to create");
    const std::string parent = parent_of(trimmed);
    char* real = realpath(parent.c_str(), nullptr);
    if (!real) return write_error(ErrorCode::E_NOT_FOUND, parent, std::string("the folder to write into: ") + std::strerror(errno));
    parent_real = real;
    free(real);
    if (Status s = guard.check_folder(parent_real, out_dir); !s) return s;
    const std::string placed = parent_real + (parent_real == "/" ? "" : "/") + name;
    struct stat st {};
    if (lstat(placed.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return write_error(ErrorCode::E_OUTPUT_EXISTS, out_dir, "exists and is not a folder");
        std::error_code ec;
        if (!fs::is_empty(placed, ec) || ec) return write_error(ErrorCode::E_OUTPUT_EXISTS, out_dir, "the folder exists and is not empty");
    } else if (errno != ENOENT) {
        return write_error(ErrorCode::E_IO, out_dir, std::strerror(errno));
    }
    return ok_status();
}

Status make_parents(const std::string& root, const std::string& relative) {
    fs::path dir = fs::path(relative).parent_path();
    if (dir.empty()) return ok_status();
    std::error_code ec;
    fs::create_directories(fs::path(root) / dir, ec);
    if (ec) return write_error(ErrorCode::E_IO, relative, "cannot create its folder: " + ec.message());
    return ok_status();
}

Status copy_blob(const ExportFile& f, SafeFileWriter& out, JobContext* job, uint64_t total, uint64_t& done) {
    auto source = open_file(f.blob_path);
    if (!source) return source.error();
    std::vector<uint8_t> chunk;
    for (uint64_t off = 0; off < f.bytes; off += kCopyChunk) {
        if (job_cancelled(job)) return cancelled_error("export");
        uint64_t n = std::min(kCopyChunk, f.bytes - off);
        chunk.resize(n);
        if (!(*source)->read(off, n, chunk.data())) return write_error(ErrorCode::E_IO, f.blob_path, "cannot read the blob");
        if (Status s = out.write(chunk.data(), n); !s) return s;
        done += n;
        job_report(job, total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
    }
    return ok_status();
}

struct DigestCtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// The written file holds exactly the blob's bytes (or the text), and a blob's bytes are the ones
// its digest names: a blob damaged in the store since it was pulled (same size, other bytes) is
// not exported as the model the manifest names.
Status verify_copy(const ExportFile& f, const std::string& path, JobContext* job) {
    auto written = open_file(path);
    if (!written) return written.error();
    if ((*written)->size() != f.bytes)
        return write_error(ErrorCode::E_EXPORT_CHECK, f.name,
                           "has " + std::to_string((*written)->size()) + " bytes, " + std::to_string(f.bytes) + " planned");
    if (f.kind == ExportFileKind::text) {
        std::string back(f.bytes, '\0');
        if (!(*written)->read(0, f.bytes, back.data()) || back != f.text)
            return write_error(ErrorCode::E_EXPORT_CHECK, f.name, "reads back different");
        return ok_status();
    }
    auto blob = open_file(f.blob_path);
    if (!blob) return blob.error();
    const std::optional<BlobDigest> digest = parse_blob_digest(f.digest);
    std::unique_ptr<EVP_MD_CTX, DigestCtxFree> sha(EVP_MD_CTX_new());
    if (!digest || !sha || EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr) != 1)
        return write_error(ErrorCode::E_EXPORT_CHECK, f.name, "cannot check it against the digest " + escape_for_display(f.digest, 80));
    std::vector<uint8_t> a, b;
    for (uint64_t off = 0; off < f.bytes; off += kCopyChunk) {
        if (job_cancelled(job)) return cancelled_error("export");
        uint64_t n = std::min(kCopyChunk, f.bytes - off);
        a.resize(n);
        b.resize(n);
        if (!(*written)->read(off, n, a.data()) || !(*blob)->read(off, n, b.data()) || a != b)
            return write_error(ErrorCode::E_EXPORT_CHECK, f.name,
                               "differs from blob " + f.digest + " in bytes from " + std::to_string(off));
        EVP_DigestUpdate(sha.get(), a.data(), n);
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_size = 0;
    if (EVP_DigestFinal_ex(sha.get(), md, &md_size) != 1)
        return write_error(ErrorCode::E_EXPORT_CHECK, f.name, "cannot check it against the digest " + f.digest);
    if (const std::string actual = to_hex(md, md_size); actual != digest->hex)
        return write_error(ErrorCode::E_DIGEST_MISMATCH, f.name,
                           "the store's blob does not match its digest: expected " + digest->text() + ", actual sha256:" + actual +
                               " (mlens verify checks every blob)");
    return ok_status();
}

}  // namespace

Result<StoreExportReport> write_store_export(const PreparedExport& p, const std::string& out_dir, JobContext* job) {
    const StoreExportPlan& plan = p.plan;
    OutputGuard guard = output_guard_for(p.model);
    guard.add_protected_folder(p.store.root());
    for (const LayerView& l : p.view.layers)
        if (l.blob && l.blob->found()) guard.add_input(l.blob->path);
    std::string parent, name;
    if (Status s = check_out_dir(out_dir, guard, parent, name); !s) return s.error();
    ScratchFolder scratch;
    if (Status s = scratch.create(parent, name); !s) return s.error();
    const uint64_t total = plan.total_bytes();
    uint64_t done = 0;
    StoreExportReport report;
    report.out_dir = out_dir;

    // The compat export writes model.gguf and mmproj.gguf together, each checked by its own re-read.
    compat::ExportOptions upstream;
    for (const ExportFile& f : plan.files) {
        if (!export_file_kind(f.kind).written_by_compat_export) continue;
        (f.kind == ExportFileKind::upstream_text ? upstream.text_path : upstream.mmproj_path) = scratch.path() + "/" + f.name;
    }
    if (!upstream.text_path.empty()) {
        upstream.guard = guard;
        auto written = compat::export_upstream(p.model, p.compat_plan, upstream, job);
        if (!written) return written.error();
        for (const compat::ExportedFile& f : written->files) done += f.bytes;
    }
    for (const ExportFile& f : plan.files) {
        if (export_file_kind(f.kind).written_by_compat_export) continue;
        if (Status s = make_parents(scratch.path(), f.name); !s) return s.error();
        auto writer = SafeFileWriter::create(scratch.path() + "/" + f.name, guard);
        if (!writer) return writer.error();
        Status s = ok_status();
        if (f.kind == ExportFileKind::text) {
            s = writer->write(f.text.data(), f.text.size());
            done += f.bytes;
        } else if (f.kind == ExportFileKind::blob_copy) {
            s = copy_blob(f, *writer, job, total, done);
        } else {
            s = write_hf_shard(p.model, plan.hf, f.shard, *writer, job, total, done);
        }
        if (!s) return s.error();
        if (Status c = writer->commit(); !c) return c.error();
    }

    // Verification, still in the scratch folder.
    for (const ExportFile& f : plan.files) {
        const std::string path = scratch.path() + "/" + f.name;
        struct stat st {};
        if (stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != f.bytes)
            return write_error(ErrorCode::E_EXPORT_CHECK, f.name, "does not have the " + std::to_string(f.bytes) + " bytes planned");
        const ExportFileKindFacts& kind = export_file_kind(f.kind);
        if (kind.read_back) {
            if (Status s = verify_copy(f, path, job); !s) return s.error();
        }
        report.files_verified += kind.read_back || kind.written_by_compat_export;
    }
    if (plan.format != ExportFormat::gguf) {
        auto verification = verify_hf_export(p.model, plan.hf, scratch.path(), job);
        if (!verification) return verification.error();
        report.verification = std::move(*verification);
        if (report.verification.failures > 0)
            return write_error(ErrorCode::E_EXPORT_CHECK, out_dir,
                               std::to_string(report.verification.failures) +
                                   " tensors differ after writing: " + report.verification.failure_notes.front());
        report.files_verified += plan.hf.shards.size();
    }
    if (job_cancelled(job)) return cancelled_error("export");
    sync_folder(scratch.path());
    const std::string placed = parent + (parent == "/" ? "" : "/") + name;
    if (rename(scratch.path().c_str(), placed.c_str()) != 0)
        return write_error(errno == ENOTEMPTY || errno == EEXIST ? ErrorCode::E_OUTPUT_EXISTS : ErrorCode::E_IO, out_dir,
                           std::string("cannot place the folder: ") + std::strerror(errno));
    sync_folder(parent);
    scratch.placed();
    report.files = plan.files;
    job_report(job, 1.0);
    return report;
}

}  // namespace mlens
