// A folder of safetensors weights: one file or index + shards, plus the *.json files beside
// them. safetensors_reader.h states the contract and the decisions.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "keyed_hash.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/io/file_type.h"
#include "mlens/remote/remote_url.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/escape.h"
#include "mlx_quantized_folder.h"
#include "safetensors_index.h"

namespace mlens {

namespace {

namespace fs = std::filesystem;

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kWeightsName = "model.safetensors";
constexpr size_t kIndexMismatchWarnings = 20;

// A name that can only mean a file directly inside the folder.
bool is_plain_file_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
}

struct Listing {
    std::vector<std::string> json;  // *.json regular files (symlinks followed), sorted
    std::vector<std::string> safetensors;  // *.safetensors regular files, sorted
    std::vector<std::pair<std::string, std::string>> other_json;  // *.json entries of another kind, with what they are
};

// What a directory entry that is no regular file is, in words (file_type.h), symlinks followed.
std::string entry_kind(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::string("unreachable (") + std::strerror(errno) + ")";
    return file_type_text(st.st_mode);
}

Result<Listing> list_folder(const std::string& dir) {
    Listing l;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) return Error{ErrorCode::E_NOT_FOUND, "path", std::nullopt, "cannot list the folder: " + ec.message()};
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) return Error{ErrorCode::E_IO, "path", std::nullopt, "cannot list the folder: " + ec.message()};
        std::error_code type_ec;
        std::string name = it->path().filename().string();
        if (!it->is_regular_file(type_ec)) {
            if (name.ends_with(".json")) l.other_json.emplace_back(name, entry_kind(it->path()));
            continue;
        }
        if (name.ends_with(".json"))
            l.json.push_back(std::move(name));
        else if (name.ends_with(".safetensors"))
            l.safetensors.push_back(std::move(name));
    }
    std::sort(l.json.begin(), l.json.end());
    std::sort(l.safetensors.begin(), l.safetensors.end());
    return l;
}

// What to open: an index file name, or else one weights file name.
struct Choice {
    std::string index;
    std::string weights;
};

std::optional<Choice> choose_weights(const Listing& l) {
    auto has = [](const std::vector<std::string>& v, const char* name) { return std::binary_search(v.begin(), v.end(), name); };
    if (has(l.json, kIndexName)) return Choice{kIndexName, ""};
    if (has(l.safetensors, kWeightsName)) return Choice{"", kWeightsName};
    std::vector<std::string> indexes;
    for (const std::string& name : l.json)
        if (name.ends_with(".safetensors.index.json")) indexes.push_back(name);
    if (indexes.size() == 1) return Choice{indexes[0], ""};
    if (indexes.empty() && l.safetensors.size() == 1) return Choice{"", l.safetensors[0]};
    return std::nullopt;
}

class FolderReader {
public:
    FolderReader(std::string dir, const SafetensorsLimits& limits, JobContext* job, std::string query = {},
                 std::vector<std::string> optional_files = {})
        : m_dir(std::move(dir)), m_query(std::move(query)), m_optional(std::move(optional_files)), m_limits(limits), m_job(job) {
        m_model.format = Format::safetensors;
    }

    Model run(const Listing& listing, const Choice& choice) {
        if (!choice.index.empty())
            read_index(choice.index);
        else
            m_shards.push_back(choice.weights);
        read_shards();
        add_side_files(listing.json, choice.index);
        // Never opened (a FIFO would block the open): named, as config.json decides how the
        // tensors are read.
        for (const auto& [name, kind] : listing.other_json)
            m_model.diagnostics.push_back({Severity::warning, "safetensors", ErrorCode::W_SIDE_FILE_SKIPPED, "file:" + escape_for_display(name),
                                           std::nullopt, "cannot be read: " + kind + ", not a file", 0});
        for (Diagnostic& d : m_index_diagnostics) {
            d.file = m_index_file;
            m_model.diagnostics.push_back(std::move(d));
        }
        if (m_index) check_index();
        describe_mlx_quantization(m_model);
        return std::move(m_model);
    }

private:
    std::string path_of(const std::string& name) const { return m_dir + "/" + name; }
    // What a file beside the index is opened by: its path, with the index URL's query.
    Result<ByteSourcePtr> open_beside(const std::string& name) const { return open_source(path_of(name) + m_query); }

