#include "mlens/analysis/fsck_json.h"

namespace mlens {

namespace {

nlohmann::json optional_json(const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json location_json(const FsckLocation& at) {
    return {{"element", at.element},       {"file", at.file},
            {"expert", optional_json(at.expert)}, {"row", optional_json(at.row)},
            {"column", optional_json(at.column)}, {"block", optional_json(at.block)},
            {"offset", optional_json(at.offset)}};
}

nlohmann::json finding_json(const Finding& f) {
    nlohmann::json j = {{"severity", finding_severity_name(f.severity)},
                        {"code", code_name(f.code)},
                        {"field", f.field},
                        {"tensor", f.tensor},
                        {"count", f.count},
                        {"message", f.message}};
    j["tensor_index"] = f.tensor_index ? nlohmann::json(*f.tensor_index) : nlohmann::json();
    j["other_tensor"] = f.other_tensor ? nlohmann::json(*f.other_tensor) : nlohmann::json();
    j["other_expert"] = optional_json(f.other_expert);
    j["locations"] = nlohmann::json::array();
    for (const FsckLocation& at : f.locations) j["locations"].push_back(location_json(at));
    return j;
}

// Reading back: every field must be there with its type, or the whole report is refused.
struct Reader {
    bool ok = true;

    const nlohmann::json& at(const nlohmann::json& j, const char* key) {
        static const nlohmann::json missing;
        auto it = j.find(key);
        if (it == j.end()) {
            ok = false;
            return missing;
        }
        return *it;
    }
    uint64_t number(const nlohmann::json& j, const char* key) {
        const nlohmann::json& v = at(j, key);
        if (!v.is_number_unsigned()) return ok = false, 0;
        return v.get<uint64_t>();
    }
    std::optional<uint64_t> optional_number(const nlohmann::json& j, const char* key) {
        const nlohmann::json& v = at(j, key);
        if (v.is_null()) return std::nullopt;
        if (!v.is_number_unsigned()) return ok = false, std::nullopt;
        return v.get<uint64_t>();
    }
    std::string text(const nlohmann::json& j, const char* key) {
        const nlohmann::json& v = at(j, key);
        if (!v.is_string()) return ok = false, std::string();
        return v.get<std::string>();
    }

    FsckLocation location(const nlohmann::json& j) {
        FsckLocation at_;
        at_.element = number(j, "element");
        at_.file = static_cast<uint32_t>(number(j, "file"));
        at_.expert = optional_number(j, "expert");
        at_.row = optional_number(j, "row");
        at_.column = optional_number(j, "column");
        at_.block = optional_number(j, "block");
        at_.offset = optional_number(j, "offset");
        return at_;
    }

    Finding finding(const nlohmann::json& j) {
        Finding f;
        const std::string severity = text(j, "severity");
        bool known = false;
        for (FindingSeverity s : {FindingSeverity::info, FindingSeverity::warning, FindingSeverity::error})
            if (severity == finding_severity_name(s)) f.severity = s, known = true;
        std::optional<ErrorCode> code = code_from_name(text(j, "code"));
        if (!known || !code) ok = false;
        if (code) f.code = *code;
        f.field = text(j, "field");
        f.tensor = text(j, "tensor");
        std::optional<uint64_t> index = optional_number(j, "tensor_index");
        if (index) f.tensor_index = static_cast<size_t>(*index);
        f.count = number(j, "count");
        f.message = text(j, "message");
        const nlohmann::json& other = at(j, "other_tensor");
        if (other.is_string())
            f.other_tensor = other.get<std::string>();
        else if (!other.is_null())
            ok = false;
        f.other_expert = optional_number(j, "other_expert");
        const nlohmann::json& locations = at(j, "locations");
        if (!locations.is_array()) ok = false;
        for (const nlohmann::json& l : locations.is_array() ? locations : nlohmann::json::array()) f.locations.push_back(location(l));
        return f;
    }
};

// The identity of every file of the model as opened, if each is a local file that still has it.
std::optional<std::vector<FileStamp>> current_stamps(const Model& model) {
    std::vector<FileStamp> out;
    for (const SourceFile& f : model.files) {
        std::optional<FileStamp> opened = f.source ? f.source->stamp() : std::nullopt;
        if (!opened || file_stamp(f.source->path()) != opened) return std::nullopt;
        out.push_back(*opened);
    }
    if (out.empty()) return std::nullopt;
    return out;
}

std::string stamps_detail(const std::vector<FileStamp>& ids) {
    std::string detail = "fsck";
    for (size_t i = 1; i < ids.size(); ++i)
        detail += " " + std::to_string(ids[i].device) + ":" + std::to_string(ids[i].inode) + ":" + std::to_string(ids[i].size) + ":" +
            std::to_string(ids[i].mtime_ns) + ":" + std::to_string(ids[i].ctime_ns);
    return detail;
}

}  // namespace

nlohmann::json fsck_report_json(const FsckReport& report) {
    nlohmann::json out = {{"tensors", report.tensors},
                          {"tensors_scanned", report.tensors_scanned},
                          {"tensors_scanned_in_part", report.tensors_scanned_in_part},
                          {"values_scanned", report.values_scanned},
                          {"bytes_scanned", report.bytes_scanned},
                          {"findings", nlohmann::json::array()}};
    for (const Finding& f : report.findings) out["findings"].push_back(finding_json(f));
    return out;
}

std::optional<FsckReport> fsck_report_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    Reader r;
    FsckReport report;
    report.tensors = r.number(j, "tensors");
    report.tensors_scanned = r.number(j, "tensors_scanned");
    report.tensors_scanned_in_part = r.number(j, "tensors_scanned_in_part");
    report.values_scanned = r.number(j, "values_scanned");
    report.bytes_scanned = r.number(j, "bytes_scanned");
    const nlohmann::json& findings = r.at(j, "findings");
    if (!findings.is_array()) return std::nullopt;
    for (const nlohmann::json& f : findings) report.findings.push_back(r.finding(f));
    if (!r.ok) return std::nullopt;
    return report;
}

Result<FsckReport> fsck_model_cached(const Model& model, CacheDatabase* cache, JobContext* job, unsigned threads, CachedScan mode) {
    std::optional<std::vector<FileStamp>> ids = cache && cache->enabled() ? current_stamps(model) : std::nullopt;
    if (!ids) return fsck_model(model, job, threads);
    const std::string detail = stamps_detail(*ids);
    if (mode == CachedScan::reuse)
        if (std::optional<std::string> text = cache->lookup(CacheKind::fsck_summary, ids->front(), detail))
            if (std::optional<FsckReport> cached = fsck_report_from_json(nlohmann::json::parse(*text, nullptr, false))) return *cached;
    Result<FsckReport> report = fsck_model(model, job, threads);
    if (report && current_stamps(model) == ids) {
        cache->store(CacheKind::fsck_summary, ids->front(), detail, fsck_report_json(*report).dump());
        cache->flush();
    }
    return report;
}

}  // namespace mlens
