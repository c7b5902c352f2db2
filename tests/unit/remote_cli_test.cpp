// The CLI on remote models: info, kv, tensors and dump of every demo model and of a 262k-token
// vocabulary print, byte for byte, what they print for the local file, but for the path: a
// command shows the reference as it was typed, so the only difference allowed is the URL where
// the local run shows the local path (normalised here, nothing else is).
#include <catch2/catch.hpp>
#include <ggml.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include "build_paths.h"
#include "cli_runner.h"
#include "large_gguf.h"
#include "loopback_server.h"
#include "mlens/open/target.h"
#include "model_fixture.h"
#include "registry_fixture.h"
#include "safetensors_builder.h"
#include "split_shards.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kDemo = MLENS_DEMO_DIR;

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
    return text;
}

// What `mlens COMMAND... LOCAL` and `mlens COMMAND... REMOTE` print.
std::pair<test::CliRun, test::CliRun> run_both(const std::vector<std::string>& command, const std::string& local, const std::string& remote) {
    std::vector<std::string> local_args = command, remote_args = command;
    local_args.push_back(local);
    remote_args.push_back(remote);
    return {test::run_mlens(local_args), test::run_mlens(remote_args)};
}

// Runs each command on the local file and on its URL and compares what they print.
void check_same_output(const std::string& local, const std::string& url) {
    const std::vector<std::vector<std::string>> commands = {
        {"info"}, {"info", "--json"}, {"kv"}, {"kv", "--json"}, {"tensors"}, {"tensors", "--json"}, {"dump"}, {"dump", "--json"}};
    for (const auto& command : commands) {
        const auto [a, b] = run_both(command, local, url);
        INFO(command[0] << (command.size() > 1 ? " " + command[1] : "") << " " << local << "\n" << b.err);
        CHECK(b.exit_status == a.exit_status);
        CHECK(replaced(b.out, url, local) == a.out);
        CHECK(replaced(b.err, url, local) == a.err);
    }
}

}  // namespace

TEST_CASE("info, kv, tensors and dump of every demo model print the same remote as local", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf", "tiny-llama-q8_0.gguf", "ollama-gemma3.gguf", "ollama-qwen25vl.gguf"}) {
        const std::string local = kDemo + "/" + name;
        REQUIRE(server.serve_file(std::string("/demo/") + name, local));
        check_same_output(local, server.url(std::string("/demo/") + name));
    }
}

TEST_CASE("info, kv, tensors and dump of a 262k-token vocabulary print the same remote as local", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::TempDir dir;
    test::LargeGguf spec;
    spec.tokens = 262144;
    spec.token_types = true;
    spec.tensors = 10;
    REQUIRE(test::write_large_gguf(dir.file("vocab.gguf"), spec));
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/vocab.gguf", dir.file("vocab.gguf")));
    check_same_output(dir.file("vocab.gguf"), server.url("/vocab.gguf"));
    // The first run opened the header in 3 requests; the 7 others found it in the cache and asked
    // for one byte each, to learn that the file is the one stored.
    std::vector<std::string> ranges;
    for (const test::LoggedRequest& r : server.log()) ranges.push_back(r.range);
    std::vector<std::string> expected = {"bytes=0-524287", "bytes=524288-2097151", "bytes=2097152-6705631"};
    expected.insert(expected.end(), 7, "bytes=0-0");
    CHECK(ranges == expected);
}

TEST_CASE("stats of one remote tensor fetches the header and that tensor only", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    const std::string local = kDemo + "/tiny-llama-f32.gguf";
    REQUIRE(server.serve_file("/tiny.gguf", local));
    const nlohmann::json tensors = test::run_mlens_json({"tensors", "--json", local});
    uint64_t tensor_bytes = 0;
    for (const auto& t : tensors)
        if (t["name"] == "output.weight") tensor_bytes = t["n_bytes"].get<uint64_t>();
    REQUIRE(tensor_bytes > 1000000);
    const test::CliRun a = test::run_mlens({"stats", local, "output.weight", "--json"});
    const test::CliRun b = test::run_mlens({"stats", server.url("/tiny.gguf"), "output.weight", "--json"});
    CHECK(b.exit_status == 0);
    // Sums of a parallel pass may differ in their last digits from run to run, local or not: the
    // figures that do not depend on the order are compared.
    const nlohmann::json local_stats = nlohmann::json::parse(a.out), remote_stats = nlohmann::json::parse(b.out);
    for (const char* figure : {"count", "finite", "min", "max", "zeros", "nan"}) CHECK(remote_stats[figure] == local_stats[figure]);
    CHECK(server.body_bytes() <= tensor_bytes + (2u << 20));
}