    void index_diagnostic(Severity s, ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
        m_index_diagnostics.push_back({s, "safetensors", code, std::move(field), offset, std::move(message), 0});
        if (s == Severity::error) m_model.partial = true;
    }

    void read_index(const std::string& name) {
        auto source = open_beside(name);
        if (!source)
            return index_diagnostic(Severity::error, source.error().code, "index", std::nullopt,
                                    escape_for_display(name) + ": " + source.error().message);
        m_index_source = *source;
        uint64_t size = m_index_source->size();
        if (size > m_limits.max_index_bytes)
            return index_diagnostic(
                Severity::error, ErrorCode::E_LIMIT, "index", std::nullopt,
                "the index has " + std::to_string(size) + " bytes, over limit max_index_bytes=" + std::to_string(m_limits.max_index_bytes));
        std::string text(size, '\0');
        if (!m_index_source->read(0, size, text.data()))
            return index_diagnostic(Severity::error, ErrorCode::E_IO, "index", 0, "cannot read the index");
        auto parsed = parse_safetensors_index(text, m_limits, m_job);
        if (!parsed) {
            const Error& e = parsed.error();
            return index_diagnostic(Severity::error, e.code, e.field, e.offset, e.message);
        }
        m_index = std::move(parsed).value();
        collect_shard_names();
    }

    void collect_shard_names() {
        std::unordered_set<std::string, KeyedHash> seen, rejected;
        for (const SafetensorsIndexEntry& e : m_index->weight_map) {
            if (seen.count(e.shard) || rejected.count(e.shard)) continue;
            if (!is_plain_file_name(e.shard)) {
                rejected.insert(e.shard);
                index_diagnostic(Severity::error, ErrorCode::E_SHARD_NAME, "weight_map." + escape_for_display(e.tensor, 64), e.shard_offset,
                                 "shard \"" + escape_for_display(e.shard) + "\" is not a plain file name inside the folder");
                continue;
            }
            seen.insert(e.shard);
            m_first_reference.emplace(e.shard, e.shard_offset);
        }
        if (seen.size() > m_limits.max_shards)
            return index_diagnostic(
                Severity::error, ErrorCode::E_LIMIT, "weight_map", std::nullopt,
                std::to_string(seen.size()) + " shard files exceed limit max_shards=" + std::to_string(m_limits.max_shards));
        m_shards.assign(seen.begin(), seen.end());
        std::sort(m_shards.begin(), m_shards.end());
    }

    void read_shards() {
        bool have_metadata = false;
        m_shard_complete.assign(m_shards.size(), false);
        for (uint32_t k = 0; k < m_shards.size(); ++k) {
            if (job_cancelled(m_job)) {
                const Error cancelled = cancelled_error("opening");
                index_diagnostic(Severity::error, cancelled.code, cancelled.field, cancelled.offset, cancelled.message);
                return;
            }
            m_model.files.resize(k + 1);
            m_model.files[k].path = path_of(m_shards[k]);
            auto source = open_beside(m_shards[k]);
            if (!source) {
                index_diagnostic(Severity::error, ErrorCode::E_SHARD_MISSING, m_index ? "weight_map" : "path",
                                 m_index ? std::optional<uint64_t>(m_first_reference[m_shards[k]]) : std::nullopt,
                                 "shard \"" + escape_for_display(m_shards[k]) + "\": " + source.error().message);
                continue;
            }
            Model part;
            m_shard_complete[k] = read_safetensors_into(part, *source, 0, m_limits, m_job);
            m_model.partial = m_model.partial || !m_shard_complete[k];
            m_model.take_part(part, static_cast<uint32_t>(k));
            if (!have_metadata) {
                for (MetadataEntry& e : part.metadata) {
                    e.file = k;
                    m_model.metadata.push_back(std::move(e));
                }
                have_metadata = true;
            }
        }
    }

