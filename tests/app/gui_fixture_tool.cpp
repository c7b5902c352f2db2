// gui_fixture_tool: helpers for the window tests.
//   gui_fixture_tool write OUT.gguf                    writes the GUI fixture
//   gui_fixture_tool write-safetensors-folder DIR      writes a small safetensors folder: a
//       Llama-shaped model.safetensors (F32 and F16 tensors, __metadata__) and its config.json
//   gui_fixture_tool write-broken-store DIR OUTSIDE    writes the damaged Ollama store of
//       tests/support/broken_store.h into the empty folder DIR (OUTSIDE: a folder outside it)
//   gui_fixture_tool write-outliers OUT.gguf            writes blk.0.ffn_down.weight, F32 4096×16 values
//       from N(0, 1) (seeded) whose columns 7 and 2900 are scaled by 80: outlier channels
//   gui_fixture_tool write-corpus-text OUT.txt WORDS    writes corpus_text(WORDS) (tests/support/corpus_text.h)
//   gui_fixture_tool write-cut IN OUT BYTES              writes the first BYTES bytes of IN to OUT (a file cut short)
//   gui_fixture_tool write-parity VOCAB.gguf DIR          writes DIR/tokenizer.json from the byte-level
//       vocabulary VOCAB with the planted differences of tokenizer_json_fixture.h and digits split one by
//       one, and DIR/text.txt, a line of mixed text where the two tokenizers part
//   gui_fixture_tool check-png FILE W H                checks FILE is a W×H PNG that is not one flat colour
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <ggml.h>
#include <stb_image.h>

#include "broken_store.h"
#include "corpus_text.h"
#include "gui_fixture.h"
#include "mlens/formats/gguf_reader.h"
#include "model_fixture.h"
#include "tokenizer_json_fixture.h"

namespace {

int check_png(const char* path, int want_w, int want_h) {
    int w = 0, h = 0, channels = 0;
    unsigned char* pixels = stbi_load(path, &w, &h, &channels, 3);
    if (!pixels) {
        std::fprintf(stderr, "check-png: cannot read %s as an image\n", path);
        return 1;
    }
    std::set<uint32_t> colours;
    size_t n = static_cast<size_t>(w) * static_cast<size_t>(h);
    for (size_t i = 0; i < n && colours.size() < 1000; ++i)
        colours.insert(static_cast<uint32_t>(pixels[i * 3]) << 16 | static_cast<uint32_t>(pixels[i * 3 + 1]) << 8 | pixels[i * 3 + 2]);
    stbi_image_free(pixels);
    if (w != want_w || h != want_h) {
        std::fprintf(stderr, "check-png: %s is %dx%d, expected %dx%d\n", path, w, h, want_w, want_h);
        return 1;
    }
    // Rendered text is anti-aliased, so a real frame has many distinct colours.
    if (colours.size() < 32) {
        std::fprintf(stderr, "check-png: %s has only %zu distinct colours: nothing was drawn\n", path, colours.size());
        return 1;
    }
    std::printf("check-png: %s %dx%d, %zu+ colours\n", path, w, h, colours.size());
    return 0;
}

bool write_file(const std::filesystem::path& path, const void* data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}

// `count` little-endian values running over [-1, 1), as F32 or (when `half`) F16.
std::vector<uint8_t> ramp(size_t count, bool half) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < count; ++i) {
        float v = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(count);
        uint32_t bits = 0;
        if (half) {
            bits = ggml_fp32_to_fp16(v);
        } else {
            std::memcpy(&bits, &v, 4);
        }
        for (int b = 0; b < (half ? 2 : 4); ++b) bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
    return bytes;
}