TEST_CASE("info, kv, tensors and dump of every demo store model print the same from a registry as from the store", "[remote][cli][ollama]") {
    const test::RegistryFixture served("registry-token-2");
    const std::string& store = served.store;
    const std::vector<std::string>& models = served.models;
    REQUIRE(models.size() == 6);
    for (const std::string& model : models) {
        const std::string repository = served.registry.base_url() + "/v2/" + model.substr(0, model.find(':'));
        for (const auto& command : std::vector<std::vector<std::string>>{{"info"}, {"kv", "--json"}, {"tensors"}, {"dump", "--json"}}) {
            const auto [a, b] = run_both(command, store + "/" + model, "ollama://" + model);
            // What differs is where the blobs are: the store's files, the registry's URLs.
            std::string out = replaced(b.out, "ollama://" + model, store + "/" + model);
            out = replaced(out, repository + "/blobs/sha256:", store + "/blobs/sha256-");
            INFO(command[0] << " " << model << "\n" << b.err);
            CHECK(b.exit_status == a.exit_status);
            CHECK(out == a.out);
        }
    }
}

namespace {

// The demo Q4_0 model written as two shards, "tiny-0000N-of-00002.gguf" in `dir`: its keys and
// first half of the tensors in the first, the other half in the second.
void write_two_shards(const std::string& dir) {
    auto whole = open_model(kDemo + "/tiny-llama-q4_0.gguf");
    REQUIRE(whole);
    test::write_split_gguf(*whole, dir, "tiny", 2, false);
}

}  // namespace

TEST_CASE("naming any shard of a remote split GGUF opens every shard", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::TempDir dir;
    write_two_shards(dir.path());
    test::LoopbackServer server;
    for (const char* name : {"tiny-00001-of-00002.gguf", "tiny-00002-of-00002.gguf"})
        REQUIRE(server.serve_file(std::string("/split/") + name, dir.file(name)));
    for (const char* name : {"tiny-00001-of-00002.gguf", "tiny-00002-of-00002.gguf"}) {
        const std::string local = dir.file(name), url = server.url(std::string("/split/") + name);
        for (const auto& command : std::vector<std::vector<std::string>>{{"info"}, {"tensors", "--json"}, {"dump", "--json"}}) {
            const auto [a, b] = run_both(command, local, url);
            INFO(command[0] << " " << name << "\n" << b.err);
            CHECK(b.exit_status == 0);
            CHECK(replaced(replaced(b.out, url, local), server.url("/split/"), dir.path() + "/") == a.out);
        }
    }
    const test::CliRun info = test::run_mlens({"info", server.url("/split/tiny-00002-of-00002.gguf")});
    CHECK(info.out.find("GGUF v3, 2 files") != std::string::npos);
    // A signed URL's query goes to the other shard too, and is never shown.
    const size_t before = server.log().size();
    const test::CliRun signed_info = test::run_mlens({"info", server.url("/split/tiny-00001-of-00002.gguf?sig=s3cr3t")});
    INFO(signed_info.err);
    CHECK(signed_info.out.find("GGUF v3, 2 files") != std::string::npos);
    CHECK(signed_info.out.find("s3cr3t") == std::string::npos);
    bool second_shard = false;
    const std::vector<test::LoggedRequest> log = server.log();
    for (size_t i = before; i < log.size(); ++i) {
        const std::string& target = log[i].target;
        CHECK(target.ends_with("?sig=s3cr3t"));
        second_shard = second_shard || target.starts_with("/split/tiny-00002-of-00002.gguf");
    }
    CHECK(second_shard);
    // Without its second shard, a tensor not found may be in what was not read: the error says so.
    std::filesystem::remove(dir.file("tiny-00002-of-00002.gguf"));
    const test::CliRun missing = test::run_mlens({"stats", dir.file("tiny-00001-of-00002.gguf"), "no.such.tensor"});
    CHECK(missing.exit_status == 1);
    CHECK(missing.err.find("no tensor named no.such.tensor (the model was read only in part: its errors say what is missing)") !=
          std::string::npos);
}

