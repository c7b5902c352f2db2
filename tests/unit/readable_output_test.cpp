// Output people can read: text fitted to the terminal, the first facts of a model, units and
// uncertainties, recipes as runs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/analysis/model_overview.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/model/summary.h"
#include "mlens/open/target.h"
#include "mlens/text/plural.h"
#include "mlens/text/display_width.h"
#include "mlens/text/fit_width.h"
#include "mlens/text/number_format.h"
#include "mlens/text/text_table.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

size_t widest_line(const std::string& text) {
    size_t widest = 0;
    for (const std::string& line : lines_of(text)) widest = std::max(widest, display_width(line));
    return widest;
}

}  // namespace

TEST_CASE("break_cell keeps every character and breaks names where their parts meet", "[text][width]") {
    CHECK(break_cell("blk.0.attn_q.weight", 40) == std::vector<std::string>{"blk.0.attn_q.weight"});
    CHECK(break_cell("model.layers.12.mlp.experts.3.down_proj.weight", 20) ==
          std::vector<std::string>{"model.layers.12.mlp.", "experts.3.down_proj.", "weight"});
    CHECK(break_cell("needs an importance matrix", 12) == std::vector<std::string>{"needs an", "importance", "matrix"});
    CHECK(break_cell("0123456789abcdef", 6) == std::vector<std::string>{"012345", "6789ab", "cdef"});
    // 漢漢漢漢 is 8 columns: a wide character is never split.
    CHECK(break_cell("\xE6\xBC\xA2\xE6\xBC\xA2\xE6\xBC\xA2\xE6\xBC\xA2", 5) ==
          std::vector<std::string>{"\xE6\xBC\xA2\xE6\xBC\xA2", "\xE6\xBC\xA2\xE6\xBC\xA2"});
    CHECK(break_cell("abc", 0) == std::vector<std::string>{"abc"});
}

TEST_CASE("table_lines fits a table to the width, numbers right-aligned, nothing cut", "[text][width]") {
    const std::vector<std::vector<std::string>> rows = {{"NAME", "TYPE", "SIZE"},
                                                        {"blk.0.attn_q.weight", "Q4_0", "2.5"},
                                                        {"model.layers.12.mlp.experts.3.down_proj.weight", "Q4_K", "1024"}};
    CHECK(table_lines(rows, 1, 120) == std::vector<std::string>{"NAME                                            TYPE  SIZE",
                                                                "blk.0.attn_q.weight                             Q4_0   2.5",
                                                                "model.layers.12.mlp.experts.3.down_proj.weight  Q4_K  1024"});
    CHECK(table_lines(rows, 1, 40) == std::vector<std::string>{"NAME                          TYPE  SIZE",
                                                               "blk.0.attn_q.weight           Q4_0   2.5",
                                                               "model.layers.12.mlp.experts.  Q4_K  1024",
                                                               "3.down_proj.weight"});
    // Numbers keep their width when nothing else can give.
    CHECK(table_lines({{"1234567890", "1234567890"}}, 0, 10) == std::vector<std::string>{"1234567890  1234567890"});
    CHECK(numeric_cell("-1.5e-03"));
    CHECK(numeric_cell("12.5%"));
    CHECK(numeric_cell("-"));
    CHECK_FALSE(numeric_cell("Q4_0"));
    CHECK_FALSE(numeric_cell("0x1F"));
}

TEST_CASE("a table too wide for its columns prints a stanza per row - an indented cell keeps its indent", "[text][width]") {
    const std::vector<std::vector<std::string>> rows = {{"NAME", "SIZE", "FORMAT", "FAMILY"},
                                                        {"tiny-llama:q4_0", "3.09 MB", "GGUF", "llama"},
                                                        {"tiny-moe:int4", "36.1 kB", "safetensors", "qwen3moe"}};
    CHECK(table_lines(rows, 1, 30) == std::vector<std::string>{"tiny-llama:q4_0", "  SIZE    3.09 MB", "  FORMAT  GGUF", "  FAMILY  llama",
                                                               "tiny-moe:int4", "  SIZE    36.1 kB", "  FORMAT  safetensors",
                                                               "  FAMILY  qwen3moe"});
    CHECK(break_cell("  model.layers.0.mlp.experts.gate_proj.weight", 20) ==
          std::vector<std::string>{"  model.layers.0.", "  mlp.experts.gate_", "  proj.weight"});
}