bool write_safetensors_folder(const std::filesystem::path& dir) {
    struct Entry {
        const char* name;
        const char* dtype;
        const char* shape;
        size_t count;
    };
    const Entry entries[] = {{"model.embed_tokens.weight", "F32", "[32,16]", 32 * 16},
                             {"model.layers.0.self_attn.q_proj.weight", "F16", "[16,16]", 16 * 16},
                             {"model.layers.0.mlp.up_proj.weight", "F16", "[48,16]", 48 * 16},
                             {"model.norm.weight", "F32", "[16]", 16}};
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
    std::vector<uint8_t> data;
    for (const Entry& e : entries) {
        std::vector<uint8_t> values = ramp(e.count, std::strcmp(e.dtype, "F16") == 0);
        std::string offsets = std::to_string(data.size()) + "," + std::to_string(data.size() + values.size());
        header +=
            ",\"" + std::string(e.name) + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":" + e.shape + ",\"data_offsets\":[" + offsets + "]}";
        data.insert(data.end(), values.begin(), values.end());
    }
    header += "}";
    // Padded with spaces so the data starts 8-byte aligned, as the reference writer does.
    while (header.size() % 8 != 0) header += ' ';
    std::vector<uint8_t> file;
    for (int b = 0; b < 8; ++b) file.push_back(static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * b)));
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), data.begin(), data.end());
    const std::string config =
        "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": 16,\n  \"intermediate_size\": 48,\n"
        "  \"num_hidden_layers\": 1,\n  \"vocab_size\": 32,\n  \"torch_dtype\": \"float16\"\n}\n";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return !ec && write_file(dir / "model.safetensors", file.data(), file.size()) &&
        write_file(dir / "config.json", config.data(), config.size());
}

bool write_outliers(const std::string& path) {
    const std::vector<float> values = mlens::test::outlier_weights();
    return !mlens::test::write_fixture_model(path, {{"blk.0.ffn_down.weight", GGML_TYPE_F32, {4096, 16}, values}}).empty();
}

bool write_parity(const std::string& vocab, const std::filesystem::path& dir) {
    auto model = mlens::open_gguf(vocab);
    if (!model) return false;
    std::string regex = mlens::test::kLlama3PreTokenizerRegex;
    regex.replace(regex.find("\\p{N}{1,3}"), 10, "\\p{N}");
    nlohmann::json j = mlens::test::byte_level_tokenizer_json(*model, regex);
    mlens::test::plant_differences(j);
    mlens::test::write_json_file((dir / "tokenizer.json").string(), j);
    const std::string text = "I've been told he's there. In 2024, 人工智能 grew 12345 times \xF0\x9F\x9A\x80\n";
    return write_file(dir / "text.txt", text.data(), text.size());
}

// The exit status of a write command: 0, or 1 after naming on stderr what could not be written.
int write_status(bool written, const std::string& what) {
    if (written) return 0;
    std::fprintf(stderr, "gui_fixture_tool: cannot write %s\n", what.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "write") == 0) return write_status(mlens::test::write_gui_fixture(argv[2]), argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "write-safetensors-folder") == 0)
        return write_status(write_safetensors_folder(argv[2]), std::string("the safetensors folder ") + argv[2]);
    if (argc == 4 && std::strcmp(argv[1], "write-broken-store") == 0) {
        mlens::test::OllamaStoreBuilder builder(argv[2]);
        mlens::test::write_broken_store(builder, argv[3]);
        return 0;
    }
    if (argc == 3 && std::strcmp(argv[1], "write-outliers") == 0) return write_status(write_outliers(argv[2]), argv[2]);
    if (argc == 4 && std::strcmp(argv[1], "write-corpus-text") == 0) {
        const std::string text = mlens::test::corpus_text(static_cast<size_t>(std::atoll(argv[3])));
        std::ofstream out(argv[2], std::ios::binary);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        return write_status(static_cast<bool>(out.flush()), argv[2]);
    }
    if (argc == 5 && std::strcmp(argv[1], "write-cut") == 0) {
        std::ifstream in(argv[2], std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bytes.resize(std::min<size_t>(bytes.size(), static_cast<size_t>(std::atoll(argv[4]))));
        std::ofstream out(argv[3], std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return write_status(static_cast<bool>(out.flush()), argv[3]);
    }
    if (argc == 4 && std::strcmp(argv[1], "write-parity") == 0) return write_status(write_parity(argv[2], argv[3]), argv[3]);
    if (argc == 5 && std::strcmp(argv[1], "check-png") == 0) return check_png(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    std::fprintf(stderr,
                 "usage: gui_fixture_tool write OUT.gguf | write-outliers OUT.gguf | write-corpus-text OUT.txt WORDS | "
                 "write-safetensors-folder DIR | "
                 "write-broken-store DIR OUTSIDE | write-cut IN OUT BYTES | write-parity VOCAB.gguf DIR | check-png FILE W H\n");
    return 2;
}