TEST_CASE("a remote safetensors index opens its shards beside it", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::TempDir dir;
    test::SafetensorsBuilder first, second;
    first.metadata("format", "pt").tensor("a", "BF16", "[4]", std::vector<uint8_t>(8, 1)).tensor("b", "F32", "[2]", std::vector<uint8_t>(8, 2));
    second.tensor("c", "F16", "[2, 2]", std::vector<uint8_t>(8, 3));
    const std::map<std::string, std::vector<uint8_t>> files = {
        {"model-00001-of-00002.safetensors", first.bytes()},
        {"model-00002-of-00002.safetensors", second.bytes()},
        {"model.safetensors.index.json",
         [] {
             const std::string index = "{\"metadata\":{\"total_size\":24},\"weight_map\":{\"a\":\"model-00001-of-00002.safetensors\","
                                       "\"b\":\"model-00001-of-00002.safetensors\",\"c\":\"model-00002-of-00002.safetensors\"}}";
             return std::vector<uint8_t>(index.begin(), index.end());
         }()}};
    test::LoopbackServer server;
    for (const auto& [name, bytes] : files) {
        test::write_whole_file(dir.file(name), bytes);
        server.serve("/st/" + name, std::string(bytes.begin(), bytes.end()));
    }
    const std::string url = server.url("/st/model.safetensors.index.json");
    for (const auto& command : std::vector<std::vector<std::string>>{{"info"}, {"kv", "--json"}, {"tensors"}, {"dump", "--json"}}) {
        const auto [a, b] = run_both(command, dir.path(), url);
        INFO(command[0] << "\n" << b.err);
        CHECK(b.exit_status == a.exit_status);
        // info shows the reference typed (the folder, the index's URL); the others show the files
        // read (the folder's files, the URLs beside the index).
        CHECK((command[0] == "info" ? replaced(b.out, url, dir.path()) : replaced(b.out, server.url("/st/"), dir.path() + "/")) == a.out);
    }
    // The config.json beside the index is read when the server has it, and a signed index URL's
    // query goes with every request, shown nowhere.
    const std::string config = "{\"model_type\":\"llama\"}";
    server.serve("/st/config.json", config);
    const size_t before = server.log().size();
    const test::CliRun info = test::run_mlens({"info", server.url("/st/model.safetensors.index.json?sig=s3cr3t")});
    INFO(info.err);
    CHECK(info.exit_status == 0);
    CHECK(info.out.find("llama (config.json model_type)") != std::string::npos);
    CHECK(info.out.find("4 files") != std::string::npos);
    CHECK((info.out + info.err).find("s3cr3t") == std::string::npos);
    const std::vector<test::LoggedRequest> log = server.log();
    for (size_t i = before; i < log.size(); ++i) CHECK(log[i].target.ends_with("?sig=s3cr3t"));
}

TEST_CASE("mlens cache lists the ranges remote reads stored next to the database, and --clear removes them", "[remote][cli][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", kDemo + "/tiny-llama-q4_0.gguf"));
    REQUIRE(test::run_mlens({"info", server.url("/q4.gguf")}).exit_status == 0);
    const std::string folder = cache.folder.path() + "/modellens";
    const test::CliRun listed = test::run_mlens({"cache"});
    CHECK(listed.exit_status == 0);
    const std::string ranges_row = "remote ranges               1 entry, 2.10 MB (2097152 bytes)\n";
    CHECK(listed.out.starts_with("cache folder                " + folder + "\n"));
    CHECK(listed.out.ends_with(ranges_row + "\nSTORED   RANGES  FILE SIZE  URL\n2.10 MB       2  3.09 MB    " + server.url("/q4.gguf") + "\n"));
    const test::CliRun cleared = test::run_mlens({"cache", "--clear"});
    CHECK(cleared.exit_status == 0);
    CHECK(cleared.out == "removed 0 database entries and 1 range entry of 2.10 MB (2097152 bytes) from " + folder + "\n");
    CHECK(test::run_mlens({"cache"}).out.ends_with("remote ranges               0 entries, 0 B (0 bytes)\n"));
}

