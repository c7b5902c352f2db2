// Will it load: one fixture per cause, each with its exact verdict and first reason; the
// Ollama-made files load after the compat rewrite and their exports load; the demo models load;
// the verdict reads no tensor byte and is fast on a 262k-token vocabulary.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_builder.h"
#include "large_gguf.h"
#include "loadability_fixtures.h"
#include "mlens/analysis/loadability.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/llama_requirements.h"
#include "mlens/infer/dry_run.h"
#include "mlens/open/target.h"
#include "mlens/util/build_info.h"
#include "split_shards.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;

namespace {

Loadability assess_file(const std::string& path) {
    auto model = open_gguf(path);
    REQUIRE(model);
    return assess_loadability(*model);
}

// A ByteSource over a file that records every range read.
class RecordingSource : public ByteSource {
public:
    explicit RecordingSource(ByteSourcePtr inner) : ByteSource(inner->path(), inner->size()), m_inner(std::move(inner)) {}
    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        std::lock_guard lock(m_mutex);
        m_reads.push_back({offset, length});
        return m_inner->read(offset, length, dst);
    }
    void forget() {
        std::lock_guard lock(m_mutex);
        m_reads.clear();
    }
    // Whether any read touched [from, size()).
    bool read_at_or_after(uint64_t from) const {
        std::lock_guard lock(m_mutex);
        for (const ByteRange& r : m_reads)
            if (r.length && r.end() > from) return true;
        return false;
    }

private:
    ByteSourcePtr m_inner;
    mutable std::mutex m_mutex;
    mutable std::vector<ByteRange> m_reads;
};

// Every reason, one a line, for the failure message of a test.
std::string reasons_text(const Loadability& l) {
    std::string out = l.summary();
    for (const LoadReason& r : l.reasons) out += "\n  " + std::string(load_problem_name(r.problem)) + " " + r.name + ": " + r.text;
    return out;
}

}  // namespace

TEST_CASE("loadability: the generated requirements hold the pinned llama.cpp's facts", "[loadability]") {
    const LlamaArchRequirements* llama = find_llama_arch("llama");
    REQUIRE(llama);
    CHECK(std::string(llama->loader) == "llama_model_llama");
    CHECK(llama->tensors_complete);
    auto need_of_tensor = [&](const char* name) {
        for (const LlamaTensorNeed& t : llama->tensors)
            if (std::string(t.name) == name) return std::optional<Need>(t.need);
        return std::optional<Need>();
    };
    auto need_of_key = [&](const char* name) {
        for (const LlamaKeyNeed& k : llama->keys)
            if (std::string(k.key) == name) return std::optional<Need>(k.need);
        return std::optional<Need>();
    };
    CHECK(need_of_tensor("token_embd.weight") == Need::required);
    CHECK(need_of_tensor("blk.%d.attn_norm.weight") == Need::required);
    CHECK(need_of_tensor("output.weight") == Need::optional);
    // Under `if (n_expert == 0)` and inside create_tensor_qkv's else branch: not decidable.
    CHECK(need_of_tensor("blk.%d.ffn_gate.weight") == Need::conditional);
    CHECK(need_of_tensor("blk.%d.attn_q.weight") == Need::conditional);
    auto vocab_rows = [&](const char* name) {
        return std::any_of(llama->tensors.begin(), llama->tensors.end(), [&](const LlamaTensorNeed& t) { return std::string(t.name) == name && t.vocab_rows; });
    };
    // Shaped {n_embd, n_vocab} in the loader.
    CHECK(vocab_rows("token_embd.weight"));
    CHECK(vocab_rows("output.weight"));
    CHECK_FALSE(vocab_rows("blk.%d.attn_q.weight"));
    CHECK(need_of_key("llama.block_count") == Need::required);
    CHECK(need_of_key("llama.attention.layer_norm_rms_epsilon") == Need::required);
    CHECK(need_of_key("llama.rope.freq_base") == Need::optional);
    // Read inside `if (hparams.n_head() > 0)`.
    CHECK(need_of_key("llama.attention.key_length") == Need::conditional);
    // The architecture-only `return` before the common keys is decided per architecture.
    const LlamaArchRequirements* clip = find_llama_arch("clip");
    REQUIRE(clip);
    CHECK(std::none_of(clip->keys.begin(), clip->keys.end(), [](const LlamaKeyNeed& k) { return std::string(k.key) == "clip.block_count"; }));
    CHECK(find_llama_arch("gpt-oss"));
    CHECK_FALSE(find_llama_arch("gptoss"));

    const GgmlTypeFacts* q4k = find_linked_ggml_type(12);
    REQUIRE(q4k);
    CHECK(std::string(q4k->name) == "q4_K");
    CHECK(q4k->block_size == 256);
    CHECK(q4k->type_size == 144);
    CHECK(find_linked_ggml_type(8)->block_size == 32);
    CHECK_FALSE(find_linked_ggml_type(4));  // Q4_2, removed
    CHECK_FALSE(find_linked_ggml_type(43));
    CHECK(linked_ggml_types().size() == 35);

    CHECK(converter_knows_hf_class("LlamaForCausalLM"));
    CHECK(converter_knows_hf_class("Qwen3MoeForCausalLM"));
    CHECK_FALSE(converter_knows_hf_class("NoSuchModelForCausalLM"));

    CHECK(tensor_name_matches("blk.%d.attn_q.weight", "blk.12.attn_q.weight"));
    CHECK_FALSE(tensor_name_matches("blk.%d.attn_q.weight", "blk..attn_q.weight"));
    CHECK_FALSE(tensor_name_matches("blk.%d.attn_q.weight", "blk.1.attn_q.weight.x"));
}

