// Opening remote GGUFs: ModelLens (open_model on the URL, no cache) against @huggingface/gguf
// (node 20, tests/bench/hf_gguf_open.mjs), both against the same loopback server: requests, bytes
// transferred and wall time per file. A program that prints, not a test.
// usage: remote_open_bench HF_GGUF_PREFIX SCRIPT DEMO_DIR
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "large_gguf.h"
#include "loopback_server.h"
#include "mlens/open/target.h"

namespace {

struct Cost {
    size_t requests = 0;
    uint64_t bytes = 0;
    double ms = 0;
    bool ok = false;
};

Cost cost_of(mlens::test::LoopbackServer& server, double ms, bool ok) {
    return {server.log().size(), server.body_bytes(), ms, ok};
}

Cost modellens_open(mlens::test::LoopbackServer& server, const std::string& url) {
    mlens::test::PrivateHttpCache cache;
    server.clear_log();
    const auto start = std::chrono::steady_clock::now();
    auto model = mlens::open_model(url);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return cost_of(server, ms, model.ok() && model->error_count() == 0);
}

Cost hf_gguf_open(mlens::test::LoopbackServer& server, const std::string& prefix, const std::string& script, const std::string& url) {
    server.clear_log();
    const std::string command = "node '" + script + "' '" + prefix + "' '" + url + "'";
    FILE* out = ::popen(command.c_str(), "r");
    double ms = 0;
    const bool read = out && std::fscanf(out, "%lf", &ms) == 1;
    const bool ok = out && ::pclose(out) == 0 && read;
    return cost_of(server, ms, ok);
}

std::string row(const Cost& c) {
    char buf[96];
    if (!c.ok) return "failed";
    std::snprintf(buf, sizeof buf, "%3zu req %9.2f MiB %8.1f ms", c.requests, static_cast<double>(c.bytes) / (1 << 20), c.ms);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: remote_open_bench HF_GGUF_PREFIX SCRIPT DEMO_DIR\n");
        return 2;
    }
    const std::string prefix = argv[1], script = argv[2], demo = argv[3];
    mlens::test::LoopbackServer server;
    mlens::test::LargeGguf vocab;
    vocab.tokens = 262144;
    vocab.token_types = true;
    vocab.tensors = 10;
    const std::vector<uint8_t> bytes = mlens::test::large_gguf_bytes(vocab);
    server.serve("/vocab-262k.gguf", std::string(bytes.begin(), bytes.end()));
    std::vector<std::string> names = {"/vocab-262k.gguf"};
    for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf", "ollama-gemma3.gguf", "ollama-qwen25vl.gguf"})
        if (server.serve_file(std::string("/") + name, demo + "/" + name)) names.push_back(std::string("/") + name);
    std::printf("%-24s  %-36s  %-36s\n", "file (header open)", "ModelLens", "@huggingface/gguf");
    for (const std::string& name : names) {
        const Cost ours = modellens_open(server, server.url(name));
        const Cost theirs = hf_gguf_open(server, prefix, script, server.url(name));
        std::printf("%-24s  %-36s  %-36s\n", name.substr(1).c_str(), row(ours).c_str(), row(theirs).c_str());
    }
    return 0;
}