TEST_CASE("mlens cache says when the range cache's folder is a file, as a reading command does", "[remote][cli][cache]") {
    test::PrivateHttpCache cache;
    const std::string folder = cache.folder.path() + "/modellens";
    std::filesystem::create_directories(folder);
    test::write_whole_file(folder + "/http", std::vector<uint8_t>(3, 'x'));
    const std::string warning = "the cache folder " + folder + "/http cannot be made (a file is in its place); remote ranges are not kept";
    const test::CliRun listed = test::run_mlens({"cache"});
    CHECK(listed.exit_status == 0);
    CHECK(listed.err == "warning: cache: " + warning + "\n");
    const nlohmann::json j = nlohmann::json::parse(test::run_mlens({"cache", "--clear", "--json"}).out);
    CHECK(j["warnings"] == nlohmann::json::array({warning}));
    CHECK(test::read_whole_file(folder + "/http") == std::vector<uint8_t>(3, 'x'));
}

TEST_CASE("the download limit refuses a command before it reads more than the limit", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/f32.gguf", kDemo + "/tiny-llama-f32.gguf"));
    const test::CliRun run = test::run_mlens({"stats", server.url("/f32.gguf"), "output.weight", "--max-download", "1M"});
    CHECK(run.exit_status == 1);
    CHECK(run.err == "error: " + server.url("/f32.gguf") +
                         ": this would download up to 8.19 MB (8192000 bytes) of tensor data, more than the 0 B (0 bytes) left of "
                         "--max-download 1.05 MB (1048576 bytes)\n");
    // The header was read, its read-ahead shrunk to the limit: 512 KiB and 512 KiB. No tensor
    // data was asked for.
    CHECK(server.body_bytes() == 1048576);
    const test::CliRun fsck = test::run_mlens({"--max-download", "4M", "fsck", server.url("/f32.gguf")});
    CHECK(fsck.exit_status == 1);
    CHECK(fsck.err.find(" left of --max-download 4.19 MB (4194304 bytes)") != std::string::npos);
    // A file shorter than the open's first request is charged what it sent: a 1 KiB limit opens it.
    test::TempDir dir;
    test::write_fixture_model(dir.file("small.gguf"), {{"w", GGML_TYPE_F32, {16}, test::test_signal(16, 1)}});
    REQUIRE(std::filesystem::file_size(dir.file("small.gguf")) < 1024);
    REQUIRE(server.serve_file("/small.gguf", dir.file("small.gguf")));
    const test::CliRun small = test::run_mlens({"--max-download", "1K", "stats", server.url("/small.gguf"), "w"});
    INFO(small.err);
    CHECK(small.exit_status == 0);
}

TEST_CASE("mlens --max-time ends a run whose server sends just above the stall rate", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server("127.0.0.1", test::Serving::slow);
    // The first request (the file: 357 KB) would take 87 s at 4 KiB a second.
    REQUIRE(server.serve_file("/m.gguf", kDemo + "/ollama-gemma3.gguf"));
    const auto start = std::chrono::steady_clock::now();
    const test::CliRun run = test::run_mlens({"--max-time", "1.5", "info", server.url("/m.gguf"), "--json"});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(run.exit_status == 1);
    CHECK(run.err == "error: E_NETWORK: " + server.url("/m.gguf") + ": the network time limit of 1.5 s ran out\n");
    CHECK(nlohmann::json::parse(run.out)["error"]["code"] == "E_NETWORK");
    CHECK(seconds >= 1.4);
    CHECK(seconds < 10);
    CHECK(server.log().size() == 1);
    CHECK(test::run_mlens({"--max-time", "-1", "info", server.url("/m.gguf")}).exit_status == 2);
}

