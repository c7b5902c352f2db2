// The manifest walk: four fixed levels, each directory opened from its parent's descriptor with
// O_NOFOLLOW, so the walk can neither follow a symlink nor go deeper than the tag files.
#include <fcntl.h>

#include <cerrno>
#include <map>

#include "mlens/ollama/store.h"
#include "mlens/text/escape.h"
#include "posix_dir.h"

namespace mlens {

namespace {

constexpr NamePart kLevels[] = {NamePart::host, NamePart::name_space, NamePart::model, NamePart::tag};

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

class Walker {
public:
    Walker(StoreScan& out, JobContext* job) : m_out(out), m_job(job) {}

    // Walks the directory `dir` (at `path`, relative to the root) whose entries are at `level`.
    void walk(int dir, const std::string& path, size_t level, ModelName& name) {
        bool truncated = false;
        int list_error = 0;
        std::vector<DirEntry> entries = list_directory(dir, kMaxDirectoryEntries, truncated, &list_error);
        if (list_error) unreadable(path, list_error);
        if (truncated)
            skip(ErrorCode::W_SCAN_LIMIT, path,
                 "more than " + std::to_string(kMaxDirectoryEntries) +
                     " entries; the rest skipped (limit max_directory_entries=" + std::to_string(kMaxDirectoryEntries) + ")");
        warn_case_collisions(entries, path);
        const NamePart part = kLevels[level];
        for (const DirEntry& e : entries) {
            if (m_stopped || job_cancelled(m_job)) return;
            const std::string entry_path = path + "/" + escape_for_display(e.name, 120);
            if (e.stat_error) {
                unreadable(entry_path, e.stat_error);
                continue;
            }
            if (S_ISLNK(e.st.st_mode)) {
                skip(ErrorCode::W_SYMLINK_SKIPPED, entry_path, "a symlink; symlinks under manifests/ are never followed");
                continue;
            }
            if (!name_part_valid(part, e.name)) {
                skip(ErrorCode::W_INVALID_NAME, entry_path, std::string("not a valid ") + name_part_label(part) + " name; skipped");
                continue;
            }
            if (auto why = nonportable_reason(e.name)) warn(ErrorCode::W_NONPORTABLE_NAME, entry_path, *why);
            set_part(name, part, e.name);
            if (part == NamePart::tag) {
                add_manifest(e, entry_path, name);
                continue;
            }
            if (!S_ISDIR(e.st.st_mode)) {
                skip(ErrorCode::W_INVALID_NAME, entry_path,
                     std::string("is ") + file_type_text(e.st.st_mode) + " where a " + name_part_label(part) +
                         " directory belongs; skipped");
                continue;
            }
            UniqueFd child = open_directory_at(dir, e.name);
            if (!child.valid()) {
                int err = errno;
                if (err == ELOOP || err == ENOTDIR)
                    skip(ErrorCode::W_SYMLINK_SKIPPED, entry_path, "could not be opened as a directory without following links; skipped");
                else
                    unreadable(entry_path, err);
                continue;
            }
            walk(child.get(), entry_path, level + 1, name);
        }
    }

private:
    void add_manifest(const DirEntry& e, const std::string& entry_path, const ModelName& name) {
        if (S_ISDIR(e.st.st_mode)) {
            skip(ErrorCode::W_INVALID_NAME, entry_path,
                 "a directory where the tag file belongs: manifests are exactly four levels "
                 "deep; not descended");
            return;
        }
        if (!S_ISREG(e.st.st_mode)) {
            skip(ErrorCode::W_NOT_REGULAR_FILE, entry_path,
                 std::string("is ") + file_type_text(e.st.st_mode) + ", not a manifest file; skipped");
            return;
        }
        if (m_out.manifests.size() >= kMaxManifests) {
            skip(ErrorCode::W_SCAN_LIMIT, entry_path,
                 "more than " + std::to_string(kMaxManifests) +
                     " manifests; the rest skipped (limit max_manifests=" + std::to_string(kMaxManifests) + ")");
            m_stopped = true;
            return;
        }
        m_out.manifests.push_back({name, entry_path, e.st.st_mtime, static_cast<uint64_t>(e.st.st_size)});
    }

    static void set_part(ModelName& name, NamePart part, const std::string& value) {
        switch (part) {
            case NamePart::host:
                name.host = value;
                break;
            case NamePart::name_space:
                name.name_space = value;
                break;
            case NamePart::model:
                name.model = value;
                break;
            default:
                name.tag = value;
                break;
        }
    }

    void warn_case_collisions(const std::vector<DirEntry>& entries, const std::string& path) {
        std::map<std::string, const std::string*> seen;
        for (const DirEntry& e : entries) {
            auto [it, fresh] = seen.emplace(lower(e.name), &e.name);
            if (!fresh)
                warn(ErrorCode::W_NONPORTABLE_NAME, path + "/" + escape_for_display(e.name, 120),
                     "differs from \"" + escape_for_display(*it->second, 120) +
                         "\" only by case; they collide on "
                         "case-insensitive file systems");
        }
    }

    // A directory of the walk that cannot be read: the models below it cannot be listed, which is
    // an error naming it, never a silent skip.
    void unreadable(const std::string& field, int err) {
        m_out.complete = false;
        m_out.diagnostics.push_back({Severity::error, "store", open_error_code(err), field, std::nullopt,
                                     "cannot be read: " + open_error_text(err) + "; the models below it are not checked"});
    }

    void warn(ErrorCode code, const std::string& field, std::string message) {
        m_out.diagnostics.push_back({Severity::warning, "store", code, field, std::nullopt, std::move(message)});
    }

    // A warning for an entry the walk leaves out: a manifest may be behind it, so the scan no
    // longer sees every manifest (StoreScan::complete).
    void skip(ErrorCode code, const std::string& field, std::string message) {
        m_out.complete = false;
        warn(code, field, std::move(message));
    }

    StoreScan& m_out;
    JobContext* m_job;
    bool m_stopped = false;
};

}  // namespace

StoreScan Store::scan(JobContext* job) const {
    StoreScan out;
    UniqueFd root = open_directory_at(AT_FDCWD, m_root);
    UniqueFd manifests = root.valid() ? open_directory_at(root.get(), "manifests") : UniqueFd();
    if (!manifests.valid()) {
        int err = errno;
        // No manifests/ at all: no blob is referenced. One that is a symlink or not a folder may
        // hold manifests another program reads.
        out.complete = err == ENOENT;
        if (err == ENOENT || err == ELOOP || err == ENOTDIR)
            out.diagnostics.push_back({Severity::warning, "store", ErrorCode::W_NO_MANIFESTS, "manifests", std::nullopt,
                                       "no manifests directory (or it is a symlink, which is not followed)"});
        else
            out.diagnostics.push_back({Severity::error, "store", open_error_code(err), root.valid() ? "manifests" : ".", std::nullopt,
                                       "cannot be read: " + open_error_text(err) + "; no model can be listed"});
        return out;
    }
    ModelName name;
    Walker(out, job).walk(manifests.get(), "manifests", 0, name);
    return out;
}

}  // namespace mlens
