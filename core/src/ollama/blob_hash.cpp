#include "mlens/ollama/blob_hash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "mlens/io/source_read_error.h"
#include "posix_dir.h"

namespace mlens {

namespace {

constexpr size_t kChunkBytes = 1 << 20;
constexpr uint64_t kSourceReadBytes = 4u << 20;

struct MdCtxDeleter {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// A sha256 context, or nullptr when OpenSSL cannot make one.
std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> sha256_context() {
    std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
    if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) ctx.reset();
    return ctx;
}

Result<std::string> final_hex(EVP_MD_CTX* ctx) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx, md, &n) != 1) return Error{ErrorCode::E_IO, "", std::nullopt, "sha256 failed"};
    return to_hex(md, n);
}

}  // namespace

std::string sha256_hex_digest(std::string_view bytes) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1) return {};
    return to_hex(md, n);
}

Result<FileHash> sha256_file(const std::string& path, JobContext* job, const std::function<void(uint64_t)>& on_progress) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    while (!fd.valid() && (errno == EMFILE || errno == ENFILE) && release_idle_descriptor())
        fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        int err = errno;
        return Error{open_error_code(err), "", std::nullopt, "cannot open for hashing: " + open_error_text(err)};
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Error{ErrorCode::E_IO, "", std::nullopt, std::strerror(errno)};
    if (!S_ISREG(st.st_mode))
        return Error{ErrorCode::E_NOT_REGULAR_FILE, "", std::nullopt, std::string("is ") + file_type_text(st.st_mode)};
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

    auto ctx = sha256_context();
    if (!ctx) return Error{ErrorCode::E_IO, "", std::nullopt, "cannot initialise sha256"};
    std::vector<unsigned char> buf(kChunkBytes);
    FileHash out;
    while (true) {
        if (job_cancelled(job)) return cancelled_error("hashing", out.bytes);
        ssize_t got = ::read(fd.get(), buf.data(), buf.size());
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return Error{ErrorCode::E_IO, "", out.bytes, std::string("read failed: ") + std::strerror(errno)};
        if (got == 0) break;
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(got));
        out.bytes += static_cast<uint64_t>(got);
        if (on_progress) on_progress(out.bytes);
    }
    struct stat after {};
    if (::fstat(fd.get(), &after) != 0 || out.bytes != static_cast<uint64_t>(st.st_size) || after.st_size != st.st_size ||
        after.st_mtim.tv_sec != st.st_mtim.tv_sec || after.st_mtim.tv_nsec != st.st_mtim.tv_nsec)
        return Error{ErrorCode::E_CHANGED, "", std::nullopt,
                     "the file changed while it was hashed (" + std::to_string(st.st_size) + " bytes at open, " +
                         std::to_string(out.bytes) + " read)"};
    auto hex = final_hex(ctx.get());
    if (!hex) return hex.error();
    out.hex = *hex;
    return out;
}

Result<FileHash> sha256_source(const ByteSource& source, JobContext* job, const std::function<void(uint64_t)>& on_progress) {
    auto ctx = sha256_context();
    if (!ctx) return Error{ErrorCode::E_IO, "", std::nullopt, "cannot initialise sha256"};
    std::vector<unsigned char> buf(static_cast<size_t>(std::min(kSourceReadBytes, source.size())));
    FileHash out;
    while (out.bytes < source.size()) {
        if (job_cancelled(job)) return cancelled_error("hashing", out.bytes);
        const uint64_t n = std::min<uint64_t>(buf.size(), source.size() - out.bytes);
        if (!source.read_ahead(out.bytes, n, buf.data(), source.size()))
            return source_read_error(source, "", out.bytes, "cannot read " + std::to_string(n) + " bytes for hashing");
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n));
        out.bytes += n;
        if (on_progress) on_progress(out.bytes);
    }
    auto hex = final_hex(ctx.get());
    if (!hex) return hex.error();
    out.hex = *hex;
    return out;
}

Status verify_blob(const BlobLookup& blob, const BlobDigest& expected, JobContext* job) {
    if (!blob.found()) return *blob.error;
    const uint64_t size = blob.size;
    auto progress = [job, size](uint64_t bytes) {
        if (size) job_report(job, static_cast<double>(bytes) / static_cast<double>(size));
    };
    auto hash = sha256_file(blob.path, job, progress);
    if (!hash) return hash.error();
    if (hash->hex != expected.hex)
        return Error{ErrorCode::E_DIGEST_MISMATCH, "", std::nullopt,
                     blob.name + ": expected sha256:" + expected.hex + " actual sha256:" + hash->hex};
    return ok_status();
}

}  // namespace mlens