TEST_CASE("mlens --max-time and --max-download values past what they can hold are usage errors - never an abort", "[remote][cli]") {
    const std::string model = kDemo + "/tiny-llama-q4_0.gguf";
    for (const std::vector<std::string>& options :
         std::vector<std::vector<std::string>>{{"--max-time", "nan"},
                                               {"--max-time", "inf"},
                                               {"--max-time", "1e309"},
                                               {"--max-time", "x"},
                                               {"--max-download", "99999999999999999999"},
                                               {"--max-download", "18446744073709551616"}}) {
        std::vector<std::string> args = options;
        args.insert(args.end(), {"info", "--json", model});
        const test::CliRun run = test::run_mlens(args);
        INFO(options[0] << " " << options[1] << ": " << run.err);
        CHECK(run.signal == 0);
        CHECK(run.exit_status == 2);
        CHECK(nlohmann::json::parse(run.out)["error"]["code"] == "E_USAGE");
    }
    // Tiny or huge but finite: a limit met at once, or none.
    for (const char* seconds : {"1e-320", "1e300", "0"}) {
        const test::CliRun run = test::run_mlens({"--max-time", seconds, "info", model});
        INFO(seconds << ": " << run.err);
        CHECK(run.exit_status == 0);
    }
    CHECK(test::run_mlens({"info", "--max-download", "18446744073709551615", model}).exit_status == 0);
}

TEST_CASE("mlens --max-time takes a decimal number and nothing more - a refused value names its option once", "[remote][cli]") {
    const std::string model = kDemo + "/tiny-llama-q4_0.gguf";
    for (const char* seconds : {" 5", "5 ", "0x10", "+5", "5s", ""}) {
        const test::CliRun run = test::run_mlens({"--max-time", seconds, "info", model});
        INFO("[" << seconds << "]: " << run.err);
        CHECK(run.exit_status == 2);
        CHECK(run.err.starts_with("--max-time: SECONDS is a number >= 0, got " + std::string(seconds) + "\n"));
    }
    for (const char* seconds : {"5", "2.5", ".5", "1e2"}) {
        INFO(seconds);
        CHECK(test::run_mlens({"--max-time", seconds, "info", model}).exit_status == 0);
    }
    const test::CliRun nan = test::run_mlens({"--max-time", "nan", "info", model, "--json"});
    CHECK(nlohmann::json::parse(nan.out)["error"]["message"] == "--max-time: SECONDS is a number >= 0, got nan");
    const test::CliRun hex = test::run_mlens({"--max-download", "0x10", "info", model});
    CHECK(hex.exit_status == 2);
    CHECK(hex.err.starts_with("--max-download: SIZE is at most 16 EiB (18446744073709551615 bytes), got 0x10\n"));
}

TEST_CASE("a token in a URL's query is never printed", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", kDemo + "/tiny-llama-q4_0.gguf"));
    const std::string signed_url = server.url("/q4.gguf?token=s3cr3t");
    for (const auto& args : std::vector<std::vector<std::string>>{{"info", signed_url},
                                                                   {"info", "--json", signed_url},
                                                                   {"fsck", signed_url},
                                                                   {"info", "--json", server.url("/none.gguf?token=s3cr3t")},
                                                                   {"dump", server.url("/none.gguf?token=s3cr3t")},
                                                                   {"loads", signed_url},
                                                                   {"loads", "--json", signed_url},
                                                                   {"compat", "--json", signed_url},
                                                                   {"recipe", signed_url},
                                                                   {"recipe", "--json", signed_url},
                                                                   {"requant", signed_url, "blk.0.attn_q.weight", "--json"},
                                                                   {"requant", signed_url, "no.such.tensor"},
                                                                   {"stats", signed_url, "blk.0.attn_q.weight", "--json"},
                                                                   {"compare", signed_url, signed_url, "--tensor", "blk.0.attn_q.weight"},
                                                                   {"tokenize", signed_url, "hello", "--json"},
                                                                   {"template", signed_url, "--json"}}) {
        const test::CliRun run = test::run_mlens(args);
        INFO(args[0] << " " << args[1] << "\n" << run.out << run.err);
        CHECK(run.out.find("s3cr3t") == std::string::npos);
        CHECK(run.err.find("s3cr3t") == std::string::npos);
        if (args[0] != "stats" && args[0] != "compare") CHECK((run.out + run.err).find(server.base_url()) != std::string::npos);  // shown without it
    }
}

