// Output people can read (issue 34): text fitted to the terminal, names in natural order, a cut
// file as one finding, the first facts of a model, units and uncertainties, recipes as runs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "cli_runner.h"
#include "mlens/analysis/fsck.h"
#include "mlens/analysis/model_overview.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/analysis/requant_reference.h"
#include "mlens/model/summary.h"
#include "mlens/model/truncation.h"
#include "mlens/open/target.h"
#include "mlens/text/plural.h"
#include "mlens/text/display_width.h"
#include "mlens/text/fit_width.h"
#include "mlens/text/natural_order.h"
#include "mlens/text/significant.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// The F32 demo model cut in the middle of its tensor data: some tensors whole, one partial, the
// rest missing.
std::string cut_demo(TempDir& dir) {
    std::ifstream in(demo("tiny-llama-f32.gguf"), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(bytes.size() * 52 / 100);  // inside blk.0: blk.1 and the output are gone
    write_whole_file(dir.file("cut.gguf"), bytes);
    return dir.file("cut.gguf");
}

size_t widest_line(const std::string& text) {
    size_t widest = 0;
    for (const std::string& line : lines_of(text)) widest = std::max(widest, display_width(line));
    return widest;
}

}  // namespace

TEST_CASE("elide_middle keeps the end of a name and never splits a wide character", "[text][width]") {
    CHECK(elide_middle("blk.0.attn_q.weight", 40) == "blk.0.attn_q.weight");
    const std::string cut = elide_middle("model.layers.12.mlp.experts.3.down_proj.weight", 30);
    CHECK(display_width(cut) <= 30);
    CHECK(cut.find("\xE2\x80\xA6") != std::string::npos);
    CHECK(cut.ends_with("experts.3.down_proj.weight") == false);  // two thirds of 29 columns is 20
    CHECK(cut.ends_with("3.down_proj.weight"));
    CHECK(cut.starts_with("model."));
    CHECK(elide_middle("abc", 1) == "\xE2\x80\xA6");
    CHECK(elide_middle("abc", 0).empty());
    const std::string wide = elide_middle("\xE6\xBC\xA2\xE6\xBC\xA2\xE6\xBC\xA2\xE6\xBC\xA2", 6);  // 漢漢漢漢: 8 columns
    CHECK(display_width(wide) <= 6);
    CHECK(wide == "\xE2\x80\xA6\xE6\xBC\xA2\xE6\xBC\xA2");  // …漢漢: 5 columns, no half character
}

TEST_CASE("wrap_words breaks long lines between words with a hanging indent", "[text][width]") {
    CHECK(wrap_words("short line", 80) == std::vector<std::string>{"short line"});
    const std::vector<std::string> pieces = wrap_words("  evidence: one two three four five six", 20);
    REQUIRE(pieces.size() == 3);
    CHECK(pieces[0] == "  evidence: one two");
    CHECK(pieces[1] == "    three four five");
    CHECK(pieces[2] == "    six");
    for (const std::string& p : pieces) CHECK(display_width(p) <= 20);
    // One word wider than the room stays whole on a piece of its own.
    const std::vector<std::string> token = wrap_words("a 0123456789012345678901234 b", 10);
    CHECK(token == std::vector<std::string>{"a", "  0123456789012345678901234", "  b"});
}

TEST_CASE("natural_less orders numbers inside names by value", "[text]") {
    CHECK(natural_less("tensors[2]", "tensors[10]"));
    CHECK_FALSE(natural_less("tensors[10]", "tensors[2]"));
    CHECK(natural_less("blk.9.attn_q.weight", "blk.10.attn_q.weight"));
    CHECK(natural_less("a", "b"));
    CHECK(natural_less("x1", "x01") != natural_less("x01", "x1"));
    CHECK_FALSE(natural_less("same", "same"));
    CHECK(natural_less("blk.1", "blk.1.x"));
    std::vector<std::string> names = {"tensors[10]", "tensors[1]", "tensors[0]", "tensors[2]"};
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    CHECK(names == std::vector<std::string>{"tensors[0]", "tensors[1]", "tensors[2]", "tensors[10]"});
}

TEST_CASE("a measurement shows the digits its uncertainty supports", "[text]") {
    CHECK(plus_minus(12.3456, 0.0789) == std::make_pair(std::string("12.346"), std::string("0.079")));
    CHECK(plus_minus(5012.3, 48.1) == std::make_pair(std::string("5012"), std::string("48")));
    CHECK(plus_minus(0.5, 0.00012) == std::make_pair(std::string("0.50000"), std::string("0.00012")));
    CHECK(plus_minus(3.0, 0.0999) == std::make_pair(std::string("3.00"), std::string("0.10")));
    CHECK(plus_minus(7.25, 0) == std::make_pair(std::string("7.25"), std::string("0")));
    CHECK(plus_minus_text(12.3456, 0.0789) == "12.346 \xC2\xB1 0.079");
    CHECK(percent_text(0.01234) == "1.23%");
    CHECK(percent_text(-0.0005) == "-0.05%");
    CHECK(plural(1, "tensor", "tensors") == "1 tensor");
    CHECK(plural(21, "tensor", "tensors") == "21 tensors");
    CHECK(mib_text(3 << 20) == "3.00 MiB");
    CHECK(mib_text(1536 * 1024) == "1.50 MiB");
}