TEST_CASE("loadability: the demo models load as they are", "[loadability]") {
    for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"}) {
        INFO(name);
        const Loadability l = assess_file(std::string(MLENS_DEMO_DIR) + "/" + name);
        CHECK(l.verdict == LoadVerdict::loads);
        CHECK(l.reasons.empty());
        CHECK(l.warnings.empty());
        CHECK(l.summary() == "loads in " + llama_cpp_version());
    }
}

TEST_CASE("loadability: one fixture per cause gets its verdict and reason", "[loadability]") {
    TempDir dir;
    for (const LoadFixture& f : load_fixtures(dir)) {
        INFO(f.name);
        const Loadability l = assess_file(f.path);
        CHECK(std::string(load_verdict_name(l.verdict)) == f.verdict);
        REQUIRE(l.reasons.size() == f.reasons);
        const LoadReason& r = l.reasons.front();
        CHECK(std::string(load_problem_name(r.problem)) == f.problem);
        CHECK(r.name == f.subject);
        CHECK(r.text == f.text);
        CHECK(r.fix == f.fix);
    }
}

TEST_CASE("loadability: a decode-time assert is a warning, not a reason", "[loadability]") {
    TempDir dir;
    const std::string path = dir.file("eps.gguf");
    write_demo_variant(path, [](Model& m) { set_metadata(m, "llama.attention.layer_norm_rms_epsilon", f32_value(-1.0f)); });
    const Loadability l = assess_file(path);
    CHECK(l.verdict == LoadVerdict::loads);
    REQUIRE(l.warnings.size() == 1);
    CHECK(l.warnings[0].problem == LoadProblem::decode_assert);
    CHECK(l.warnings[0].name == "llama.attention.layer_norm_rms_epsilon");
    CHECK(l.warnings[0].text ==
          "llama.cpp loads it, then aborts at the first decode: GGML_ASSERT(eps >= 0.0f) at ggml/src/ggml-cpu/ops.cpp:3949 "
          "(ggml_compute_forward_rms_norm, at the first decode)");
}