TEST_CASE("mlens fsck --no-cache reads a remote model from its server alone - the ranges cached are neither read nor written", "[remote][cli][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q8.gguf", kDemo + "/tiny-llama-q8_0.gguf"));
    test::CliRun fresh = test::run_mlens({"fsck", "--no-cache", server.url("/q8.gguf")});
    CHECK(fresh.exit_status == 0);
    CHECK_FALSE(std::filesystem::exists(cache.folder.file("modellens/http")));
    // Cached, then served with other bytes under the same ETag (a server that reuses it): the
    // cached run answers from the ranges it stored, --no-cache from the server's bytes.
    REQUIRE(test::run_mlens({"fsck", server.url("/q8.gguf")}).exit_status == 0);
    const std::vector<uint8_t> file = test::read_whole_file(kDemo + "/tiny-llama-q8_0.gguf");
    std::string bytes(file.begin(), file.end());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto model = open_model(kDemo + "/tiny-llama-q8_0.gguf");
    REQUIRE(model);
    const TensorInfo* norm = model->find_tensor("output_norm.weight");
    REQUIRE(norm);
    std::memcpy(bytes.data() + norm->data_offset, &nan, sizeof nan);
    server.serve("/q8.gguf", bytes);
    server.set_validators("/q8.gguf", "\"v1\"", "", "");
    test::CliRun uncached = test::run_mlens({"fsck", "--no-cache", server.url("/q8.gguf")});
    CHECK(uncached.exit_status == 1);
    CHECK(uncached.out.find("F_NAN output_norm.weight") != std::string::npos);
}

TEST_CASE("compare names each tensor it could not read and exits 1 - never 'no tensor of the same name'", "[remote][cli]") {
    test::PrivateHttpCache cache;
    // The open's first answer holds the header; every later range comes back shifted (E_HTTP).
    test::LoopbackServer server("127.0.0.1", test::Serving::shifted_after_first);
    // A small tensor inside that first answer, a 2 MiB one past it.
    test::TempDir dir;
    const std::string local = dir.file("two.gguf");
    test::write_fixture_model(local, {{"blk.0.attn_norm.weight", GGML_TYPE_F32, {256}, test::test_signal(256, 3)},
                                      {"output.weight", GGML_TYPE_F32, {1024, 512}, test::test_signal(1024 * 512, 5)}});
    REQUIRE(server.serve_file("/tiny.gguf", local));
    const std::string url = server.url("/tiny.gguf");
    const test::CliRun one = test::run_mlens({"compare", local, url, "--tensor", "output.weight"});
    INFO(one.err);
    CHECK(one.exit_status == 1);
    // The file that failed is named first, then the tensor and the server's answer.
    CHECK(one.err.starts_with("error: " + url + ": output.weight: E_IO "));
    CHECK(one.err.find("E_HTTP") != std::string::npos);
    CHECK(one.err.find("no tensor of the same name") == std::string::npos);
    CHECK(one.out.empty());
    const test::CliRun all = test::run_mlens({"compare", local, url, "--json"});
    INFO(all.err);
    CHECK(all.exit_status == 1);
    CHECK(all.err.starts_with("error: " + url + ": output.weight: E_IO "));
    CHECK(all.err.find("no tensor of the same name") == std::string::npos);
    // The tensors held by the first answer were compared; the result says so.
    const nlohmann::json result = nlohmann::json::parse(all.out);
    REQUIRE(result.contains("tensors"));
    REQUIRE(result["tensors"].size() == 1);
    CHECK(result["tensors"][0]["tensor"] == "blk.0.attn_norm.weight");
    CHECK(result["tensors"][0]["rmse"] == 0.0);
}

