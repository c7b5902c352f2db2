// mlens edit: the diff of --dry-run, an edited demo model that llama.cpp loads with the same
// tokens and the new chat template, hostile edits refused with nothing written, and an in-place
// edit killed at each step leaving the old or the new header with its undo file.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "build_paths.h"
#include "cli_runner.h"
#include "loadability_fixtures.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/ollama/blob_hash.h"
#include "safetensors_builder.h"
#include "split_shards.h"
#include "test_paths.h"

using namespace mlens;
namespace fs = std::filesystem;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

std::string copy_demo(const test::TempDir& dir, const std::string& name = "model.gguf") {
    fs::copy_file(demo("tiny-llama-f32.gguf"), dir.file(name));
    return dir.file(name);
}

const std::string kChatml = "{# " + std::string(3072, '=') +
    " #}{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

std::vector<int64_t> token_ids(const std::string& path) {
    nlohmann::json j = test::run_mlens_json({"tokenize", path, "Hello world, once upon a time", "--json"});
    std::vector<int64_t> ids;
    for (const auto& t : j["tokens"]) ids.push_back(t["id"].get<int64_t>());
    return ids;
}

// The JSON error of a refused edit, after checking nothing was written.
std::string refused(const std::vector<std::string>& args, const test::TempDir& dir, const std::vector<uint8_t>& input_before,
                    const std::string& input) {
    const size_t files_before = test::folder_bytes(dir.path()).size();
    test::CliRun run = test::run_mlens(args);
    CHECK(run.exit_status != 0);
    CHECK(test::read_whole_file(input) == input_before);
    CHECK(test::folder_bytes(dir.path()).size() == files_before);
    CHECK(test::leftovers_in(dir.path()) == 0);
    const auto j = nlohmann::json::parse(run.out, nullptr, false);
    if (j.is_discarded() || !j.contains("error")) return "no error object: " + run.out;
    return j["error"]["code"].get<std::string>();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Waits (up to a minute) until an in-place edit run with MLENS_EDIT_PAUSE_MS says it finished `step`.
bool reached_step(const test::MlensProcess& run, const std::string& step) {
    const auto start = std::chrono::steady_clock::now();
    while (!contains(run.err_so_far(), "in-place step " + step) && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return contains(run.err_so_far(), "in-place step " + step);
}

}  // namespace

TEST_CASE("mlens edit --dry-run prints the header diff and writes nothing", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    nlohmann::json j = test::run_mlens_json({"edit", in, "--dry-run", "--set", "tokenizer.ggml.eos_token_id=3", "--set",
                                             "general.name=fixed", "--set", "my.flag:BOOL=true", "--json"});
    CHECK(j["dry_run"] == true);
    CHECK(j["result"].is_null());
    const auto& changes = j["plan"]["changes"];
    REQUIRE(changes.size() == 3);
    CHECK(changes[0]["kind"] == "changed");
    CHECK(changes[1]["kind"] == "changed");
    CHECK(changes[2] ==
          nlohmann::json{{"kind", "added"},
                         {"key", "my.flag"},
                         {"new_key", nullptr},
                         {"type_before", nullptr},
                         {"type_after", "BOOL"},
                         {"value_before", nullptr},
                         {"value_after", "true"},
                         {"bytes_before", 0},
                         {"bytes_after", 8 + 7 + 4 + 1}});
    CHECK(j["plan"]["keys_after"].get<uint64_t>() == j["plan"]["keys_before"].get<uint64_t>() + 1);
    CHECK(test::folder_bytes(dir.path()).size() == 1);
    test::CliRun text = test::run_mlens({"edit", in, "--dry-run", "--set", "tokenizer.ggml.eos_token_id=3"});
    CHECK(text.exit_status == 0);
    CHECK(contains(text.out, "tokenizer.ggml.eos_token_id  UINT32  2 → 3"));
    CHECK(contains(text.out, "fits in place: yes; data: clone"));
    CHECK(contains(text.out, "dry run: nothing written"));
}

TEST_CASE("an edited demo model loads in llama.cpp with the same tokens and renders the new chat template", "[edit][cli][infer]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    test::write_whole_file(dir.file("chatml.jinja"), std::vector<uint8_t>(kChatml.begin(), kChatml.end()));
    nlohmann::json j = test::run_mlens_json({"edit", in, "-o", dir.file("fixed.gguf"), "--chat-template-file", dir.file("chatml.jinja"),
                                             "--set", "tokenizer.ggml.eos_token_id=3", "--set", "general.name=Tiny Fixed", "--json"});
    CHECK(j["result"]["data_path"] == "stream");
    CHECK(j["result"]["verification"]["passed"] == true);
    CHECK(j["result"]["verification"]["tensors_equal"] == j["plan"]["tensors"]);
    CHECK(j["plan"]["data_shift"].get<int64_t>() > 3000);
    CHECK(token_ids(dir.file("fixed.gguf")) == token_ids(in));
    nlohmann::json chat = test::run_mlens_json({"tokenize", dir.file("fixed.gguf"), "--chat", "--json"});
    CHECK(chat["template"] == kChatml);
    CHECK(contains(chat["prompt"].get<std::string>(), "<|im_start|>user\n"));
    CHECK(contains(chat["prompt"].get<std::string>(), "<|im_start|>assistant\n"));
    nlohmann::json kv = test::run_mlens_json({"kv", dir.file("fixed.gguf"), "--json"});
    bool named = false;
    for (const auto& e : kv)
        if (e["key"] == "general.name") named = e["value"] == "Tiny Fixed";
    CHECK(named);
}

TEST_CASE("hostile edits are refused with their code and nothing is written", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const auto before = test::read_whole_file(in);
    const std::string out = dir.file("out.gguf");
    CHECK(refused({"edit", in, "-o", out, "--set", "bad\xff:STRING=x", "--json"}, dir, before, in) == "E_INVALID_UTF8");
    CHECK(refused({"edit", in, "-o", out, "--set", "tokenizer.ggml.eos_token_id=4294967296", "--json"}, dir, before, in) == "E_RANGE");
    CHECK(refused({"edit", in, "-o", out, "--set", "general.name=a", "--set", "general.name=b", "--json"}, dir, before, in) ==
          "E_EDIT_CONFLICT");
    CHECK(refused({"edit", in, "-o", out, "--rename", "general.name", "general.architecture", "--json"}, dir, before, in) ==
          "E_DUPLICATE_KEY");
    test::write_whole_file(dir.file("dup.json"), std::vector<uint8_t>{'{', '"', 's', 'e', 't', '"', ':', '{', '"', 'k', '"',
                                                                      ':', '1', ',', '"', 'k', '"', ':', '2', '}', '}'});
    CHECK(refused({"edit", in, "-o", out, "--from-json", dir.file("dup.json"), "--json"}, dir, before, in) == "E_DUPLICATE_KEY");
    CHECK(refused({"edit", in, "--in-place", "--set", "general.name=" + std::string(200, 'n'), "--json"}, dir, before, in) ==
          "E_IN_PLACE_NO_FIT");
    REQUIRE(::chmod(in.c_str(), 0444) == 0);
    CHECK(refused({"edit", in, "--in-place", "--set", "tokenizer.ggml.eos_token_id=3", "--json"}, dir, before, in) == "E_PERMISSION");
    REQUIRE(::chmod(in.c_str(), 0644) == 0);
    CHECK(refused({"edit", in, "-o", in, "--set", "general.name=x", "--json"}, dir, before, in) == "E_OUTPUT_IS_INPUT");
    test::CliRun usage = test::run_mlens({"edit", in, "--set", "general.name=x"});
    CHECK(usage.exit_status == 2);
}

TEST_CASE("an in-place edit killed at any step leaves the old or the new header, and --undo restores the old", "[edit][cli]") {
    for (const char* step : {"undo_saved", "header_written"}) {
        DYNAMIC_SECTION("killed after " << step) {
            test::TempDir dir;
            const std::string in = copy_demo(dir);
            const auto original = test::read_whole_file(in);
            test::ScopedEnv pause("MLENS_EDIT_PAUSE_MS", "5000");
            test::MlensProcess run({"edit", in, "--in-place", "--set", "tokenizer.ggml.eos_token_id=3"});
            REQUIRE(reached_step(run, step));
            REQUIRE(::kill(run.pid(), SIGKILL) == 0);
            test::CliRun ended = run.wait();
            CHECK(ended.signal == SIGKILL);
            CHECK(fs::exists(in + ".mlens-undo"));
            const auto after = test::read_whole_file(in);
            const int64_t difference = test::first_difference(after, original);
            const bool header_written = std::string(step) == "header_written";
            CHECK((difference == -1) == !header_written);
            nlohmann::json undone = test::run_mlens_json({"edit", "--undo", in, "--json"});
            CHECK(undone["undo"]["already_original"] == !header_written);
            CHECK(undone["undo"]["bytes_restored"] == (header_written ? 1 : 0));
            CHECK(test::read_whole_file(in) == original);
            CHECK_FALSE(fs::exists(in + ".mlens-undo"));
        }
    }
}

TEST_CASE("an edit is verified with the loadability verdict: one that breaks loading is refused", "[edit][cli][loadability]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> before = test::read_whole_file(in);
    // llama.cpp requires the block count: deleting it would make a file that no longer loads.
    test::CliRun broken = test::run_mlens({"edit", in, "-o", dir.file("broken.gguf"), "--delete", "llama.block_count"});
    CHECK(broken.exit_status == 1);
    CHECK(contains(broken.err, "E_EDIT_VERIFY"));
    CHECK(contains(broken.err,
                   "the input loads in llama.cpp and the output would not: does not load: key not found in model: llama.block_count"));
    CHECK(!fs::exists(dir.file("broken.gguf")));
    CHECK(test::read_whole_file(in) == before);
    // A harmless edit reports the output's verdict.
    test::CliRun renamed = test::run_mlens({"edit", in, "-o", dir.file("renamed.gguf"), "--set", "general.name=renamed"});
    CHECK(renamed.exit_status == 0);
    CHECK(contains(renamed.out, "the output loads in llama.cpp"));
    const nlohmann::json j = test::run_mlens_json({"edit", in, "-o", dir.file("renamed2.gguf"), "--set", "general.name=renamed", "--json"});
    CHECK(j["result"]["verification"]["loads"]["verdict"] == "loads");
    CHECK(j["result"]["verification"]["llama_dry_run"]["output"]["loaded"] == true);
    CHECK(j["result"]["verification"]["llama_dry_run"]["input"].is_null());
}

TEST_CASE("llama.cpp's own dry run refuses the edits the static verdict does not check, with -o and in place", "[edit][cli][loadability]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> before = test::read_whole_file(in);
    test::ScopedEnv tmp("TMPDIR", dir.file("tmp"));
    fs::create_directories(dir.file("tmp"));
    // Each: the edit (close enough in length to the value it replaces to fit in place), which
    // the static verdict does not check, and what llama.cpp says of the output.
    const std::vector<std::pair<std::string, std::string>> refusals = {
        {"llama.block_count:UINT64=2", "key llama.block_count has wrong type u64 but expected type u32"},
        {"llama.feed_forward_length=128", "tensor 'blk.0.ffn_gate.weight' has wrong shape"},
        {"llama.attention.head_count_kv=4", "tensor 'blk.0.attn_k.weight' has wrong shape"}};
    for (const auto& [edit, said] : refusals) {
        for (const bool in_place : {false, true}) {
            INFO(edit << (in_place ? " in place" : " -o"));
            std::vector<std::string> args = {"edit", in, "--set", edit, "--json"};
            if (in_place)
                args.push_back("--in-place");
            else
                args.insert(args.end(), {"-o", dir.file("out.gguf")});
            test::CliRun run = test::run_mlens(args);
            CHECK(run.exit_status == 1);
            CHECK(contains(run.out, "E_EDIT_VERIFY"));
            CHECK(contains(run.err, "the input loads in llama.cpp and llama.cpp refuses the output: "));
            CHECK(contains(run.err, said));
            CHECK_FALSE(fs::exists(dir.file("out.gguf")));
            CHECK_FALSE(fs::exists(in + ".mlens-undo"));
            CHECK(test::read_whole_file(in) == before);
            CHECK(fs::is_empty(dir.file("tmp")));  // the in-place check's sparse copy removed
        }
    }
}

TEST_CASE("an in-place edit is refused for a hard-linked file and while another edits it, and fails when the file is replaced meanwhile", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> before = test::read_whole_file(in);
    // Same length: the new header takes the old one's space.
    const std::string same_length = "general.name=ModelLens tiny llama demo (F32)XXXXXX";

    SECTION("hard-linked: every name would change, a store blob's among them") {
        REQUIRE(::link(in.c_str(), dir.file("other-name.gguf").c_str()) == 0);
        CHECK(refused({"edit", in, "--in-place", "--set", same_length, "--json"}, dir, before, in) == "E_HARD_LINKED");
    }
    SECTION("hard-linked after the edit: the undo is refused as the edit would be, the file and its undo file kept") {
        REQUIRE(test::run_mlens({"edit", in, "--in-place", "--set", same_length}).exit_status == 0);
        const std::vector<uint8_t> edited = test::read_whole_file(in);
        REQUIRE(edited != before);
        REQUIRE(::link(in.c_str(), dir.file("other-name.gguf").c_str()) == 0);
        CHECK(refused({"edit", in, "--undo", "--json"}, dir, edited, in) == "E_HARD_LINKED");
        CHECK(fs::exists(in + ".mlens-undo"));
        // One name again: the undo goes through.
        REQUIRE(::unlink(dir.file("other-name.gguf").c_str()) == 0);
        CHECK(test::run_mlens({"edit", in, "--undo"}).exit_status == 0);
        CHECK(test::read_whole_file(in) == before);
    }
    SECTION("another process is editing it in place: E_BUSY, its edit alone lands") {
        test::ScopedEnv pause("MLENS_EDIT_PAUSE_MS", "3000");
        test::MlensProcess first({"edit", in, "--in-place", "--set", same_length});
        REQUIRE(reached_step(first, "undo_saved"));
        test::CliRun second = test::run_mlens({"edit", in, "--in-place", "--set", "general.name=ModelLens tiny llama demo (F32)YYYYYY", "--json"});
        CHECK(second.exit_status == 1);
        CHECK(contains(second.out, "E_BUSY"));
        test::CliRun ended = first.wait();
        CHECK(ended.exit_status == 0);
        CHECK(test::run_mlens_json({"kv", in, "--json"}).dump().find("(F32)XXXXXX") != std::string::npos);
    }
    SECTION("replaced by another writer mid-edit: E_OUTPUT_REPLACED, the new file untouched, no undo file left") {
        test::ScopedEnv pause("MLENS_EDIT_PAUSE_MS", "3000");
        test::MlensProcess edit({"edit", in, "--in-place", "--set", same_length});
        REQUIRE(reached_step(edit, "undo_saved"));
        fs::copy_file(demo("tiny-llama-q8_0.gguf"), dir.file("replacement.gguf"));
        REQUIRE(::rename(dir.file("replacement.gguf").c_str(), in.c_str()) == 0);
        test::CliRun ended = edit.wait();
        CHECK(ended.exit_status == 1);
        CHECK(contains(ended.err, "E_OUTPUT_REPLACED"));
        CHECK(test::read_whole_file(in) == test::read_whole_file(demo("tiny-llama-q8_0.gguf")));
        CHECK_FALSE(fs::exists(in + ".mlens-undo"));
    }
    SECTION("renamed away mid-edit: E_OUTPUT_REPLACED, the undo file kept, and it restores the renamed file") {
        test::ScopedEnv pause("MLENS_EDIT_PAUSE_MS", "3000");
        test::MlensProcess edit({"edit", in, "--in-place", "--set", same_length});
        REQUIRE(reached_step(edit, "undo_saved"));
        const std::string kept = dir.file("kept.gguf");
        REQUIRE(::rename(in.c_str(), kept.c_str()) == 0);
        test::CliRun ended = edit.wait();
        CHECK(ended.exit_status == 1);
        CHECK(contains(ended.err, "E_OUTPUT_REPLACED"));
        CHECK(contains(ended.err, "which now has another name; its old header bytes are kept in " + in + ".mlens-undo"));
        REQUIRE(fs::exists(in + ".mlens-undo"));
        CHECK(test::read_whole_file(kept) != before);
        REQUIRE(::rename((in + ".mlens-undo").c_str(), (kept + ".mlens-undo").c_str()) == 0);
        CHECK(test::run_mlens({"edit", kept, "--undo"}).exit_status == 0);
        CHECK(test::read_whole_file(kept) == before);
    }
}

TEST_CASE("mlens edit --undo refuses a damaged undo file by its checksum, restores nothing and keeps it", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> original = test::read_whole_file(in);
    test::CliRun edited = test::run_mlens({"edit", in, "--in-place", "--set", "general.name=ModelLens tiny llama demo (F32)XXXXXX"});
    REQUIRE(edited.exit_status == 0);
    const std::vector<uint8_t> after_edit = test::read_whole_file(in);
    const std::string undo = in + ".mlens-undo";
    std::vector<uint8_t> saved = test::read_whole_file(undo);
    // A flipped byte in the span's offset (bytes 16-23), in the checksum (32-95), in the old bytes
    // (from 96) and in the new bytes (the last).
    for (const size_t at : {size_t{20}, size_t{40}, size_t{100}, saved.size() - 1}) {
        std::vector<uint8_t> damaged = saved;
        damaged[at] ^= 0x5A;
        test::write_whole_file(undo, damaged);
        test::CliRun run = test::run_mlens({"edit", "--undo", in, "--json"});
        CHECK(run.exit_status == 1);
        CHECK(contains(run.out, "E_UNDO_MISMATCH"));
        CHECK(test::read_whole_file(in) == after_edit);
        CHECK(fs::exists(undo));
    }
    test::write_whole_file(undo, saved);
    CHECK(test::run_mlens({"edit", "--undo", in}).exit_status == 0);
    CHECK(test::read_whole_file(in) == original);
    CHECK_FALSE(fs::exists(undo));
}

// An undo file whose checksum holds, for `span` old and new bytes at `at` of a file of `size` bytes.
std::vector<uint8_t> crafted_undo(uint64_t size, uint64_t at, const std::string& old_bytes, const std::string& new_bytes) {
    std::string fields = "MLUNDO02";
    for (const uint64_t v : {size, at, static_cast<uint64_t>(old_bytes.size())})
        for (int b = 0; b < 8; ++b) fields.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
    const std::string text = fields + sha256_hex_digest(fields + old_bytes + new_bytes) + old_bytes + new_bytes;
    return std::vector<uint8_t>(text.begin(), text.end());
}

TEST_CASE("mlens edit --undo restores header bytes only - an undo file naming the magic or the data is refused", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> original = test::read_whole_file(in);
    const std::string undo = in + ".mlens-undo";
    auto bytes_at = [&](uint64_t at, size_t n) { return std::string(original.begin() + at, original.begin() + at + n); };
    // The magic, the version (4), the tensor count (8) and the tensor data: no edit in place writes there.
    for (const uint64_t at : {uint64_t{0}, uint64_t{4}, uint64_t{8}, uint64_t{1000000}}) {
        INFO("span at " << at);
        test::write_whole_file(undo, crafted_undo(original.size(), at, "XXXX", bytes_at(at, 4)));
        test::CliRun run = test::run_mlens({"edit", "--undo", in, "--json"});
        CHECK(run.exit_status == 1);
        CHECK(contains(run.out, "E_UNDO_MISMATCH"));
        CHECK(contains(run.out, "not header bytes an edit in place of"));
        CHECK(test::read_whole_file(in) == original);
        CHECK(fs::exists(undo));
    }
}

TEST_CASE("an in-place edit of a safetensors file's __metadata__ is undone", "[edit][cli][safetensors]") {
    test::TempDir dir;
    test::SafetensorsBuilder b;
    b.metadata("format", "pt").metadata("note", "a note with room for a shorter one");
    b.tensor("w", "F32", "[2]", {0, 0, 192, 63, 0, 0, 0, 192});
    const std::string in = dir.file("m.safetensors");
    test::write_whole_file(in, b.bytes());
    const std::vector<uint8_t> original = test::read_whole_file(in);
    test::CliRun edited = test::run_mlens({"edit", in, "--in-place", "--set", "note=short"});
    INFO(edited.out << edited.err);
    REQUIRE(edited.exit_status == 0);
    CHECK_FALSE(test::read_whole_file(in) == original);
    test::CliRun undone = test::run_mlens({"edit", "--undo", in});
    INFO(undone.out << undone.err);
    CHECK(undone.exit_status == 0);
    const bool restored = test::read_whole_file(in) == original;
    CHECK(restored);
    CHECK_FALSE(fs::exists(in + ".mlens-undo"));
}

TEST_CASE("an in-place edit of a split model's later shard is undone from that shard's own header", "[edit][cli]") {
    test::TempDir dir;
    auto whole = open_gguf(demo("tiny-llama-f32.gguf"));
    REQUIRE(whole);
    // The first shard holds only the keys, so its header ends far before the second's. The second
    // carries a name of its own, for the edit to change (its split keys cannot be edited).
    test::write_split_gguf(*whole, dir.path(), "tiny", 2, true, [](Model& m, uint16_t no) {
        if (no == 1) test::set_metadata(m, "general.name", Value::of_string("part two"));
    });
    const std::string second = dir.file("tiny-00002-of-00002.gguf");
    const std::vector<uint8_t> original = test::read_whole_file(second);
    test::CliRun edited = test::run_mlens({"edit", second, "--in-place", "--set", "general.name=part 2!!"});
    INFO(edited.out << edited.err);
    REQUIRE(edited.exit_status == 0);
    CHECK_FALSE(test::read_whole_file(second) == original);
    test::CliRun undone = test::run_mlens({"edit", "--undo", second});
    INFO(undone.out << undone.err);
    CHECK(undone.exit_status == 0);
    const bool restored = test::read_whole_file(second) == original;
    CHECK(restored);
}

TEST_CASE("a split model's part is edited as part of the whole model, and its split keys are not edited", "[edit][cli]") {
    test::TempDir dir;
    auto whole = open_gguf(demo("tiny-llama-f32.gguf"));
    REQUIRE(whole);
    const std::string first = test::write_split_gguf(*whole, dir.path(), "tiny", 2, false);
    const std::vector<uint8_t> before = test::read_whole_file(first);
    // The split keys say how the parts fit together: no edit of one part may change them.
    for (const char* edit : {"split.count=3", "split.no=1", "split.tensors.count=5"})
        CHECK(refused({"edit", first, "--in-place", "--set", edit, "--json"}, dir, before, first) == "E_EDIT_UNSUPPORTED");
    // An edit that breaks the whole model is refused though the part never loads alone.
    test::CliRun broken = test::run_mlens({"edit", first, "-o", dir.file("out.gguf"), "--set", "general.architecture=mamba3000", "--json"});
    CHECK(broken.exit_status == 1);
    CHECK(contains(broken.err, "the input loads in llama.cpp and the output would not"));
    CHECK_FALSE(fs::exists(dir.file("out.gguf")));
    // One that keeps it loading is verified as the whole model's.
    test::CliRun renamed = test::run_mlens({"edit", first, "-o", dir.file("out.gguf"), "--set", "general.name=tiny split"});
    INFO(renamed.out << renamed.err);
    CHECK(renamed.exit_status == 0);
    CHECK(contains(renamed.out, "the output loads in llama.cpp"));
    CHECK(contains(renamed.out, "(as a part of its split model)"));
}

TEST_CASE("a file named as an Ollama blob is never edited in place, wherever its folder is mounted", "[edit][cli][ollama]") {
    test::TempDir dir;
    const std::string blob = copy_demo(dir, "sha256-" + std::string(64, 'a'));
    const std::vector<uint8_t> before = test::read_whole_file(blob);
    CHECK(refused({"edit", blob, "--in-place", "--set", "general.name=x", "--json"}, dir, before, blob) == "E_OUTPUT_IN_STORE");
    CHECK_FALSE(fs::exists(blob + ".mlens-undo"));
}

TEST_CASE("an in-place edit that changes no byte writes nothing and names no undo file", "[edit][cli]") {
    test::TempDir dir;
    const std::string in = copy_demo(dir);
    const std::vector<uint8_t> before = test::read_whole_file(in);
    test::CliRun same = test::run_mlens({"edit", in, "--in-place", "--set", "general.name=ModelLens tiny llama demo (F32)"});
    CHECK(same.exit_status == 0);
    CHECK(contains(same.out, "left " + in + " as it was: its header already holds these values (nothing written, no undo file)"));
    CHECK_FALSE(contains(same.out, ".mlens-undo"));
    const nlohmann::json j = test::run_mlens_json({"edit", in, "--in-place", "--set", "general.name=ModelLens tiny llama demo (F32)", "--json"});
    CHECK(j["result"]["undo_file"].is_null());
    CHECK(j["result"]["bytes_written"] == 0);
    CHECK_FALSE(fs::exists(in + ".mlens-undo"));
    CHECK(test::read_whole_file(in) == before);
}