TEST_CASE("a recipe reads as runs of layers per short kind", "[recipe][width]") {
    auto m = open_model(demo("tiny-llama-q4_0.gguf"));
    REQUIRE(m.ok());
    const std::vector<RecipeRun> runs = recipe_runs(quant_recipe(*m));
    REQUIRE(runs.size() == 9);  // nine kinds, both layers of one type each
    CHECK(short_kind(runs[1].kind) == "attn_q");
    CHECK(runs[1].first_layer == 0);
    CHECK(runs[1].last_layer == 1);
    CHECK(runs[1].type == "Q4_0");
    CHECK(short_kind("attn_k.bias") == "attn_k.bias");
    CHECK(short_kind(".weight") == ".weight");

    QuantRecipe mixed;
    mixed.kinds = {"ffn_down.weight"};
    for (uint32_t layer : {0u, 1u, 2u, 4u}) {
        RecipeCell c;
        c.type = layer == 2 ? "Q6_K" : "Q4_K";
        mixed.layers.push_back({layer, {c}});
    }
    const std::vector<RecipeRun> split = recipe_runs(mixed);
    REQUIRE(split.size() == 3);
    CHECK((split[0].first_layer == 0 && split[0].last_layer == 1 && split[0].type == "Q4_K"));
    CHECK((split[1].first_layer == 2 && split[1].last_layer == 2 && split[1].type == "Q6_K"));
    CHECK((split[2].first_layer == 4 && split[2].last_layer == 4));  // layer 3 is missing: a new run
}

TEST_CASE("a cut file is one finding with its cut tensors under it, in natural order", "[truncation][fsck]") {
    TempDir dir;
    const std::string path = cut_demo(dir);
    auto m = open_model(path);
    REQUIRE(m.ok());
    REQUIRE(m->diagnostics.front().code == ErrorCode::E_TRUNCATED_DATA);
    const std::vector<size_t> cut = cut_tensors(*m, 0);
    REQUIRE(cut.size() >= 2);
    for (size_t i = 1; i < cut.size(); ++i) CHECK(natural_less(m->tensors[cut[i - 1]].name, m->tensors[cut[i]].name));
    for (const Diagnostic& d : m->diagnostics)
        if (d.code == ErrorCode::E_TENSOR_OUT_OF_BOUNDS) CHECK(explained_by_truncation(*m, d));

    auto report = fsck_model(*m, nullptr, 2);
    REQUIRE(report.ok());
    REQUIRE(report->findings.size() >= cut.size() + 1);
    CHECK(report->findings[0].code == ErrorCode::E_TRUNCATED_DATA);
    CHECK_FALSE(report->findings[0].tensor_index.has_value());
    for (size_t i = 0; i < cut.size(); ++i) {
        const Finding& f = report->findings[i + 1];
        CHECK(f.code == ErrorCode::E_TRUNCATED_DATA);
        CHECK(f.tensor == m->tensors[cut[i]].name);
        CHECK(f.message.starts_with("cut: "));
    }
    for (const Finding& f : report->findings) CHECK(f.code != ErrorCode::E_TENSOR_OUT_OF_BOUNDS);
    // Every tensor with bytes there is scanned: the whole ones, and the whole rows of a partial one.
    size_t missing = 0;
    for (size_t t : cut) missing += m->tensors[t].presence == DataPresence::missing;
    CHECK(missing < cut.size());
    CHECK(report->tensors_scanned == report->tensors - missing);
}

TEST_CASE("check and fsck list a cut file's summary first and its tensors by name", "[truncation][cli]") {
    TempDir dir;
    const std::string path = cut_demo(dir);
    CliRun check = run_mlens({"check", path});
    CHECK(check.exit_status == 1);
    const std::vector<std::string> err = check.err_lines();
    REQUIRE(!err.empty());
    CHECK(err[0].find("E_TRUNCATED_DATA") != std::string::npos);
    CHECK(lines_of(check.out).front().starts_with("cut "));
    CHECK(check.err.find("E_TENSOR_OUT_OF_BOUNDS") == std::string::npos);
    CHECK(check.out.find("tensor values not scanned") != std::string::npos);

    CliRun fsck = run_mlens({"fsck", path});
    CHECK(fsck.exit_status == 1);
    const std::vector<std::string> out = lines_of(fsck.out);
    REQUIRE(out.size() >= 3);
    CHECK(out[0].find("E_TRUNCATED_DATA data") != std::string::npos);
    CHECK(out[1].starts_with("  error E_TRUNCATED_DATA "));
    CHECK(fsck.out.find(" cut, ") != std::string::npos);
    CHECK(fsck.out.find("; 0 of ") == std::string::npos);
}

TEST_CASE("check says the values were not scanned and how to scan them", "[cli]") {
    CliRun run = run_mlens({"check", demo("tiny-llama-f32.gguf")});
    CHECK(run.exit_status == 0);
    const std::vector<std::string> out = lines_of(run.out);
    REQUIRE(out.size() == 3);
    CHECK(out[0].ends_with(": structure ok (0 errors, 0 warnings)"));
    CHECK(out[2].starts_with("tensor values not scanned"));
    CHECK(out[2].find("mlens fsck ") != std::string::npos);
}