TEST_CASE("loadability: Ollama-made files load after the compat rewrite, and their exports load", "[loadability][compat]") {
    TempDir dir;
    for (const OllamaFixture& f : ollama_fixtures(dir)) {
        INFO(f.path);
        auto model = open_gguf(f.path);
        REQUIRE(model);
        const Loadability l = assess_loadability(*model);
        INFO(reasons_text(l));
        CHECK(std::string(load_verdict_name(l.verdict)) == f.verdict);
        if (f.first_problem.empty()) {
            CHECK(l.reasons.empty());
        } else {
            REQUIRE_FALSE(l.reasons.empty());
            CHECK(std::string(load_problem_name(l.reasons.front().problem)) == f.first_problem);
            CHECK(l.reasons.front().fix ==
                  "Ollama's shim rewrites this when Ollama loads it; `mlens export-upstream FILE OUT.gguf` writes the rewritten file for "
                  "llama.cpp");
        }
        const compat::RewritePlan plan = compat::plan_compat(*model);
        CHECK(plan.text.issues.empty());
        CHECK(plan.clip.issues.empty());
        compat::ExportOptions options;
        const std::string base = dir.file(std::filesystem::path(f.path).filename().string());
        options.text_path = base + ".upstream.gguf";
        // The clip side is exported too (its data ops run); whether clip.cpp loads the mmproj is
        // not checked here: the verdict covers llama.cpp's model loader only.
        if (compat::has_vision_export(*model, plan)) options.mmproj_path = base + ".mmproj.gguf";
        auto exported_files = compat::export_upstream(*model, plan, options);
        INFO((exported_files ? std::string() : exported_files.error().to_string()));
        REQUIRE(exported_files);
        const Loadability exported = assess_file(options.text_path);
        INFO(reasons_text(exported));
        CHECK(exported.verdict == LoadVerdict::loads);
        CHECK(exported.reasons.empty());
        if (!options.mmproj_path.empty()) CHECK(open_gguf(options.mmproj_path)->get_string("general.architecture") == "clip");
    }
}

TEST_CASE("loadability: a tensor-blob model names the converter's answer for its class", "[loadability]") {
    auto model = open_model(std::string(MLENS_DEMO_DIR) + "/ollama-store/tiny-moe:int4");
    REQUIRE(model);
    const Loadability l = assess_loadability(*model);
    CHECK(l.verdict == LoadVerdict::does_not_load);
    REQUIRE(l.reasons.size() == 1);
    CHECK(l.reasons[0].problem == LoadProblem::not_gguf);
    CHECK(l.reasons[0].text == "llama.cpp loads only GGUF files; this is safetensors; the pinned converter knows Qwen3MoeForCausalLM");
    CHECK(l.reasons[0].fix == "convert it with the pinned llama.cpp's convert_hf_to_gguf.py");
    // One of its blobs read alone has no config: the fix sends the user to its model, not to a
    // config.json beside the blob.
    size_t blobs = 0;
    for (const auto& item : std::filesystem::directory_iterator(std::string(MLENS_DEMO_DIR) + "/ollama-store/blobs")) {
        auto opened = open_model(item.path().string());
        if (!opened) continue;
        const Loadability blob = assess_loadability(*opened);
        if (blob.reasons.size() != 1 || blob.reasons[0].problem != LoadProblem::not_gguf) continue;
        CHECK(blob.reasons[0].fix ==
              "open its model in the store (mlens show NAME), which has its config, and get it out with mlens export");
        ++blobs;
    }
    CHECK(blobs > 0);
}

TEST_CASE("loadability: the verdict reads no tensor byte", "[loadability]") {
    TempDir dir;
    std::vector<std::string> paths = {std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf", std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf"};
    for (const LoadFixture& f : load_fixtures(dir)) paths.push_back(f.path);
    for (const std::string& path : paths) {
        INFO(path);
        auto file = open_file(path);
        REQUIRE(file);
        auto recording = std::make_shared<RecordingSource>(*file);
        const Model model = read_gguf(recording);
        recording->forget();  // the reader reads ahead in chunks: only the verdict's own reads count
        assess_loadability(model);
        const uint64_t data_start = model.files[0].data_start_known() ? model.files[0].data_start : recording->size();
        CHECK_FALSE(recording->read_at_or_after(data_start));
    }
}

TEST_CASE("loadability: the verdict of a 262144-token vocabulary takes under 50 ms", "[loadability]") {
    TempDir dir;
    const std::string path = dir.file("vocab.gguf");
    REQUIRE(write_large_gguf(path, {262144, true, 40}));
    auto model = open_gguf(path);
    REQUIRE(model);
    REQUIRE(model->find("tokenizer.ggml.tokens")->value.array->count == 262144);
    const auto start = std::chrono::steady_clock::now();
    const Loadability l = assess_loadability(*model);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CHECK(l.verdict == LoadVerdict::does_not_load);
    CHECK(ms < 50.0);
}