TEST_CASE("wrap_command keeps a long command pasteable", "[text][width]") {
    CHECK(wrap_command("  llama-quantize --pure a.gguf b.gguf Q4_0", 80) == std::vector<std::string>{"  llama-quantize --pure a.gguf b.gguf Q4_0"});
    CHECK(wrap_command("  llama-quantize --pure --output-tensor-type q6_k --tensor-type attn_q=q4_k "
                       "--tensor-type 'blk\\.(0|1)\\.ffn_down=q6_k' MODEL-F32.gguf OUT.gguf Q4_K_M",
                       60) == std::vector<std::string>{"  llama-quantize --pure --output-tensor-type q6_k \\", "      --tensor-type attn_q=q4_k \\",
                                                       "      --tensor-type 'blk\\.(0|1)\\.ffn_down=q6_k' \\",
                                                       "      MODEL-F32.gguf OUT.gguf Q4_K_M"});
}

TEST_CASE("wrap_command never leaves an option without its value or its continuation - at 40, 60 and 80 columns", "[text][width]") {
    const std::string command =
        "  llama-quantize --pure --output-tensor-type q8_0 --tensor-type "
        "'^blk\\.1\\.(attn_v\\.weight|ffn_down\\.weight)$=q8_0' --override-kv general.file_type=int:15 "
        "MODEL-F32.gguf OUT.gguf Q5_0";
    CHECK(wrap_command(command, 60) ==
          std::vector<std::string>{"  llama-quantize --pure --output-tensor-type q8_0 \\",
                                   "      --tensor-type '^blk\\.1\\.(attn_v\\.weight|ffn_down\\.weight)$=q8_0' \\",
                                   "      --override-kv general.file_type=int:15 \\", "      MODEL-F32.gguf OUT.gguf Q5_0"});
    for (size_t width : {40, 60, 80}) {
        INFO("width " << width);
        const std::vector<std::string> lines = wrap_command(command, width);
        std::vector<std::string> words;
        for (size_t i = 0; i < lines.size(); ++i) {
            const bool continued = i + 1 < lines.size();
            // Every line but the last continues, so the lines paste as one command.
            CHECK(lines[i].ends_with(" \\") == continued);
            std::vector<std::string> line_words;
            std::istringstream in(continued ? lines[i].substr(0, lines[i].size() - 2) : lines[i]);
            for (std::string w; in >> w;) line_words.push_back(w);
            REQUIRE_FALSE(line_words.empty());
            // An option that ends a line is a flag (the next line starts with an option), never one parted from its value.
            if (continued && line_words.back().starts_with("--")) CHECK(lines[i + 1].substr(lines[i + 1].find_first_not_of(' '))[0] == '-');
            // A line wider than the width is one option and its value.
            if (display_width(lines[i]) > width) CHECK((line_words.size() == 2 && line_words[0].starts_with("--")));
            words.insert(words.end(), line_words.begin(), line_words.end());
        }
        std::vector<std::string> expected;
        std::istringstream in(command);
        for (std::string w; in >> w;) expected.push_back(w);
        CHECK(words == expected);
    }
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

TEST_CASE("wrap_words never parts a number from its unit", "[text][width]") {
    CHECK(wrap_words("tiny-llama:q4_0: broken (2 errors, 0 warnings, 0 notes; 21 of 21 tensors, 2.36 MB)", 80) ==
          std::vector<std::string>{"tiny-llama:q4_0: broken (2 errors, 0 warnings, 0 notes; 21 of 21 tensors,", "  2.36 MB)"});
    CHECK(wrap_words("  blob of 30.1 kB) and more", 17) == std::vector<std::string>{"  blob of", "    30.1 kB) and", "    more"});
    CHECK(wrap_words("needs 4 GiB of memory", 8) == std::vector<std::string>{"needs", "  4 GiB", "  of", "  memory"});
    CHECK(wrap_words("parameters 4.19 M, file 12,345 bytes", 20) == std::vector<std::string>{"parameters 4.19 M,", "  file 12,345 bytes"});
    // A word after a number that is no unit is free to go on.
    CHECK(wrap_words("found 21 tensors here", 10) == std::vector<std::string>{"found 21", "  tensors", "  here"});
}

TEST_CASE("wrap_words keeps a line's spacing and hangs a description under its column", "[text][width]") {
    // A term and its description, as --help lists commands: the continuation starts under the description.
    CHECK(wrap_words("  info        Format, architecture, parameter count", 36) ==
          std::vector<std::string>{"  info        Format, architecture,", "              parameter count"});
    // Spaces between words stay as the line has them; the run at a break is dropped.
    CHECK(wrap_words("  0  success   and more words here", 20) == std::vector<std::string>{"  0  success   and", "     more words here"});
    // A description that starts past half the width hangs by the indent plus two.
    CHECK(wrap_words("  MLENS_HTTP_CONNECT_SECONDS  connect timeout in seconds", 40) ==
          std::vector<std::string>{"  MLENS_HTTP_CONNECT_SECONDS  connect", "    timeout in seconds"});
    // A line indented past eight columns continues at its indent.
    CHECK(wrap_words("            Download at most SIZE from remote models", 36) ==
          std::vector<std::string>{"            Download at most SIZE", "            from remote models"});
    // Single spaces only: the indent plus two, as before.
    CHECK(wrap_words("  evidence: one two three four five six", 20)[1] == "    three four five");
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
    // Bits per weight: two decimals in every view (tensors, recipe, requant, info).
    CHECK(bits_per_weight_text(4.5) == "4.50");
    CHECK(bits_per_weight_text(2.0625) == "2.06");
    CHECK(bits_per_weight_text(16) == "16.00");
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
    CHECK(g.chat_template_rewrite == "handle_gemma3");
    CHECK(overview_rows(g)[5].second == "none in the file; the compat rewrite adds one on load (handle_gemma3)");
    auto qwen = open_model(demo("ollama-qwen25vl.gguf"));
    REQUIRE(qwen.ok());
    CHECK(model_overview(*qwen).chat_template);
    CHECK(model_overview(*qwen).chat_template_rewrite.empty());  // Ollama-made, its own template kept
    CHECK(overview_rows(g)[6].second.starts_with("yes: gemma3: "));

    CliRun info = run_mlens({"info", demo("tiny-llama-f32.gguf")});
    const std::vector<std::string> lines = lines_of(info.out);
    REQUIRE(lines.size() > 10);
    CHECK(lines[4].starts_with("context  "));
    CHECK(lines[10].starts_with("Ollama-made"));
}

TEST_CASE("text output fits $COLUMNS - tables break cells inside their column and JSON is never wrapped", "[cli][width]") {
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
    // requant's BPW column spells them as recipe does.
    const std::vector<std::string> requant =
        lines_of(run_mlens({"requant", demo("tiny-llama-f32.gguf"), "blk.0.attn_q.weight", "--types", "Q8_0,Q4_K"}).out);
    CHECK(std::find(requant.begin(), requant.end(), "TYPE  BPW   RMSE      NMSE      MAX|E|    COSINE    SNR dB  NOTE") != requant.end());
    CHECK(std::any_of(requant.begin(), requant.end(), [](const std::string& l) { return l.starts_with("Q8_0  8.50 "); }));
    CHECK(std::any_of(requant.begin(), requant.end(), [](const std::string& l) { return l.starts_with("Q4_K  4.50 "); }));
    if (before.empty())
        unsetenv("COLUMNS");
    else
        setenv("COLUMNS", before.c_str(), 1);
}

TEST_CASE("piped text without COLUMNS is not fitted - a long name stays whole for grep", "[cli][width]") {
    const ScopedEnv unset("COLUMNS", std::nullopt);
    const std::string kv = run_mlens({"kv", demo("ollama-gemma3.gguf")}).out;
    CHECK(widest_line(kv) > 80);
    const std::vector<std::string> lines = lines_of(kv);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("tokenizer.ggml.add_padding_token "); }));
    const std::string tensors = run_mlens({"tensors", std::string(MLENS_DEMO_DIR) + "/ollama-store/tiny-mlx:mixed"}).out;
    CHECK(tensors.find("model.layers.0.self_attn.q_proj.weight ") != std::string::npos);
    // COLUMNS still sets a width for a pipe.
    const ScopedEnv narrow("COLUMNS", std::string("60"));
    CHECK(widest_line(run_mlens({"kv", demo("ollama-gemma3.gguf")}).out) <= 60);
}

TEST_CASE("hist's longest bar takes the room the terminal leaves after the bin and count columns", "[cli][width]") {
    for (const char* columns : {"40", "60", "80"}) {
        INFO("COLUMNS=" << columns);
        const ScopedEnv width("COLUMNS", std::string(columns));
        const std::vector<std::string> lines = lines_of(run_mlens({"hist", demo("tiny-llama-q4_0.gguf"), "blk.0.ffn_up.weight"}).out);
        size_t longest = 0;
        for (const std::string& line : lines) {
            CHECK(display_width(line) <= std::stoul(columns));
            CHECK_FALSE(line.find_first_not_of(" #") == std::string::npos);  // no bar on a line of its own
            longest = std::max(longest, display_width(line));
        }
        CHECK(longest == std::min<size_t>(std::stoul(columns), 24 + 50));  // 24 columns of bin and count, bars up to 50
    }
}