TEST_CASE("commands that run llama.cpp refuse a remote model - it is never downloaded whole", "[remote][cli]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", kDemo + "/tiny-llama-q4_0.gguf"));
    for (const auto& args : std::vector<std::vector<std::string>>{{"tokenize", server.url("/q4.gguf"), "hello"}, {"memory", server.url("/q4.gguf")}}) {
        const test::CliRun run = test::run_mlens(args);
        INFO(args[0] << "\n" << run.err);
        CHECK(run.exit_status == 2);
        CHECK(run.err == "error: " + server.url("/q4.gguf") +
                             ": E_ARGS: llama.cpp runs on a local file; a remote model is read by ranges, never downloaded whole "
                             "(download it to run it)\n");
    }
}

TEST_CASE("a range cache folder that cannot be made is said once, and the command reads uncached", "[remote][cli]") {
    test::TempDir dir;
    std::filesystem::create_directories(dir.file("modellens"));
    test::write_whole_file(dir.file("modellens/http"), std::vector<uint8_t>{'x'});  // a file where the folder goes
    test::ScopedEnv xdg("XDG_CACHE_HOME", dir.path());
    test::LoopbackServer server;
    const std::string local = kDemo + "/tiny-llama-q4_0.gguf";
    REQUIRE(server.serve_file("/q4.gguf", local));
    const auto [a, b] = run_both({"tensors"}, local, server.url("/q4.gguf"));
    CHECK(b.exit_status == 0);
    CHECK(replaced(b.out, server.url("/q4.gguf"), local) == a.out);
    CHECK(b.err == "warning: cache: the cache folder " + dir.file("modellens/http") +
                       " cannot be made (Not a directory); remote ranges are not kept\n");
}

TEST_CASE("show of every demo store model gives the same summary, config, layers, texts and tensors from a registry", "[remote][cli][ollama]") {
    const test::RegistryFixture served("registry-token-4");
    const std::string& store = served.store;
    const std::vector<std::string>& models = served.models;
    REQUIRE(models.size() == 6);
    for (const std::string& model : models) {
        INFO(model);
        const nlohmann::json local = test::run_mlens_json({"show", store + "/" + model, "--tensors", "--json"});
        const nlohmann::json remote = test::run_mlens_json({"show", "ollama://" + model, "--tensors", "--json"});
        for (const char* field : {"name", "full_name", "manifest_digest", "manifest_bytes", "schemaVersion", "mediaType", "format", "size",
                                  "summary", "config", "ok", "verdict", "reason", "tensors", "groups", "diagnostics"})
            CHECK(remote[field] == local[field]);
        // Where the two differ: the manifest is a URL with no date, a blob is no file, and a
        // registry's model has nothing to export.
        const std::string repository = served.registry.base_url() + "/v2/" + model.substr(0, model.find(':'));
        CHECK(remote["manifest"] == repository + "/manifests/" + model.substr(model.find(':') + 1));
        CHECK(remote["modified"].is_null());
        CHECK(remote["export"] == nlohmann::json::array());
        REQUIRE(remote["layers"].size() == local["layers"].size());
        for (size_t i = 0; i < local["layers"].size(); ++i) {
            nlohmann::json layer = local["layers"][i];
            layer.erase("blob");
            CHECK(remote["layers"][i] == layer);
        }
    }
}

TEST_CASE("show of a registry's model whose layer size is wrong is rejected at that layer", "[remote][cli][ollama]") {
    test::RegistryFixture served;
    // The manifest of tiny-llama:q4_0 with its model layer one byte longer than its blob.
    std::string manifest = served.manifest_text("library/tiny-llama/q4_0");
    const std::string size = "\"size\":3085696";
    REQUIRE(manifest.find(size) != std::string::npos);
    manifest.replace(manifest.find(size), size.size(), "\"size\":3085697");
    served.registry.serve("/v2/library/tiny-llama/manifests/q4_0", manifest);
    const test::CliRun run = test::run_mlens({"show", "ollama://tiny-llama:q4_0"});
    CHECK(run.exit_status == 1);
    CHECK(run.out.find("status          rejected: E_SIZE_MISMATCH layers[0].size\n") != std::string::npos);
    CHECK(run.out.find("verdict: rejected: E_SIZE_MISMATCH layers[0].size\n") != std::string::npos);
    CHECK(run.err.find("E_SIZE_MISMATCH layers[0].size: the layer says 3085697 bytes; the registry's blob has 3085696") != std::string::npos);
}