TEST_CASE("model_facts gives the first lines of info and the Inspector", "[facts]") {
    auto f32 = open_model(demo("tiny-llama-f32.gguf"));
    REQUIRE(f32.ok());
    const ModelOverview facts = model_overview(*f32);
    CHECK(facts.context_length == 256u);
    CHECK(facts.embedding_length == 64u);
    CHECK(facts.layers == 2u);
    CHECK(facts.heads == 4u);
    CHECK(facts.kv_heads == 2u);
    CHECK(facts.vocabulary == 32000u);
    CHECK_FALSE(facts.chat_template);
    CHECK_FALSE(facts.ollama_made);
    const auto rows = overview_rows(facts);
    REQUIRE(rows.size() == 7);
    CHECK(rows[3] == std::make_pair(std::string("heads"), std::string("4 (2 KV)")));
    CHECK(rows[5].second == "none");
    CHECK(rows[6].second == "no: no marker of Ollama's writer");

    auto gemma = open_model(demo("ollama-gemma3.gguf"));
    REQUIRE(gemma.ok());
    const ModelOverview g = model_overview(*gemma);
    CHECK(g.ollama_made);
    CHECK_FALSE(g.chat_template);  // Ollama keeps it in the manifest; the shim injects one
    auto qwen = open_model(demo("ollama-qwen25vl.gguf"));
    REQUIRE(qwen.ok());
    CHECK(model_overview(*qwen).chat_template);
    CHECK(overview_rows(g)[6].second.starts_with("yes: gemma3: "));

    CliRun info = run_mlens({"info", demo("tiny-llama-f32.gguf")});
    const std::vector<std::string> lines = lines_of(info.out);
    REQUIRE(lines.size() > 10);
    CHECK(lines[4].starts_with("context  "));
    CHECK(lines[10].starts_with("Ollama-made"));
}

TEST_CASE("text output fits $COLUMNS; tables cut names in the middle and JSON is never wrapped", "[cli][width]") {
    const std::string before = std::getenv("COLUMNS") ? std::getenv("COLUMNS") : "";
    for (const char* columns : {"80", "120"}) {
        setenv("COLUMNS", columns, 1);
        const size_t width = std::stoul(columns);
        CHECK(widest_line(run_mlens({"compat", demo("ollama-gemma3.gguf")}).out) <= width);
        CHECK(widest_line(run_mlens({"kv", demo("ollama-qwen25vl.gguf")}).out) <= width);
        CHECK(widest_line(run_mlens({"recipe", demo("ollama-gemma3.gguf")}).out) <= width);
    }
    setenv("COLUMNS", "80", 1);
    const CliRun kv = run_mlens({"kv", demo("ollama-qwen25vl.gguf"), "--json"});
    CHECK(widest_line(kv.out) > 80);  // the JSON keeps its long strings whole
    CHECK(nlohmann::json::accept(kv.out));
    // Numbers are right-aligned in their column.
    const std::vector<std::string> recipe = lines_of(run_mlens({"recipe", demo("tiny-llama-q4_0.gguf")}).out);
    const auto header = std::find_if(recipe.begin(), recipe.end(), [](const std::string& l) { return l.starts_with("  KIND"); });
    REQUIRE(header != recipe.end());
    CHECK(header->ends_with("BPW"));
    CHECK((header + 1)->ends_with("32.00"));
    CHECK((header + 2)->ends_with(" 4.50"));
    if (before.empty())
        unsetenv("COLUMNS");
    else
        setenv("COLUMNS", before.c_str(), 1);
}

TEST_CASE("the Requantize reference: a float twin is found by name and shape, and equal rows are marked", "[requant]") {
    auto q4 = open_model(demo("tiny-llama-q4_0.gguf"));
    auto f32 = open_model(demo("tiny-llama-f32.gguf"));
    REQUIRE(q4.ok());
    REQUIRE(f32.ok());
    const size_t attn_q = static_cast<size_t>(q4->find_tensor("blk.0.attn_q.weight") - q4->tensors.data());
    CHECK(is_float_twin(*q4, attn_q, *f32));
    CHECK_FALSE(is_float_twin(*q4, attn_q, *q4));
    const size_t f32_attn_q = static_cast<size_t>(f32->find_tensor("blk.0.attn_q.weight") - f32->tensors.data());
    CHECK_FALSE(is_float_twin(*f32, f32_attn_q, *q4));

    CliRun self = run_mlens({"requant", demo("tiny-llama-q4_0.gguf"), "blk.0.attn_q.weight", "--types", "Q4_0,Q8_0"});
    CHECK(self.exit_status == 0);
    const std::vector<std::string> lines = lines_of(self.out);
    const auto q4_row = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("Q4_0 "); });
    REQUIRE(q4_row != lines.end());
    CHECK(q4_row->ends_with("same values as the reference"));
    CHECK(q4_row->find("inf") == std::string::npos);
}
