#include "mlens/analysis/tensor_table_export.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "mlens/model/shape_text.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

struct ExportRow {
    std::string name, type, shape, elements, bytes, offset, bpw;
};

std::string bpw_text(const LogicalTensor& t) {
    if (!t.bytes) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", t.bits_per_weight());
    return buf;
}

std::vector<ExportRow> rows_of(const Model& model, const std::vector<LogicalTensor>& tensors, const TensorListing& listing) {
    std::vector<ExportRow> rows;
    for (const TensorRow& r : listing.rows) {
        if (r.layer_row) continue;
        const LogicalTensor& t = tensors[r.index];
        const TensorInfo& main = model.tensors[t.index];
        rows.push_back({main.name, t.type, shape_text(t.ne, ShapeStyle::plain_x, shape_order(model.format)), std::to_string(t.elements),
                        t.bytes ? std::to_string(*t.bytes) : "", std::to_string(main.data_offset), bpw_text(t)});
    }
    return rows;
}

std::string csv_field(const std::string& raw) {
    std::string v = escape_for_display(raw, raw.size() + 1);
    if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
    std::string out = "\"";
    for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string md_field(const std::string& raw) {
    std::string out;
    for (char c : escape_for_display(raw, raw.size() + 1)) {
        if (c == '|' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

const char* const kHeader[] = {"name", "type", "shape", "elements", "bytes", "offset", "bits_per_weight"};

}  // namespace

const char* tensor_export_extension(TensorExportFormat format) {
    static constexpr NameRow<TensorExportFormat> kNames[] = {
        {TensorExportFormat::csv, "csv"}, {TensorExportFormat::markdown, "md"}, {TensorExportFormat::json, "json"}};
    return name_of(kNames, format, "txt");
}

std::string export_tensors(const Model& model, const std::vector<LogicalTensor>& tensors, const TensorListing& listing,
                           TensorExportFormat format) {
    if (format == TensorExportFormat::json) {
        nlohmann::json array = nlohmann::json::array();
        for (const TensorRow& r : listing.rows) {
            if (r.layer_row) continue;
            const LogicalTensor& t = tensors[r.index];
            const nlohmann::json unknown = nullptr;
            array.push_back({{"name", model.tensors[t.index].name},
                             {"type", t.type},
                             {"ne", t.ne},
                             {"elements", t.elements},
                             {"bytes", t.bytes ? nlohmann::json(*t.bytes) : unknown},
                             {"offset", model.tensors[t.index].data_offset},
                             {"bits_per_weight", t.bytes ? nlohmann::json(t.bits_per_weight()) : unknown}});
        }
        return array.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& fields) {
        if (format == TensorExportFormat::csv) {
            for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
        } else {
            out += "|";
            for (const std::string& f : fields) out += " " + md_field(f) + " |";
        }
        out += "\n";
    };
    line({std::begin(kHeader), std::end(kHeader)});
    if (format == TensorExportFormat::markdown) out += "| --- | --- | --- | ---: | ---: | ---: | ---: |\n";
    for (const ExportRow& r : rows_of(model, tensors, listing)) line({r.name, r.type, r.shape, r.elements, r.bytes, r.offset, r.bpw});
    return out;
}

}  // namespace mlens
