// Quantization recipes of GGUF files written from exact bytes with a llama-quantize-like mix:
// the layer × kind map, the provenance keys, the command, and the command's rules applied the way
// llama-quantize applies them (first matching pattern, else the base) give every tensor its type.
#include <catch2/catch.hpp>

#include <algorithm>

#include <ggml.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <regex>
#include <sstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "raw_gguf.h"
#include "test_paths.h"

using namespace mlens;
using test::RawTensor;

namespace {

RawTensor zeros(const std::string& name, ggml_type type, std::vector<uint64_t> ne) {
    uint64_t rows = 1;
    for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
    return {name, static_cast<uint32_t>(type), ne, std::vector<uint8_t>(ggml_row_size(type, static_cast<int64_t>(ne[0])) * rows)};
}

// Four layers: attn_v Q6_K in layers 0 and 1, ffn_down Q6_K everywhere, attn_q, attn_k and ffn_up Q4_K; norms F32;
// output Q6_K; token_embd Q4_K. `attn_v_late` gives attn_v Q5_K in layer 3 instead of Q4_K.
std::vector<RawTensor> mix(bool attn_v_late) {
    std::vector<RawTensor> ts = {zeros("token_embd.weight", GGML_TYPE_Q4_K, {256, 8})};
    for (int l = 0; l < 4; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        ts.push_back(zeros(p + "attn_norm.weight", GGML_TYPE_F32, {256}));
        ts.push_back(zeros(p + "attn_q.weight", GGML_TYPE_Q4_K, {256, 4}));
        ts.push_back(zeros(p + "attn_k.weight", GGML_TYPE_Q4_K, {256, 4}));
        ggml_type v = l < 2 ? GGML_TYPE_Q6_K : attn_v_late && l == 3 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
        ts.push_back(zeros(p + "attn_v.weight", v, {256, 4}));
        ts.push_back(zeros(p + "ffn_up.weight", GGML_TYPE_Q4_K, {256, 4}));
        ts.push_back(zeros(p + "ffn_down.weight", GGML_TYPE_Q6_K, {256, 4}));
    }
    ts.push_back(zeros("output_norm.weight", GGML_TYPE_F32, {256}));
    ts.push_back(zeros("output.weight", GGML_TYPE_Q6_K, {256, 8}));
    return ts;
}

Model open_written(const test::TempDir& dir, const std::string& name, const std::vector<RawTensor>& ts) {
    REQUIRE(test::write_raw_gguf(dir.file(name), ts).ok());
    auto m = open_gguf(dir.file(name));
    REQUIRE(m.ok());
    return std::move(*m);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The type llama-quantize --pure gives `name` under the recipe's options and rules.
std::string predicted(const QuantRecipe& r, const std::string& name) {
    if (name == "token_embd.weight" && !r.token_embedding_type.empty()) return r.token_embedding_type;
    if (name == "output.weight" && !r.output_type.empty()) return r.output_type;
    for (const std::string& rule : r.rules) {
        const size_t eq = rule.find('=');
        if (std::regex_search(name, std::regex(rule.substr(0, eq)))) return rule.substr(eq + 1);
    }
    return lower(r.base);
}

}  // namespace

TEST_CASE("a recipe maps layers and kinds to types and states the fewest rules", "[recipe]") {
    test::TempDir dir;
    const Model m = open_written(dir, "mix.gguf", mix(false));
    const QuantRecipe r = quant_recipe(m);
    CHECK(r.kinds ==
          std::vector<std::string>{"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "ffn_up.weight",
                                   "ffn_down.weight"});
    REQUIRE(r.layers.size() == 4);
    CHECK(r.layers[1].layer == 1);
    REQUIRE(r.layers[1].cells[3]);
    CHECK(r.layers[1].cells[3]->type == "Q6_K");
    CHECK(r.layers[1].cells[3]->bits_per_weight == Approx(6.5625));
    CHECK(r.layers[2].cells[3]->type == "Q4_K");
    REQUIRE(r.other.size() == 3);
    CHECK(r.other[0].tensor == "token_embd.weight");
    CHECK(r.base == "Q4_K");
    CHECK(r.output_type == "q6_k");
    CHECK(r.token_embedding_type.empty());
    CHECK(r.rules == std::vector<std::string>{"^blk\\.(0|1)\\.attn_v\\.weight$=q6_k", "^blk\\.[0-9]+\\.ffn_down\\.weight$=q6_k"});
    CHECK(llama_quantize_command(r) ==
          "llama-quantize --pure --output-tensor-type q6_k --tensor-type '^blk\\.(0|1)\\.attn_v\\.weight$=q6_k' "
          "--tensor-type '^blk\\.[0-9]+\\.ffn_down\\.weight$=q6_k' MODEL-F32.gguf OUT.gguf Q4_K");
    for (const TensorInfo& t : m.tensors) {
        if (t.ne.size() < 2) continue;
        INFO(t.name);
        CHECK(predicted(r, t.name) == lower(t.type.name));
    }
}

// llama-quantize's ftype IQ2_S makes IQ2_XS tensors; IQ2_S tensors come from its IQ2_M.
TEST_CASE("a recipe for IQ2_S tensors names llama-quantize's IQ2_M", "[recipe]") {
    test::TempDir dir;
    std::vector<RawTensor> ts = {zeros("token_embd.weight", GGML_TYPE_IQ2_S, {256, 8})};
    for (int l = 0; l < 2; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        ts.push_back(zeros(p + "attn_norm.weight", GGML_TYPE_F32, {256}));
        ts.push_back(zeros(p + "attn_q.weight", GGML_TYPE_IQ2_S, {256, 4}));
        ts.push_back(zeros(p + "ffn_up.weight", GGML_TYPE_IQ2_XS, {256, 4}));
    }
    const Model m = open_written(dir, "iq2_m.gguf", ts);
    const QuantRecipe r = quant_recipe(m);
    CHECK(r.base == "IQ2_S");
    CHECK(r.ftype == "IQ2_M");
    CHECK(llama_quantize_command(r) ==
          "llama-quantize --pure --tensor-type '^blk\\.[0-9]+\\.ffn_up\\.weight$=iq2_xs' MODEL-F32.gguf OUT.gguf IQ2_M");
}

// llama-quantize Q4_K_M on rows of 64 values falls back to Q5_0 and records file type 15: the
// recipe names Q5_0's ftype and restores the recorded number, so the file comes out byte for byte.
TEST_CASE("a recipe restores the file type llama-quantize recorded when the rows fell back", "[recipe]") {
    test::TempDir dir;
    std::vector<RawTensor> ts = {zeros("token_embd.weight", GGML_TYPE_Q8_0, {64, 8}), zeros("blk.0.attn_q.weight", GGML_TYPE_Q5_0, {64, 4}),
                                 zeros("blk.0.ffn_up.weight", GGML_TYPE_Q5_0, {64, 4})};
    REQUIRE(test::write_raw_gguf(dir.file("fallback.gguf"), ts).ok());
    auto plain = open_gguf(dir.file("fallback.gguf"));
    REQUIRE(plain.ok());
    Model m = std::move(*plain);
    MetadataEntry file_type;
    file_type.key = "general.file_type";
    file_type.value = Value::of_scalar(Scalar{ValueType::u32, uint64_t{15}});
    m.metadata.push_back(file_type);
    const QuantRecipe r = quant_recipe(m);
    CHECK(r.ftype == "Q5_0");
    REQUIRE(r.file_type_override == 15u);
    CHECK(llama_quantize_command(r) ==
          "llama-quantize --pure --token-embedding-type q8_0 --override-kv general.file_type=int:15 MODEL-F32.gguf OUT.gguf Q5_0");
    m.metadata.back().value = Value::of_scalar(Scalar{ValueType::u32, uint64_t{8}});  // Q5_0's own number
    CHECK_FALSE(quant_recipe(m).file_type_override);
}

// No ftype of llama-quantize makes NVFP4 tensors ("NVFP4" is an invalid ftype to it): no command.
TEST_CASE("a recipe of NVFP4 tensors says that no llama-quantize ftype makes them", "[recipe]") {
    test::TempDir dir;
    std::vector<RawTensor> ts;
    for (int l = 0; l < 2; ++l) ts.push_back(zeros("blk." + std::to_string(l) + ".attn_q.weight", GGML_TYPE_NVFP4, {256, 4}));
    const QuantRecipe r = quant_recipe(open_written(dir, "nvfp4.gguf", ts));
    CHECK(r.base == "NVFP4");
    CHECK(r.ftype.empty());
    CHECK(llama_quantize_command(r).empty());
    CHECK(r.no_command == "no llama-quantize ftype makes NVFP4 tensors: the linked llama-quantize cannot reproduce this file");
}

// llama-quantize's F16, BF16 and F32 ftypes make GGUFs of unquantized matrices: their recipe is
// that ftype.
TEST_CASE("a recipe of a GGUF of unquantized matrices names the F16, BF16 or F32 ftype", "[recipe]") {
    test::TempDir dir;
    const QuantRecipe f32 = quant_recipe(open_written(dir, "f32.gguf", {zeros("blk.0.attn_q.weight", GGML_TYPE_F32, {256, 4})}));
    CHECK(f32.base == "F32");
    CHECK(f32.ftype == "F32");
    CHECK(f32.no_command.empty());
    const QuantRecipe f16 = quant_recipe(open_written(dir, "f16.gguf",
                                                      {zeros("blk.0.attn_q.weight", GGML_TYPE_F16, {256, 4}),
                                                       zeros("blk.1.attn_q.weight", GGML_TYPE_F16, {256, 4}),
                                                       zeros("blk.0.attn_norm.weight", GGML_TYPE_F32, {256}),
                                                       zeros("blk.1.attn_k.weight", GGML_TYPE_BF16, {256, 4})}));
    CHECK(f16.base == "F16");
    CHECK(f16.ftype == "F16");
    CHECK(llama_quantize_command(f16).ends_with(" F16"));
    CHECK(f16.rules == std::vector<std::string>{"^blk\\.[0-9]+\\.attn_k\\.weight$=bf16"});
}

// MLX and Ollama tensor-blob models are quantized per tensor: the recipe lists the modes.
TEST_CASE("mlens recipe of a tensor-blob store model lists its per-tensor modes", "[recipe][cli][ollama]") {
    const std::string store = std::string(MLENS_DEMO_DIR) + "/ollama-store";
    test::CliRun mixed = test::run_mlens({"recipe", store + "/tiny-mlx:mixed"});
    REQUIRE(mixed.exit_status == 0);
    CHECK(mixed.out.find("no llama-quantize command: quantized per tensor (int4 g64 ×1, int8 g64 ×2, int4 g32 ×1, nvfp4 g16 ×2, "
                         "mxfp4 g32 ×1, mxfp8 g32 ×1), which llama-quantize does not make\n") != std::string::npos);
    const nlohmann::json moe = test::run_mlens_json({"recipe", store + "/tiny-moe:int4", "--json"});
    CHECK(moe["command"].is_null());
    CHECK(moe["no_command"] == "quantized per tensor (int4 g64 ×4), which llama-quantize does not make");
}

TEST_CASE("a recipe shows the provenance keys and asks for the importance matrix", "[recipe]") {
    test::TempDir dir;
    REQUIRE(test::write_raw_gguf(dir.file("plain.gguf"), mix(true)).ok());
    auto plain = open_gguf(dir.file("plain.gguf"));
    REQUIRE(plain.ok());
    Model with_keys = std::move(*plain);
    auto add = [&](const std::string& key, Value v) {
        MetadataEntry e;
        e.key = key;
        e.value = std::move(v);
        with_keys.metadata.push_back(std::move(e));
    };
    add("general.file_type", Value::of_u32(15));
    add("general.quantized_by", Value::of_string("someone"));
    add("quantize.imatrix.file", Value::of_string("model.imatrix"));
    add("quantize.imatrix.chunks_count", Value::of_u32(125));
    REQUIRE(write_gguf(with_keys, dir.file("made.gguf")).ok());
    auto made = open_gguf(dir.file("made.gguf"));
    REQUIRE(made.ok());
    const QuantRecipe r = quant_recipe(*made);
    REQUIRE(r.provenance.size() == 4);
    CHECK(r.provenance[0] == std::make_pair(std::string("general.file_type"), std::string("15 (Q4_K_M)")));
    CHECK(r.provenance[1].first == "general.quantized_by");
    CHECK(r.imatrix);
    // attn_v is mostly Q6_K here, so Q6_K is its catch-all, merged with ffn_down's.
    CHECK(r.rules ==
          std::vector<std::string>{"^blk\\.2\\.attn_v\\.weight$=q4_k", "^blk\\.3\\.attn_v\\.weight$=q5_k",
                                   "^blk\\.[0-9]+\\.(attn_v\\.weight|ffn_down\\.weight)$=q6_k"});
    for (const TensorInfo& t : made->tensors) {
        if (t.ne.size() < 2) continue;
        INFO(t.name);
        CHECK(predicted(r, t.name) == lower(t.type.name));
    }
    const std::vector<std::string> args = llama_quantize_arguments(r, "in.gguf", "out.gguf", "m.imatrix");
    CHECK(args[0] == "--pure");
    CHECK(args[1] == "--imatrix");
    CHECK(args[2] == "m.imatrix");
    CHECK(args.back() == "Q4_K");
}

TEST_CASE("the recipe difference of two quantizations lists the retyped tensors", "[recipe]") {
    test::TempDir dir;
    const Model a = open_written(dir, "a.gguf", mix(false));
    const Model b = open_written(dir, "b.gguf", mix(true));
    const auto changes = recipe_difference(quant_recipe(a), quant_recipe(b));
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].tensor == "blk.3.attn_v.weight");
    CHECK(changes[0].from == "Q4_K");
    CHECK(changes[0].to == "Q5_K");
    CHECK(recipe_difference(quant_recipe(a), quant_recipe(a)).empty());
}