TEST_CASE("show of a registry's model whose text layer or config says another size than its blob is rejected at that layer", "[remote][cli][ollama]") {
    test::RegistryFixture served;
    const std::string manifest = served.manifest_text("library/tiny-llama/q4_0");
    // The template layer (83 bytes), then the config (148 bytes), each said to be shorter than its blob.
    for (const auto& [size, wrong, field] : {std::tuple<std::string, std::string, std::string>{"\"size\":83}", "\"size\":5}", "layers[1]"},
                                             {"\"size\":148}", "\"size\":10}", "config.size"}}) {
        INFO(field);
        std::string changed = manifest;
        REQUIRE(changed.find(size) != std::string::npos);
        changed.replace(changed.find(size), size.size(), wrong);
        served.registry.serve("/v2/library/tiny-llama/manifests/q4_0", changed);
        const test::CliRun run = test::run_mlens({"show", "ollama://tiny-llama:q4_0"});
        CHECK(run.exit_status == 1);
        CHECK(run.out.find("status          rejected: E_SIZE_MISMATCH " + field + "\n") != std::string::npos);
        CHECK(run.err.find("E_SIZE_MISMATCH " + field + ": the layer says ") != std::string::npos);
    }
}

TEST_CASE("show of a registry's model whose weights the registry fails names the model layer and marks it failed", "[remote][cli][ollama]") {
    test::RegistryFixture served;
    const nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    std::string weights;
    for (const auto& layer : manifest["layers"])
        if (layer["mediaType"] == "application/vnd.ollama.image.model") weights = layer["digest"];
    REQUIRE(!weights.empty());
    served.registry.fail_paths_containing(weights.substr(7), 500);
    test::ScopedEnv no_retries("MLENS_HTTP_RETRIES", "0");
    const test::CliRun run = test::run_mlens({"show", "ollama://tiny-llama:q4_0"});
    INFO(run.err << run.out);
    CHECK(run.exit_status == 1);
    CHECK(run.err.find("error: store E_HTTP layers[0]: ") != std::string::npos);
    CHECK(run.out.find("status          rejected: E_HTTP layers[0]") != std::string::npos);
    CHECK(run.out.find("model · 1 layer · 3.09 MB · 1 failed") != std::string::npos);
    // The view's text layers are still shown.
    CHECK(run.out.find("system          You are a tiny demo model.") != std::string::npos);
}

TEST_CASE("show of a registry's model asks for its manifest once and for each config and text blob once", "[remote][cli][ollama]") {
    test::RegistryFixture served;
    test::LoopbackServer& registry = served.registry;
    const nlohmann::json manifest = nlohmann::json::parse(served.manifest_text("library/tiny-llama/q4_0"));
    std::vector<std::string> text_blobs = {manifest["config"]["digest"]};
    for (const auto& layer : manifest["layers"])
        if (layer["mediaType"] != "application/vnd.ollama.image.model") text_blobs.push_back(layer["digest"]);
    REQUIRE(text_blobs.size() == 5);
    for (const auto& args : std::vector<std::vector<std::string>>{{"show", "ollama://tiny-llama:q4_0"},
                                                                  {"show", "ollama://tiny-llama:q4_0", "--tensors", "--json"}}) {
        registry.clear_log();
        const test::CliRun run = test::run_mlens(args);
        INFO(args.size() << "\n" << run.err);
        CHECK(run.exit_status == 0);
        std::map<std::string, size_t> asked;
        for (const test::LoggedRequest& r : registry.log()) ++asked[r.target];
        CHECK(asked["/v2/library/tiny-llama/manifests/q4_0"] == 1);
        for (const std::string& digest : text_blobs) CHECK(asked["/v2/library/tiny-llama/blobs/" + digest] == 1);
    }
}
