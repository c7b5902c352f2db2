#include "broken_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "gguf_builder.h"

namespace mlens::test {

namespace {

constexpr size_t kDamagedStTensors = 9;

std::string text_of(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// A safetensors blob of one float tensor [2] whose values make every blob distinct. Written here
// rather than with SafetensorsBuilder so that tools without a test runner can link this file.
std::string one_tensor_blob(const std::string& name, size_t index) {
    std::string header = "{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    header.resize((header.size() + 7) / 8 * 8, ' ');
    std::string out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
    out += header;
    float values[2] = {static_cast<float>(index) + 0.5f, -static_cast<float>(index)};
    out.append(reinterpret_cast<const char*>(values), sizeof values);
    return out;
}

// Replaces the blob of `layer` with what `replace` makes at its path.
template <typename F>
void replace_blob(const OllamaStoreBuilder& b, const LayerSpec& layer, F replace) {
    const std::string path = b.blob_path(layer);
    std::filesystem::remove(path);
    replace(path);
}

}  // namespace

std::vector<std::string> damaged_st_tensor_names() {
    std::vector<std::string> names;
    for (size_t i = 0; i < kDamagedStTensors; ++i) names.push_back("model.layers." + std::to_string(i) + ".mlp.up_proj.weight");
    return names;
}

bool damaged_st_tensor_broken(size_t index) { return index % 2 == 1; }  // layers 1, 3, 5, 7

std::vector<BrokenModel> write_broken_store(OllamaStoreBuilder& b, const std::string& outside_dir) {
    b.add_tiny();
    std::vector<BrokenModel> out;

    std::vector<LayerSpec> tensors;
    const std::vector<std::string> names = damaged_st_tensor_names();
    for (size_t i = 0; i < names.size(); ++i) {
        std::string bytes =
            damaged_st_tensor_broken(i) ? "not a safetensors blob, tensor " + std::to_string(i) : one_tensor_blob(names[i], i);
        tensors.push_back(b.blob(kTensorMediaType, bytes, names[i]));
    }
    b.add_model("damaged-st", tensors, config_json("safetensors", "qwen3", "F32", "18"));
    out.push_back({"damaged-st:latest", "HeaderTooLarge", "HeaderTooLarge"});

    const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string("\0\0\0\rIHDR\0\0\0\1\0\0\0\1\x08\x06\0\0\0", 21);
    b.add_model("png", {b.blob(kModelMediaType, png)}, config_json("gguf", "llama", "Q4_0"));
    out.push_back({"png:latest", "E_BAD_MAGIC", "E_BAD_MAGIC"});

    std::vector<uint8_t> t1 = t1_bytes();
    b.add_model("truncated", {b.blob(kModelMediaType, text_of(std::vector<uint8_t>(t1.begin(), t1.begin() + 100)))},
                config_json("gguf", "llama", "F32"));
    out.push_back({"truncated:latest", "E_TRUNCATED", "E_TRUNCATED"});

    // Stored with its last data byte changed (a digest of its own), then changed once more on disk.
    std::vector<uint8_t> stored = t1;
    stored.back() ^= 0x01;
    LayerSpec mismatch = b.blob(kModelMediaType, stored);
    stored.back() ^= 0x02;
    write_file(b.blob_path(mismatch), text_of(stored));
    b.add_model("mismatch", {mismatch}, config_json("gguf", "llama", "F32"));
    out.push_back({"mismatch:latest", "", "E_DIGEST_MISMATCH"});

    const std::string absent = "a model blob that was never stored";
    b.add_model("missing", {LayerSpec(std::string(kModelMediaType), "sha256:" + sha256_hex(absent), absent.size())},
                config_json("gguf", "llama", "F32"));
    out.push_back({"missing:latest", "E_BLOB_MISSING", "E_BLOB_MISSING"});

    LayerSpec fifo = b.blob(kModelMediaType, std::string("a FIFO stands here"));
    replace_blob(b, fifo, [](const std::string& path) {
        if (::mkfifo(path.c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed");
    });
    b.add_model("fifo", {fifo}, config_json("gguf", "llama", "F32"));
    out.push_back({"fifo:latest", "E_NOT_REGULAR_FILE", "E_NOT_REGULAR_FILE"});

    LayerSpec directory = b.blob(kModelMediaType, std::string("a directory stands here"));
    replace_blob(b, directory, [](const std::string& path) { std::filesystem::create_directory(path); });
    b.add_model("directory", {directory}, config_json("gguf", "llama", "F32"));
    out.push_back({"directory:latest", "E_NOT_REGULAR_FILE", "E_NOT_REGULAR_FILE"});

    LayerSpec outside = b.blob(kModelMediaType, text_of(t1) + "outside");
    replace_blob(b, outside, [&](const std::string& path) {
        const std::string target = outside_dir + "/outside.gguf";
        write_file(target, text_of(t1) + "outside");
        std::filesystem::create_symlink(target, path);
    });
    b.add_model("outside", {outside}, config_json("gguf", "llama", "F32"));
    out.push_back({"outside:latest", "E_OUTSIDE_ROOT", "E_OUTSIDE_ROOT"});
    return out;
}

}  // namespace mlens::test