TEST_CASE("the recipe difference pairs a renamed tensor as the diff paired it", "[recipe]") {
    test::TempDir dir;
    const Model a = open_written(dir, "a.gguf", mix(false));
    std::vector<RawTensor> renamed = mix(false);
    for (RawTensor& t : renamed)
        if (t.name == "blk.3.attn_v.weight") t.name = "model.layers.3.self_attn.v_proj.weight";
    const Model b = open_written(dir, "b.gguf", renamed);
    // By name alone, one tensor is gone and another has come.
    const auto unpaired = recipe_difference(quant_recipe(a), quant_recipe(b));
    REQUIRE(unpaired.size() == 2);
    CHECK(unpaired[0].tensor == "blk.3.attn_v.weight");
    CHECK(unpaired[0].to.empty());
    CHECK(unpaired[1].tensor == "model.layers.3.self_attn.v_proj.weight");
    CHECK(unpaired[1].from.empty());
    // Paired as a diff pairs them, the two are one tensor of one type.
    CHECK(recipe_difference(quant_recipe(a), quant_recipe(b), {{"model.layers.3.self_attn.v_proj.weight", "blk.3.attn_v.weight"}}).empty());
}

TEST_CASE("recipe changes group by tensor kind and change, with their layers", "[recipe]") {
    const std::vector<RecipeChange> changes = {{"blk.0.attn_v.weight", "Q6_K", "Q5_K"},
                                               {"blk.1.ffn_down.weight", "Q6_K", "Q4_K"},
                                               {"blk.2.attn_v.weight", "Q6_K", "Q5_K"},
                                               {"blk.3.attn_v.weight", "Q6_K", "Q8_0"},
                                               {"output.weight", "Q6_K", ""},
                                               {"token_embd.weight", "", "Q8_0"}};
    const std::vector<RecipeChangeGroup> g = group_recipe_changes(changes);
    REQUIRE(g.size() == 5);
    CHECK(g[0].kind == "attn_v.weight");
    CHECK(g[0].from == "Q6_K");
    CHECK(g[0].to == "Q5_K");
    CHECK(g[0].layers == std::vector<uint32_t>{0, 2});
    CHECK(recipe_group_layers_text(g[0]) == "layers 0, 2");
    CHECK(g[1].kind == "ffn_down.weight");
    CHECK(g[2].layers == std::vector<uint32_t>{3});
    CHECK(g[3].kind == "output.weight");
    CHECK(g[3].to.empty());
    CHECK(g[3].layers.empty());
    CHECK(recipe_group_layers_text(g[3]).empty());
    CHECK(g[4].kind == "token_embd.weight");
    CHECK(g[4].from.empty());
}

