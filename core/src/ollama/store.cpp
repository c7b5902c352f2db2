// Store roots, manifests by name and blob resolution. The checks on a blob all happen on its
// metadata (fstatat in blobs/, realpath for a symlink) before anything is opened, so a FIFO or a
// device is refused without a blocking open, and a symlink loop ends in ELOOP from the kernel.
#include "mlens/ollama/store.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/store_lookup.h"
#include "mlens/text/escape.h"
#include "posix_dir.h"

namespace mlens {

namespace {

std::string home_directory() {
    if (const char* home = std::getenv("HOME"); home && *home) return home;
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
    return {};
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<std::string> real_path(const std::string& path) {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
}

// True if `path` (canonical) is `root` (canonical) or lies below it, compared by components.
bool inside(const std::string& path, const std::string& root) {
    if (root == "/") return path.size() > 1 && path[0] == '/';
    return path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/';
}

Error blob_error(ErrorCode code, const std::string& name, const std::string& why) {
    return Error{code, "", std::nullopt, name + ": " + why};
}

// Whether the mode bits alone grant `euid`/`egid` reading the file: root reads everything, the
// owner by the owner's bit, the file's group by the group's bit, anyone when both the group's and
// everyone's bits are set. False means "ask the kernel", not "denied".
bool readable_by_mode(const struct stat& st, uid_t euid, gid_t egid) {
    if (euid == 0) return true;
    if (st.st_uid == euid) return (st.st_mode & S_IRUSR) != 0;
    if (st.st_gid == egid) return (st.st_mode & S_IRGRP) != 0;
    return (st.st_mode & S_IRGRP) && (st.st_mode & S_IROTH);
}

void describe_permissions(BlobLookup& b, const struct stat& st, uid_t euid) {
    if (st.st_nlink > 1)
        b.warnings.push_back({ErrorCode::W_BLOB_HARDLINKED, "", std::nullopt,
                              b.name + " has " + std::to_string(st.st_nlink) + " hard links; its content is still judged by its hash"});
    if (st.st_mode & S_IWOTH)
        b.warnings.push_back({ErrorCode::W_BLOB_WORLD_WRITABLE, "", std::nullopt, b.name + " is writable by every user"});
    if (st.st_uid != euid)
        b.warnings.push_back({ErrorCode::W_BLOB_OTHER_OWNER, "", std::nullopt,
                              b.name + " is owned by user id " + std::to_string(st.st_uid) + ", not the current user"});
}

}  // namespace

std::vector<StoreLocation> default_store_locations() {
    if (const char* env = std::getenv("OLLAMA_MODELS"); env && *env) return {{env, "OLLAMA_MODELS"}};
    std::vector<StoreLocation> out;
    if (std::string home = home_directory(); !home.empty()) out.push_back({home + "/.ollama/models", "home"});
    out.push_back({"/usr/share/ollama/.ollama/models", "system"});
    return out;
}

std::vector<StoreLocation> find_stores() {
    std::vector<StoreLocation> out;
    for (StoreLocation& loc : default_store_locations())
        if (is_store_root(loc.path)) out.push_back(std::move(loc));
    return out;
}

Diagnostic located(Diagnostic d, const std::string& location) {
    d.field = d.field.empty() ? location : location + " " + d.field;
    return d;
}

std::string Store::path_of(std::string_view relative) const {
    std::string path;
    path.reserve(m_root.size() + 1 + relative.size());
    path.assign(m_root);
    if (path.empty() || path.back() != '/') path.push_back('/');
    return path.append(relative);
}

Result<Store> Store::open(const std::string& path) {
    auto root = real_path(path);
    if (!root)
        return Error{ErrorCode::E_NOT_FOUND, "store", std::nullopt,
                     escape_for_display(path) + ": cannot open the store: " + std::strerror(errno)};
    if (!is_directory(*root))
        return Error{ErrorCode::E_NOT_DIRECTORY, "store", std::nullopt, escape_for_display(path) + " is not a directory"};
    return Store(std::move(*root));
}

bool StoredManifest::present() const {
    if (found) return true;
    for (const Diagnostic& d : manifest.diagnostics)
        if (d.code == ErrorCode::E_NOT_FOUND || d.code == ErrorCode::E_BAD_NAME) return false;
    return !manifest.diagnostics.empty();
}

StoredManifest Store::read_manifest(const ModelName& name) const {
    ManifestRef ref{name, name.manifest_path(), 0, 0};
    return read_manifest(ref);
}

StoredManifest Store::read_manifest(const ManifestRef& ref) const {
    ManifestFolder folder;
    return read_manifest_in(*this, folder, ref);
}

StoredManifest read_manifest_in(const Store& store, ManifestFolder& folder, const ManifestRef& ref, ManifestDigest digest) {
    const std::string& root = store.root();
    StoredManifest out;
    out.ref = ref;
    auto fail = [&](ErrorCode code, std::string message) {
        out.manifest.diagnostics.push_back({Severity::error, "store", code, "", std::nullopt, std::move(message)});
        return out;
    };
    if (!ref.name.valid()) return fail(ErrorCode::E_BAD_NAME, "the name is outside the manifest name grammar");
    const std::string key = ref.name.host + "/" + ref.name.name_space + "/" + ref.name.model;
    if (folder.key != key) {
        UniqueFd dir = open_directory_at(AT_FDCWD, root);
        const std::string parts[] = {"manifests", ref.name.host, ref.name.name_space, ref.name.model};
        for (const std::string& part : parts) {
            if (!dir.valid()) break;
            dir = open_directory_at(dir.get(), part);
        }
        folder.open_errno = dir.valid() ? 0 : errno;
        folder.fd = std::move(dir);
        folder.key = key;
    }
    const UniqueFd& dir = folder.fd;
    if (!dir.valid()) {
        int err = folder.open_errno;
        if (err == ELOOP || err == ENOTDIR)
            return fail(ErrorCode::E_NOT_FOUND, "a directory on the way to the manifest is a symlink or not a directory; not followed");
        if (err == ENOENT) return fail(ErrorCode::E_NOT_FOUND, std::string("no manifest: ") + std::strerror(err));
        return fail(open_error_code(err), "cannot open a directory on the way to the manifest: " + open_error_text(err));
    }
    struct stat st {};
    if (::fstatat(dir.get(), ref.name.tag.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        if (err == ENOENT) return fail(ErrorCode::E_NOT_FOUND, std::string("no manifest: ") + std::strerror(err));
        return fail(open_error_code(err), "cannot read the manifest: " + open_error_text(err));
    }
    if (!S_ISREG(st.st_mode))
        return fail(ErrorCode::E_NOT_REGULAR_FILE, std::string("the manifest is ") + file_type_text(st.st_mode) + ", not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxManifestBytes)
        return fail(
            ErrorCode::E_MANIFEST_TOO_LARGE,
            std::to_string(st.st_size) + " bytes exceeds limit max_manifest_bytes=" + std::to_string(kMaxManifestBytes) + " (not read)");
    bool too_large = false;
    auto text = read_small_file_at(dir.get(), ref.name.tag, kMaxManifestBytes, too_large, st);
    if (too_large)
        return fail(ErrorCode::E_MANIFEST_TOO_LARGE,
                    "the manifest grew beyond limit max_manifest_bytes=" + std::to_string(kMaxManifestBytes));
    if (!text) {
        int err = errno;
        return fail(open_error_code(err), "cannot read the manifest: " + open_error_text(err));
    }
    out.found = true;
    out.stamp = file_stamp(st);
    out.ref.modified = st.st_mtime;
    out.ref.file_size = text->size();
    if (digest == ManifestDigest::computed) out.digest = "sha256:" + sha256_hex_digest(*text);
    out.manifest = parse_manifest(*text);
    return out;
}

BlobDirectory open_blob_directory(const Store& store) {
    BlobDirectory d;
    d.euid = ::geteuid();
    d.egid = ::getegid();
    const std::string path = store.path_of("blobs");
    d.fd.reset(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!d.fd.valid()) {
        d.open_errno = errno;
        return d;
    }
    if (auto real = real_path(path))
        d.real_path = std::move(*real);
    else
        d.realpath_errno = errno;
    return d;
}

BlobLookup Store::find_blob(const BlobDigest& digest) const { return find_blob_in(*this, open_blob_directory(*this), digest); }

BlobLookup find_blob_in(const Store& store, const BlobDirectory& blobs, const BlobDigest& digest) {
    BlobLookup b;
    // b.name is "blobs/" and the entry's name in blobs/ (the legacy one, when only it exists),
    // each spelled once; `entry` is its part after "blobs/" (NUL-terminated, as b.name is).
    constexpr std::string_view kBlobsPrefix = "blobs/";
    const auto spell = [&](std::string_view separator) {
        b.name.reserve(kBlobsPrefix.size() + 7 + digest.hex.size());
        b.name.assign(kBlobsPrefix).append("sha256").append(separator).append(digest.hex);
        return std::string_view(b.name).substr(kBlobsPrefix.size());
    };
    std::string_view entry = spell("-");
    struct stat st {};
    // A blobs/ that cannot be opened fails every lookup as a path through it would.
    auto lstat_entry = [&](std::string_view name) {
        if (!blobs.fd.valid()) {
            errno = blobs.open_errno;
            return -1;
        }
        if (const struct stat* seen = blobs.listed_stat(name)) {
            st = *seen;
            return 0;
        }
        return ::fstatat(blobs.fd.get(), name.data(), &st, AT_SYMLINK_NOFOLLOW);
    };
    if (lstat_entry(entry) != 0) {
        int err = errno;
        const std::string legacy = legacy_blob_file_name(digest);
        if ((err == ENOENT || err == ENOTDIR) && lstat_entry(legacy) == 0) {
            b.legacy_name = true;
            entry = spell(":");
            b.warnings.push_back(
                {ErrorCode::W_LEGACY_BLOB_NAME, "", std::nullopt, b.name + " uses the legacy ':' name; read as is, not renamed"});
        } else if (err == ELOOP) {
            b.error = blob_error(ErrorCode::E_SYMLINK_LOOP, b.name, "a directory on its path is a symlink loop");
            return b;
        } else {
            b.error = blob_error(err == ENOENT || err == ENOTDIR ? ErrorCode::E_BLOB_MISSING : open_error_code(err), b.name,
                                 open_error_text(err));
            return b;
        }
    }
    const bool symlink = S_ISLNK(st.st_mode);
    if (symlink && ::fstatat(blobs.fd.get(), entry.data(), &st, 0) != 0) {
        int err = errno;
        if (err == ELOOP)
            b.error = blob_error(ErrorCode::E_SYMLINK_LOOP, b.name, "symlink loop");
        else if (err == ENOENT || err == ENOTDIR)
            b.error = blob_error(ErrorCode::E_BLOB_MISSING, b.name, "dangling symlink");
        else
            b.error = blob_error(open_error_code(err), b.name, open_error_text(err));
        return b;
    }
    if (!S_ISREG(st.st_mode)) {
        b.error = blob_error(ErrorCode::E_NOT_REGULAR_FILE, b.name,
                             std::string("is ") + file_type_text(st.st_mode) + ", not a regular file (not opened)");
        return b;
    }
    // A regular file directly in blobs/ is where blobs/ really is; a symlink is resolved itself.
    std::optional<std::string> real;
    if (symlink) {
        real = real_path(store.path_of(b.name));
    } else if (!blobs.real_path.empty()) {
        real.emplace();
        real->reserve(blobs.real_path.size() + 1 + entry.size());
        real->assign(blobs.real_path).append("/").append(entry);
    } else {
        errno = blobs.realpath_errno;
    }
    if (!real) {
        b.error = blob_error(errno == ELOOP ? ErrorCode::E_SYMLINK_LOOP : ErrorCode::E_IO, b.name, std::strerror(errno));
        return b;
    }
    if (!inside(*real, store.root())) {
        b.error = blob_error(ErrorCode::E_OUTSIDE_ROOT, b.name, "resolves to " + escape_for_display(*real) + ", outside the store root");
        return b;
    }
    // Readable by whom the check runs as (the effective ids): a blob this process cannot read is
    // an error here, before anything tries to parse it.
    if (!readable_by_mode(st, blobs.euid, blobs.egid) && ::faccessat(AT_FDCWD, real->c_str(), R_OK, AT_EACCESS) != 0) {
        int err = errno;
        b.error = blob_error(open_error_code(err), b.name, "cannot be read: " + open_error_text(err));
        return b;
    }
    b.path = std::move(*real);
    b.size = static_cast<uint64_t>(st.st_size);
    b.modified = st.st_mtime;
    b.device = st.st_dev;
    b.inode = st.st_ino;
    const FileStamp id = file_stamp(st);
    b.mtime_ns = id.mtime_ns;
    b.ctime_ns = id.ctime_ns;
    describe_permissions(b, st, blobs.euid);
    return b;
}

Result<ByteSourcePtr> Store::open_blob(const BlobLookup& blob) const {
    if (!blob.found()) return *blob.error;
    return open_file(blob.path);
}

namespace {

// blobs/ as Store::blob_files lists it, opened without following a symlink (as the manifest walk
// opens its directories); `listing` receives its descriptor, invalid when it could not be opened.
// Each entry is described on the thread that stat'ed it; with `stats`, its lstat is kept too (zero,
// st_mode 0, when it could not be stat'ed). Entries that vanished meanwhile are left out.
std::vector<BlobFile> list_blob_files(const std::string& root_path, UniqueFd& listing, std::vector<struct stat>* stats) {
    UniqueFd root = open_directory_at(AT_FDCWD, root_path);
    if (!root.valid()) return {};
    listing = open_directory_at(root.get(), "blobs");
    if (!listing.valid()) return {};
    bool truncated = false;
    const DirectoryNames names = read_directory_names(listing.get(), kMaxDirectoryEntries, truncated);
    std::vector<BlobFile> files(names.size());
    std::vector<uint8_t> vanished(names.size());
    if (stats) stats->assign(names.size(), {});
    stat_directory_names(listing.get(), names, [&](size_t i, const struct stat& st, int err) {
        BlobFile& f = files[i];
        f.name = names.name(i);
        f.kind = classify_blob_file(f.name);
        f.regular = S_ISREG(st.st_mode);
        f.size = f.regular ? static_cast<uint64_t>(st.st_size) : 0;
        vanished[i] = err == ENOENT;
        if (stats) (*stats)[i] = st;
    });
    size_t kept = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        if (vanished[i]) continue;
        if (kept != i) {
            files[kept] = std::move(files[i]);
            if (stats) (*stats)[kept] = (*stats)[i];
        }
        ++kept;
    }
    files.resize(kept);
    if (stats) stats->resize(kept);
    return files;
}

constexpr std::string_view kBlobPrefix = "sha256-";

// The digest a blob name "sha256-<64 lowercase hex>" spells; nullopt for any other name.
std::optional<Sha256Bytes> blob_name_digest(std::string_view name) {
    if (!name.starts_with(kBlobPrefix)) return std::nullopt;
    return sha256_bytes(name.substr(kBlobPrefix.size()));
}

bool same_directory(int a, int b) {
    struct stat sa {};
    struct stat sb {};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::vector<BlobFile> Store::blob_files() const {
    UniqueFd listing;
    return list_blob_files(m_root, listing, nullptr);
}

BlobDirectory open_listed_blob_directory(const Store& store) {
    BlobDirectory d = open_blob_directory(store);
    UniqueFd listing;
    std::vector<struct stat> stats;
    d.files = list_blob_files(store.root(), listing, &stats);
    if (!d.fd.valid() || !listing.valid() || !same_directory(d.fd.get(), listing.get())) return d;
    d.listed = std::move(stats);
    d.listed_index = DigestIndex(d.files.size());
    for (size_t i = 0; i < d.files.size(); ++i)
        if (std::optional<Sha256Bytes> digest = blob_name_digest(d.files[i].name)) d.listed_index.insert(*digest, static_cast<uint32_t>(i));
    return d;
}

const struct stat* BlobDirectory::listed_stat(std::string_view name) const {
    if (listed.size() != files.size()) return nullptr;
    size_t at = files.size();
    if (std::optional<Sha256Bytes> digest = blob_name_digest(name)) {
        if (std::optional<uint32_t> found = listed_index.find(*digest)) at = *found;
    } else {
        auto it = std::lower_bound(files.begin(), files.end(), name, [](const BlobFile& f, std::string_view n) { return f.name < n; });
        if (it != files.end() && it->name == name) at = static_cast<size_t>(it - files.begin());
    }
    if (at == files.size()) return nullptr;
    const struct stat& st = listed[at];
    return st.st_mode != 0 ? &st : nullptr;
}

}  // namespace mlens
