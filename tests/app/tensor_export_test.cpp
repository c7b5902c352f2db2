// Tensor table export: CSV, Markdown and JSON of the listed tensors, in the table's order, with
// hostile names kept from breaking the table.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "mlens/analysis/tensor_table_export.h"
#include "mlens/model/logical_tensors.h"

using namespace mlens;

namespace {

TensorInfo tensor(std::string name, std::vector<uint64_t> ne, std::optional<uint64_t> bytes, uint64_t offset) {
    TensorInfo t;
    t.name = std::move(name);
    t.type.name = bytes ? "F16" : "TYPE_99";
    t.ne = std::move(ne);
    t.n_elements = 1;
    for (uint64_t n : t.ne) t.n_elements *= n;
    t.n_bytes = bytes;
    t.data_offset = offset;
    return t;
}

struct Exported {
    Model model;
    std::vector<LogicalTensor> tensors;
    TensorListing listing;
    Exported() {
        model.tensors.push_back(tensor("blk.0.attn_q.weight", {4, 2}, 16, 1024));
        model.tensors.push_back(tensor("odd,\"name|with\\bits\n", {3}, std::nullopt, 2048));
        tensors = logical_tensors(model);
        // Listed in reverse order, with a layer summary row that the export leaves out.
        listing.rows = {{true, 0}, {false, 1}, {false, 0}};
    }
};

}  // namespace

TEST_CASE("tensor export writes CSV rows in the listing's order, quoting what needs it", "[gui-export]") {
    Exported e;
    const std::string csv = export_tensors(e.model, e.tensors, e.listing, TensorExportFormat::csv);
    CHECK(csv ==
          "name,type,shape,elements,bytes,offset,bits_per_weight\n"
          "\"odd,\"\"name|with\\bits\\x0A\",TYPE_99,3,3,,2048,\n"
          "blk.0.attn_q.weight,F16,4 x 2,8,16,1024,16.0000\n");
    CHECK(std::string(tensor_export_extension(TensorExportFormat::csv)) == "csv");
}

TEST_CASE("tensor export writes a Markdown table with '|' and '\\' escaped", "[gui-export]") {
    Exported e;
    const std::string md = export_tensors(e.model, e.tensors, e.listing, TensorExportFormat::markdown);
    std::istringstream lines(md);
    std::string header, rule, first, second, extra;
    std::getline(lines, header);
    std::getline(lines, rule);
    std::getline(lines, first);
    std::getline(lines, second);
    CHECK(header == "| name | type | shape | elements | bytes | offset | bits_per_weight |");
    CHECK(rule == "| --- | --- | --- | ---: | ---: | ---: | ---: |");
    CHECK(first == "| odd,\"name\\|with\\\\bits\\\\x0A | TYPE_99 | 3 | 3 |  | 2048 |  |");
    CHECK(second == "| blk.0.attn_q.weight | F16 | 4 x 2 | 8 | 16 | 1024 | 16.0000 |");
    CHECK_FALSE(std::getline(lines, extra));
}

TEST_CASE("tensor export writes JSON with exact names and null for unknown sizes", "[gui-export]") {
    Exported e;
    auto j = nlohmann::json::parse(export_tensors(e.model, e.tensors, e.listing, TensorExportFormat::json));
    REQUIRE(j.size() == 2);
    CHECK(j[0]["name"] == "odd,\"name|with\\bits\n");
    CHECK(j[0]["bytes"].is_null());
    CHECK(j[0]["bits_per_weight"].is_null());
    CHECK(j[1]["name"] == "blk.0.attn_q.weight");
    CHECK(j[1]["ne"] == std::vector<uint64_t>{4, 2});
    CHECK(j[1]["elements"] == 8);
    CHECK(j[1]["bytes"] == 16);
    CHECK(j[1]["offset"] == 1024);
    CHECK(j[1]["bits_per_weight"] == 16.0);
}