TEST_CASE("mlens recipe prints the map and the command - mlens diff the recipe difference", "[recipe][cli]") {
    test::TempDir dir;
    REQUIRE(test::write_raw_gguf(dir.file("a.gguf"), mix(false)).ok());
    REQUIRE(test::write_raw_gguf(dir.file("b.gguf"), mix(true)).ok());
    auto recipe = test::run_mlens({"recipe", dir.file("a.gguf")});
    CHECK(recipe.exit_status == 0);
    // The map reads as runs of layers per kind, the Q6_K ones among them.
    CHECK(recipe.out.find("types by kind and layer\n") != std::string::npos);
    const std::vector<std::string> lines = test::lines_of(recipe.out);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
        return l.starts_with("  ") && l.find(" Q6_K ") != std::string::npos;
    }));
    CHECK(recipe.out.find("llama-quantize command (base Q4_K, 2 rules)\n  llama-quantize --pure --output-tensor-type q6_k") !=
          std::string::npos);
    auto json = test::run_mlens({"recipe", dir.file("a.gguf"), "--json"});
    REQUIRE(json.exit_status == 0);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j["base"] == "Q4_K");
    CHECK(j["rules"].size() == 2);
    CHECK(j["layers"][0]["cells"][3]["type"] == "Q6_K");

    auto diff = test::run_mlens({"diff", dir.file("a.gguf"), dir.file("b.gguf")});
    CHECK(diff.exit_status == 0);
    INFO(diff.out);
    CHECK(diff.out.find("recipe (1 tensor typed differently)\n") != std::string::npos);
    // Retyped tensors by their short kind, as the recipe's map names them.
    CHECK(diff.out.find("  attn_v  layers 3  Q4_K\xE2\x86\x92Q5_K\n") != std::string::npos);
    auto diff_json = test::run_mlens({"diff", dir.file("a.gguf"), dir.file("b.gguf"), "--json"});
    const auto d = nlohmann::json::parse(diff_json.out);
    REQUIRE(d["recipe"]["changes"].size() == 1);
    CHECK(d["recipe"]["changes"][0]["tensor"] == "blk.3.attn_v.weight");
    CHECK(d["recipe"]["base_b"] == "Q4_K");
}