    void add_side_files(const std::vector<std::string>& names, const std::string& index_name) {
        uint64_t kept = 0, skipped = 0;
        for (const std::string& name : names) {
            bool is_index = name == index_name && m_index_source;
            ByteSourcePtr source = is_index ? m_index_source : nullptr;
            if (!source) {
                if (kept >= m_limits.max_side_files) {
                    ++skipped;
                    continue;
                }
                auto opened = open_beside(name);
                if (!opened && opened.error().code == ErrorCode::E_NOT_FOUND &&
                    std::find(m_optional.begin(), m_optional.end(), name) != m_optional.end())
                    continue;
                if (!opened) {
                    // A FIFO, a folder, a dangling symlink, an unreadable file or one gone since the
                    // listing: said, as config.json decides how the tensors are read.
                    m_model.diagnostics.push_back({Severity::warning, "safetensors", ErrorCode::W_SIDE_FILE_SKIPPED,
                                                   "file:" + escape_for_display(name), std::nullopt,
                                                   "cannot be read: " + opened.error().message, 0});
                    continue;
                }
                source = *opened;
                if (source->size() > m_limits.max_side_file_bytes) {
                    m_model.diagnostics.push_back(
                        {Severity::warning, "safetensors", ErrorCode::W_SIDE_FILE_SKIPPED, "file:" + escape_for_display(name), std::nullopt,
                         std::to_string(source->size()) +
                             " bytes exceed limit max_side_file_bytes=" + std::to_string(m_limits.max_side_file_bytes),
                         0});
                    continue;
                }
            }
            uint32_t file = static_cast<uint32_t>(m_model.files.size());
            if (is_index) m_index_file = file;
            add_side_file(name, source, file);
            ++kept;
        }
        if (skipped > 0)
            m_model.diagnostics.push_back(
                {Severity::warning, "safetensors", ErrorCode::W_SIDE_FILE_SKIPPED, "path", std::nullopt,
                 std::to_string(skipped) + " more .json files beyond limit max_side_files=" + std::to_string(m_limits.max_side_files), 0});
    }

    void add_side_file(const std::string& name, const ByteSourcePtr& source, uint32_t file) {
        SourceFile sf;
        sf.path = path_of(name);
        sf.source = source;
        sf.alignment = 1;
        sf.header_bytes = source->size();
        m_model.files.push_back(std::move(sf));
        MetadataEntry e;
        e.key = "file:" + name;
        e.file = file;
        e.value.type = ValueType::string;
        e.value_range = {0, source->size()};
        if (source->size() > Value::kInlineStringBytes) {
            e.value.lazy_text = LazyBytes{source, 0, source->size()};
        } else {
            e.value.text.resize(source->size());
            if (!source->read(0, source->size(), e.value.text.data())) return;
            if (!utf8_valid(e.value.text))
                m_model.diagnostics.push_back(
                    {Severity::warning, "safetensors", ErrorCode::W_INVALID_UTF8, e.key, 0, "the file is not valid UTF-8", file});
        }
        m_model.metadata.push_back(std::move(e));
    }