TEST_CASE("loadability: mlens loads prints the verdict, its reasons and fixes", "[loadability][cli]") {
    TempDir dir;
    const std::string path = dir.file("no-eps.gguf");
    write_demo_variant(path, [](Model& m) { remove_metadata(m, "llama.attention.layer_norm_rms_epsilon"); });
    auto run = run_mlens({"loads", path});
    CHECK(run.exit_status == 1);
    CHECK(run.out == path + ": does not load: key not found in model: llama.attention.layer_norm_rms_epsilon\n"
                           "reason missing_key key llama.attention.layer_norm_rms_epsilon: key not found in model: "
                           "llama.attention.layer_norm_rms_epsilon\n"
                           "  fix: set it to the model's config.json \"rms_norm_eps\" (the value convert_hf_to_gguf.py writes there)\n");
    auto json = run_mlens_json({"loads", std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf", "--json"});
    CHECK(json["verdict"] == "loads");
    CHECK(json["reasons"].empty());
    CHECK(json["summary"] == "loads in " + llama_cpp_version());
}

TEST_CASE("loadability: llama.cpp's dry run agrees with the verdict on every fixture", "[loadability][llama]") {
    TempDir dir;
    std::vector<std::pair<std::string, std::string>> cases;  // path, what llama.cpp must say (empty: it loads)
    for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf"}) cases.push_back({std::string(MLENS_DEMO_DIR) + "/" + name, ""});
    for (const LoadFixture& f : load_fixtures(dir)) cases.push_back({f.path, f.said});
    for (const OllamaFixture& f : ollama_fixtures(dir)) cases.push_back({f.path, "?"});
    for (const auto& [path, said] : cases) {
        INFO(path);
        const Loadability verdict = assess_file(path);
        auto run = dry_run_load(path, verdict);
        REQUIRE(run);
        INFO(reasons_text(verdict));
        INFO("as is: " + run->as_is.said + (run->after_compat ? "; after compat: " + run->after_compat->said : std::string()));
        CHECK(run->agrees);
        if (said.empty()) {
            CHECK(run->as_is.loaded);
        } else if (said != "?") {
            INFO(run->as_is.said);
            CHECK(run->as_is.said.find(said) != std::string::npos);
        }
    }
}

TEST_CASE("loadability: a split model given by a later part, or with a part missing, does not load, and llama.cpp agrees",
          "[loadability][llama]") {
    TempDir dir;
    auto whole = open_gguf(std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf");
    REQUIRE(whole);
    const std::string first = test::write_split_gguf(*whole, dir.path(), "tiny", 3, false);
    const std::string second = dir.file("tiny-00002-of-00003.gguf");
    CHECK(assess_file(first).verdict == LoadVerdict::loads);
    const Loadability later = assess_file(second);
    CHECK(later.verdict == LoadVerdict::does_not_load);
    REQUIRE(later.reasons.size() == 1);
    CHECK(later.reasons[0].problem == LoadProblem::later_split_part);
    CHECK(later.reasons[0].fix == "give llama.cpp the first part, " + first);
    auto run = dry_run_load(second, later);
    REQUIRE(run);
    INFO(run->as_is.said);
    CHECK_FALSE(run->as_is.loaded);
    CHECK(run->as_is.said.find("first split") != std::string::npos);
    CHECK(run->agrees);

    std::filesystem::remove(dir.file("tiny-00003-of-00003.gguf"));
    const Loadability missing = assess_file(first);
    REQUIRE(missing.reasons.size() == 1);
    CHECK(missing.reasons[0].problem == LoadProblem::missing_split_part);
    CHECK(missing.reasons[0].text.find("shard 3 of 3") != std::string::npos);
    // info counts the parts present and says so.
    const auto info = nlohmann::json::parse(run_mlens({"info", first, "--json"}).out);
    CHECK(info["missing_files"] == 1);
    CHECK(info["declared_tensor_count"] == whole->tensors.size());
    CHECK(info["tensor_count"].get<uint64_t>() < whole->tensors.size());
    auto text = run_mlens({"info", first});
    CHECK(text.out.find("in the 2 of 3 files present") != std::string::npos);
    // So does fsck, which scans the parts present and fails on the missing one.
    const auto fsck = run_mlens({"fsck", first, "--json"});
    CHECK(fsck.exit_status == 1);
    const auto scan = nlohmann::json::parse(fsck.out);
    CHECK(scan["missing_files"] == 1);
    CHECK(scan["declared_tensor_count"] == whole->tensors.size());
    CHECK(scan["tensors_scanned"] == info["tensor_count"]);
    CHECK(run_mlens({"fsck", first}).out.find("tensors in the 2 of 3 files present") != std::string::npos);
}

TEST_CASE("loadability: a split model's keys are checked against its parts' names and tensors, and llama.cpp agrees",
          "[loadability][llama]") {
    TempDir dir;
    auto whole = open_gguf(std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf");
    REQUIRE(whole);
    const size_t n = whole->tensors.size();
    auto u16 = [](uint64_t v) { return Value::of_scalar(Scalar{ValueType::u16, v}); };
    const std::string twice = whole->tensors[0].name;
    // Each case edits the parts (numbered from 0) of a split in two; its reason names `key` and
    // starts with `text` (the second part's path follows "@"), and llama.cpp's dry run says `said`.
    struct Case {
        std::string name;
        std::function<void(Model&, uint16_t)> edit;
        std::string key, text, said;
    };
    const std::vector<Case> cases = {
        {"tensor-count",
         [&](Model& m, uint16_t no) {
             if (no == 0) set_metadata(m, "split.tensors.count", Value::of_scalar(Scalar{ValueType::i32, n + 1}));
         },
         "split.tensors.count", "corrupted model: " + std::to_string(n + 1) + " tensors expected but " + std::to_string(n) + " found",
         "corrupted model"},
        {"no-tensor-count",
         [](Model& m, uint16_t no) {
             if (no == 0) remove_metadata(m, "split.tensors.count");
         },
         "split.tensors.count", "key not found in model: split.tensors.count", "key not found in model: split.tensors.count"},
        {"count-type",
         [](Model& m, uint16_t no) {
             if (no == 0) set_metadata(m, "split.count", Value::of_u32(2));
         },
         "split.count", "key split.count has wrong type u32 but expected type u16",
         "key split.count has wrong type u32 but expected type u16"},
        {"first-idx",
         [&](Model& m, uint16_t no) {
             if (no == 0) set_metadata(m, "split.no", u16(1));
         },
         "split.no", "illegal split file idx: 1 (file: ", "illegal split file idx"},
        // A tensor name in two parts: each part alone is fine, the model is not.
        {"duplicated",
         [&](Model& m, uint16_t no) {
             if (no == 1) m.tensors.back().name = twice;
         },
         "split.count", "invalid model: tensor '" + twice + "' is duplicated", "is duplicated"},
        // A later part that does not say it is the part its place is.
        {"no-idx",
         [](Model& m, uint16_t no) {
             if (no == 1) remove_metadata(m, "split.no");
         },
         "split.no", "missing key split.no in GGUF split @", "missing key split.no"},
        {"wrong-idx",
         [&](Model& m, uint16_t no) {
             if (no == 1) set_metadata(m, "split.no", u16(5));
         },
         "split.no", "invalid split file idx: 5 (file: @), expected 1", "invalid split file idx: 5"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const std::string sub = dir.file(c.name);
        std::filesystem::create_directories(sub);
        const std::string first = test::write_split_gguf(*whole, sub, "tiny", 2, false, c.edit);
        const Loadability l = assess_file(first);
        CHECK(l.verdict == LoadVerdict::does_not_load);
        REQUIRE(l.reasons.size() == 1);
        CHECK(l.reasons[0].problem == LoadProblem::split_mismatch);
        CHECK(l.reasons[0].name == c.key);
        std::string text = c.text;
        if (const size_t at = text.find('@'); at != std::string::npos) text.replace(at, 1, sub + "/tiny-00002-of-00002.gguf");
        CHECK(l.reasons[0].text.starts_with(text));
        auto run = dry_run_load(first, l);
        REQUIRE(run);
        INFO(run->as_is.said);
        CHECK_FALSE(run->as_is.loaded);
        CHECK(run->as_is.said.find(c.said) != std::string::npos);
        CHECK(run->agrees);
    }
    // No split.count in a part named as the first of two: llama.cpp reads that file alone, which
    // lacks the other part's tensors; named so beside nothing, a whole model loads.
    {
        const std::string sub = dir.file("no-count");
        std::filesystem::create_directories(sub);
        const std::string first = test::write_split_gguf(*whole, sub, "tiny", 2, false, [](Model& m, uint16_t no) {
            if (no == 0) remove_metadata(m, "split.count");
        });
        const Loadability l = assess_file(first);
        CHECK(l.verdict == LoadVerdict::does_not_load);
        REQUIRE(!l.reasons.empty());
        CHECK(l.reasons[0].problem == LoadProblem::missing_tensor);
        REQUIRE(!l.warnings.empty());
        CHECK(l.warnings[0].problem == LoadProblem::split_mismatch);
        CHECK(l.warnings[0].text ==
              "the file is named as part 1 of 2 but has no split.count: llama.cpp reads it alone, and the other parts beside it are not "
              "read");
        auto run = dry_run_load(first, l);
        REQUIRE(run);
        CHECK(run->agrees);
        const std::string named = dir.file("w-00001-of-00002.gguf");
        write_demo_variant(named, [](Model&) {});
        const Loadability alone = assess_file(named);
        CHECK(alone.verdict == LoadVerdict::loads);
        REQUIRE(!alone.warnings.empty());
        CHECK(alone.warnings[0].problem == LoadProblem::split_mismatch);
        auto loaded = dry_run_load(named, alone);
        REQUIRE(loaded);
        CHECK(loaded->as_is.loaded);
        CHECK(loaded->agrees);
    }
    // A file not named as a part whose keys say it is one: llama.cpp looks for its parts by a name it does not have.
    const std::string single = dir.file("single.gguf");
    write_demo_variant(single, [&](Model& m) {
        set_metadata(m, "split.no", u16(0));
        set_metadata(m, "split.count", u16(2));
    });
    const Loadability l = assess_file(single);
    REQUIRE(l.reasons.size() == 1);
    CHECK(l.reasons[0].problem == LoadProblem::split_mismatch);
    CHECK(l.reasons[0].text == "invalid split file name: " + single + " (split.count 2 asks for a name ending in -00001-of-00002.gguf)");
    auto run = dry_run_load(single, l);
    REQUIRE(run);
    INFO(run->as_is.said);
    CHECK(run->as_is.said.find("invalid split file name") != std::string::npos);
    CHECK(run->agrees);
}

TEST_CASE("loadability: the generator stops the build when a pattern it relies on finds nothing", "[loadability]") {
    TempDir dir;
    const std::string source = llama_source_dir();
    std::filesystem::create_directories(dir.path() + "/src/models");
    for (const char* rel : {"src/llama-model.cpp", "src/models/models.h"})
        std::filesystem::copy_file(source + "/" + rel, dir.path() + "/" + rel);
    // A llama-arch.cpp whose architecture table is gone, as a refactored llama.cpp might have it.
    write_whole_file(dir.file("src/llama-arch.cpp"), {});
    const std::string out = dir.file("out.cpp");
    const std::string command = "python3 " + std::string(MLENS_REQUIREMENTS_GENERATOR) + " " + dir.path() + " " + out + " 2>" + dir.file("err.txt");
    CHECK(std::system(command.c_str()) != 0);
    const std::vector<uint8_t> err = read_whole_file(dir.file("err.txt"));
    CHECK(std::string(err.begin(), err.end()) == "generate_llama_requirements: table LLM_ARCH_NAMES not found\n");
    CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("loadability: a conditional tensor is never claimed missing, an uneven one is a warning", "[loadability]") {
    TempDir dir;
    // llama creates ffn_gate under `if (n_expert == 0)`: conditional, so its absence is no reason.
    const std::string path = dir.file("no-gate-0.gguf");
    write_demo_variant(path, [](Model& m) { std::erase_if(m.tensors, [](const TensorInfo& t) { return t.name == "blk.0.ffn_gate.weight"; }); });
    const Loadability l = assess_file(path);
    CHECK(l.verdict == LoadVerdict::loads);
    CHECK(l.reasons.empty());
    REQUIRE(l.warnings.size() == 1);
    CHECK(l.warnings[0].problem == LoadProblem::uneven_tensor);
    CHECK(l.warnings[0].name == "blk.0.ffn_gate.weight");
    CHECK(l.warnings[0].text ==
          "tensor 'blk.0.ffn_gate.weight' is absent although other layers have it; the llama loader creates it under a condition not "
          "decided here, and llama.cpp refuses the file if it asks for it");
    // Absent from every layer: nothing to say (a MoE file has no ffn_gate at all).
    const std::string none = dir.file("no-gate.gguf");
    write_demo_variant(none, [](Model& m) { std::erase_if(m.tensors, [](const TensorInfo& t) { return t.name.ends_with(".ffn_gate.weight"); }); });
    const Loadability n = assess_file(none);
    CHECK(n.verdict == LoadVerdict::loads);
    CHECK(n.warnings.empty());
}
