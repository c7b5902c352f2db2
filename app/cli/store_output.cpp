// Store listings and manifests, as tables or JSON. Every string that came from the store (names
// aside, which passed the name grammar) is escaped and capped before it is printed.
#include "store_output.h"

#include <ctime>
#include <iostream>

#include "cli_common.h"
#include "command_cache.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/store_export.h"
#include "mlens/ollama/store_listing.h"
#include "mlens/ollama/store_summary.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

std::string utc_time_text(int64_t seconds) {
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    if (!::gmtime_r(&t, &tm)) return "-";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
    return buf;
}

namespace {

std::string format_label(const std::string& format) {
    if (format == "gguf") return "GGUF";
    if (format == "safetensors") return "safetensors";
    return format.empty() ? "-" : escape_for_display(format, 20);
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : escape_for_display(s, 40); }
// What the config does not say is null in JSON, as it is "-" in the table.
nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(escape_for_display(s, 200)); }

nlohmann::json diagnostics_json(const std::vector<Diagnostic>& ds) {
    nlohmann::json out = nlohmann::json::array();
    for (const Diagnostic& d : ds) out.push_back(diagnostic_to_json(d));
    return out;
}

// Export applies to a model the check accepts.
std::vector<ExportFormat> listed_export_formats(const ModelListing& m) {
    return m.ok() ? export_formats_of(m.format) : std::vector<ExportFormat>{};
}

nlohmann::json export_formats_json(const ModelListing& m) {
    nlohmann::json out = nlohmann::json::array();
    for (ExportFormat f : listed_export_formats(m)) out.push_back(export_format_name(f));
    return out;
}

std::string export_formats_text(const ModelListing& m) {
    std::string out;
    for (ExportFormat f : listed_export_formats(m)) out += (out.empty() ? "" : ",") + std::string(export_format_name(f));
    return out.empty() ? "-" : out;
}

nlohmann::json listing_json(const StoreListing& l) {
    nlohmann::json models = nlohmann::json::array();
    for (const ModelListing& m : l.models) {
        const ModelName& n = m.ref.name;
        models.push_back({{"name", n.display()},
                          {"full_name", n.full()},
                          {"host", n.host},
                          {"namespace", n.name_space},
                          {"model", n.model},
                          {"tag", n.tag},
                          {"manifest", m.ref.path},
                          {"size", m.size ? nlohmann::json(*m.size) : nlohmann::json(nullptr)},
                          {"format", or_null(m.format)},
                          {"family", or_null(m.family)},
                          {"parameters", m.parameters ? nlohmann::json(*m.parameters) : nlohmann::json(nullptr)},
                          {"parameter_size", or_null(m.parameter_size)},
                          {"quantization", or_null(m.quantization)},
                          {"modified", m.ref.modified},
                          {"ok", m.ok()},
                          {"verdict", verdict_name(m.check.verdict())},
                          {"reason", m.check.reason_text()},
                          {"errors", m.check.errors},
                          {"warnings", m.check.warnings},
                          {"digests_verified", m.check.digests_verified},
                          {"diagnostics", diagnostics_json(m.check.reasons)},
                          {"export_formats", export_formats_json(m)},
                          {"loads", m.loads ? loadability_json(*m.loads) : nlohmann::json(nullptr)}});
    }
    nlohmann::json blobs = nlohmann::json::array();
    for (const ListedBlobFile& b : l.blob_files)
        blobs.push_back({{"name", escape_for_display(b.file.name, 200)},
                         {"kind", blob_file_kind_name(b.file.kind.kind)},
                         {"regular", b.file.regular},
                         {"size", b.file.size},
                         {"referenced", b.referenced || l.references_known ? nlohmann::json(b.referenced) : nlohmann::json(nullptr)}});
    return {{"root", l.root},
            {"models", models},
            {"diagnostics", diagnostics_json(l.diagnostics)},
            {"blob_files", blobs},
            {"references_known", l.references_known},
            {"digests_verified", l.digests_verified}};
}

void print_blob_summary(const StoreListing& l) {
    const BlobFilesSummary s = l.blob_summary();
    std::cout << "blobs: " << s.blobs << " (" << human_bytes(s.bytes) << "), "
              << (s.unreferenced ? std::to_string(*s.unreferenced) + " unreferenced" : std::string("unreferenced unknown (not every manifest was seen and read)"))
              << ", " << s.partial << " partial download files, " << s.temporary << " temporary, " << s.legacy << " legacy names, " << s.other
              << " other entries\n";
}

// The STATUS cell: "ok", "ok, N warnings", "not yet verified", or the first error's code and
// where it is.
std::string status_text(const ModelCheck& c) {
    if (c.first_error()) return c.short_reason();
    if (c.unverified) return "not yet verified";
    return c.warnings ? "ok, " + std::to_string(c.warnings) + (c.warnings == 1 ? " warning" : " warnings") : "ok";
}

}  // namespace

int print_store_listing(const Store& store, const StoreShowOptions& options) {
    std::shared_ptr<CacheDatabase> cache = command_cache(options.no_cache);
    StoreCheckOptions check = options.cached ? cached_check(*cache) : options.verify ? full_check(cache.get()) : kStructureCheck;
    check.cache = cache.get();
    StoreListing l = list_store(store, check).value;
    const bool broken = l.error_count() > 0;
    const bool json = options.json;
    if (json) {
        print_json_result(listing_json(l));
        return broken ? kExitBroken : kExitOk;
    }
    for (const Diagnostic& d : l.diagnostics) std::cerr << d.to_line() << "\n";
    std::cout << "store " << escape_for_display(l.root, 400) << "\n";
    std::vector<std::vector<std::string>> rows = {{"NAME", "SIZE", "FORMAT", "FAMILY", "PARAMS", "QUANT", "MODIFIED", "EXPORT", "LLAMA.CPP", "STATUS"}};
    for (const ModelListing& m : l.models) {
        for (const Diagnostic& d : m.check.reasons) std::cerr << d.to_line() << "\n";
        rows.push_back({m.ref.name.display(), m.size ? human_bytes(*m.size) : "unknown", format_label(m.format), or_dash(m.family),
                        or_dash(escape_for_display(parameters_text(m.parameters, m.parameter_size), 60)), or_dash(m.quantization),
                        utc_time_text(m.ref.modified), export_formats_text(m), m.loads ? m.loads->label() : "-", status_text(m.check)});
    }
    print_table(rows);
    print_blob_summary(l);
    if (options.cached)
        std::cout << "from manifests, config blobs and the cache only; \"not yet verified\": blobs the cache does not know\n";
    else if (!l.digests_verified)
        std::cout << "digests not verified: " << (broken ? "the blobs found were" : "every blob was found,")
                  << " read and parsed, not hashed (--verify hashes them)\n";
    return broken ? kExitBroken : kExitOk;
}

}  // namespace mlens::cli