TEST_CASE("mlens recipe's command pastes as one at 40, 60 and 80 columns - an option keeps its value on its line", "[recipe][cli][width]") {
    test::TempDir dir;
    REQUIRE(test::write_raw_gguf(dir.file("a.gguf"), mix(false)).ok());
    // The command's lines: from its first to the end.
    auto command_lines = [&](std::optional<std::string> columns) {
        const test::ScopedEnv width("COLUMNS", columns);
        const std::vector<std::string> lines = test::lines_of(test::run_mlens({"recipe", dir.file("a.gguf")}).out);
        const auto first =
            std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("  llama-quantize "); });
        REQUIRE(first != lines.end());
        return std::vector<std::string>(first, lines.end());
    };
    const std::vector<std::string> whole = command_lines(std::nullopt);
    REQUIRE(whole.size() == 1);
    for (const char* columns : {"40", "60", "80"}) {
        INFO("COLUMNS=" << columns);
        const std::vector<std::string> lines = command_lines(std::string(columns));
        REQUIRE(lines.size() > 1);
        // Joined as a shell joins " \\" continuations, the lines are the whole command.
        std::string joined;
        for (size_t i = 0; i < lines.size(); ++i) {
            const bool continued = i + 1 < lines.size();
            CHECK(lines[i].ends_with(" \\") == continued);
            joined += (i ? " " : "") + (continued ? lines[i].substr(0, lines[i].size() - 2) : lines[i]);
        }
        std::istringstream pasted(joined), unbroken(whole[0]);
        std::vector<std::string> pasted_words, words;
        for (std::string w; pasted >> w;) pasted_words.push_back(w);
        for (std::string w; unbroken >> w;) words.push_back(w);
        CHECK(pasted_words == words);
    }
}