    // Compares weight_map with the shards that were read completely. Disagreements are warnings (a
    // loader reads each shard whole), except one tensor name in two shards.
    void check_index() {
        std::unordered_map<std::string, uint32_t, KeyedHash> shard_file;
        for (uint32_t k = 0; k < m_shards.size(); ++k) shard_file.emplace(m_shards[k], k);
        std::unordered_map<std::string, uint32_t, KeyedHash> holder;
        std::unordered_set<std::string, KeyedHash> listed;
        for (const SafetensorsIndexEntry& e : m_index->weight_map) listed.insert(e.tensor);
        size_t mismatches = 0;
        auto mismatch = [&](std::string field, uint32_t file, uint64_t offset, std::string message) {
            if (++mismatches <= kIndexMismatchWarnings)
                m_model.diagnostics.push_back(
                    {Severity::warning, "safetensors", ErrorCode::W_INDEX_MISMATCH, std::move(field), offset, std::move(message), file});
        };
        for (const TensorInfo& t : m_model.tensors) {
            std::string name = escape_for_display(t.name, 64);
            if (!holder.emplace(t.name, t.file).second) {
                m_model.diagnostics.push_back({Severity::error, "safetensors", ErrorCode::E_DUPLICATE_TENSOR, name, t.info_range.offset,
                                               "\"" + name + "\" is also in shard \"" + escape_for_display(m_shards[holder[t.name]]) + "\"",
                                               t.file});
                m_model.partial = true;
            } else if (!listed.count(t.name)) {
                mismatch(name, t.file, t.info_range.offset, "\"" + name + "\" is not in the index's weight_map");
            }
        }
        for (const SafetensorsIndexEntry& e : m_index->weight_map) {
            auto shard = shard_file.find(e.shard);
            if (shard == shard_file.end() || !m_shard_complete[shard->second]) continue;
            auto found = holder.find(e.tensor);
            std::string where = "\"" + escape_for_display(e.shard) + "\"";
            if (found == holder.end())
                mismatch("weight_map." + escape_for_display(e.tensor, 64), m_index_file, e.shard_offset,
                         "listed in shard " + where + ", which does not hold it");
            else if (found->second != shard->second)
                mismatch("weight_map." + escape_for_display(e.tensor, 64), m_index_file, e.shard_offset,
                         "listed in shard " + where + " but found in \"" + escape_for_display(m_shards[found->second]) + "\"");
        }
        if (mismatches > kIndexMismatchWarnings)
            m_model.diagnostics.push_back(
                {Severity::warning, "safetensors", ErrorCode::W_INDEX_MISMATCH, "weight_map", std::nullopt,
                 std::to_string(mismatches - kIndexMismatchWarnings) + " more disagreements between weight_map and the shards",
                 m_index_file});
    }

    std::string m_dir;
    std::string m_query;  // of a remote index's URL, for the files beside it
    std::vector<std::string> m_optional;  // side files tried without being listed: missing is no finding
    const SafetensorsLimits& m_limits;
    JobContext* m_job;
    Model m_model;

    ByteSourcePtr m_index_source;
    uint32_t m_index_file = 0;
    std::optional<SafetensorsIndex> m_index;
    std::vector<Diagnostic> m_index_diagnostics;  // their file is known once the side files are added
    std::unordered_map<std::string, uint64_t, KeyedHash> m_first_reference;  // shard name -> first weight_map value naming it
    std::vector<std::string> m_shards;
    std::vector<bool> m_shard_complete;
};

}  // namespace

Result<Model> open_safetensors_index(const std::string& index_url, const SafetensorsLimits& limits, JobContext* job) {
    const std::string query = url_query(index_url);
    const std::string base = index_url.substr(0, index_url.find_first_of("?#"));
    const size_t slash = base.rfind('/');
    // No listing of a folder over HTTP: the index, and the config.json a checkpoint has beside
    // it when the server has one (its absence is no finding).
    Listing listing;
    listing.json = {base.substr(slash + 1), "config.json"};
    return FolderReader(base.substr(0, slash), limits, job, query, {"config.json"}).run(listing, Choice{listing.json[0], ""});
}

Result<Model> open_safetensors_folder(const std::string& dir, const SafetensorsLimits& limits, JobContext* job) {
    auto listing = list_folder(dir);
    if (!listing) return listing.error();
    auto choice = choose_weights(*listing);
    if (!choice)
        return Error{ErrorCode::E_NOT_REGULAR_FILE, "path", std::nullopt,
                     "a directory is not a model file, and this one holds no model.safetensors, "
                     "model.safetensors.index.json or single *.safetensors"};
    return FolderReader(dir, limits, job).run(*listing, *choice);
}

}  // namespace mlens
