#include "ollama_store_builder.h"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "gguf_builder.h"

namespace mlens::test {

namespace {

std::string hex_of(const unsigned char* md, unsigned int n) {
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) {
        hex += digits[md[i] >> 4];
        hex += digits[md[i] & 15];
    }
    return hex;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1) throw std::runtime_error("EVP_Digest");
    return hex_of(md, n);
}

std::string sha256_hex(const std::vector<uint8_t>& bytes) {
    return sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string LayerSpec::json() const {
    std::string s = "{\"mediaType\":\"" + media_type + "\",\"digest\":\"" + digest + "\",\"size\":" + std::to_string(size);
    if (from) s += ",\"from\":\"" + *from + "\"";
    if (name) s += ",\"name\":\"" + *name + "\"";
    return s + "}";
}

std::string manifest_json(const LayerSpec& config, const std::vector<LayerSpec>& layers) {
    std::string s =
        "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"config\":" + config.json() +
        ",\"layers\":[";
    for (size_t i = 0; i < layers.size(); ++i) s += (i ? "," : "") + layers[i].json();
    return s + "]}";
}

std::string config_json(std::string_view format, std::string_view family, std::string_view file_type, std::string_view model_type) {
    std::string f(family);
    return "{\"model_format\":\"" + std::string(format) + "\",\"model_family\":\"" + f + "\",\"model_families\":[\"" + f +
        "\"],\"model_type\":\"" + std::string(model_type) + "\",\"file_type\":\"" + std::string(file_type) +
        "\",\"architecture\":\"amd64\",\"os\":\"linux\"}";
}

void write_file(const std::string& path, std::string_view bytes) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

OllamaStoreBuilder::OllamaStoreBuilder(std::string root) : m_root(std::move(root)) {
    std::filesystem::create_directories(m_root + "/manifests");
    std::filesystem::create_directories(m_root + "/blobs");
}

LayerSpec OllamaStoreBuilder::blob(std::string_view media_type, std::string_view bytes, std::optional<std::string> name) {
    LayerSpec l{std::string(media_type), "sha256:" + sha256_hex(bytes), bytes.size(), std::nullopt, std::move(name)};
    write_file(blob_path(l), bytes);
    return l;
}

LayerSpec OllamaStoreBuilder::blob(std::string_view media_type, const std::vector<uint8_t>& bytes, std::optional<std::string> name) {
    return blob(media_type, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), std::move(name));
}

LayerSpec OllamaStoreBuilder::sparse_zero_blob(std::string_view media_type, uint64_t size) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
    std::vector<unsigned char> zeros(1 << 20, 0);
    for (uint64_t left = size; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
        EVP_DigestUpdate(ctx, zeros.data(), n);
        left -= n;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, md, &len);
    EVP_MD_CTX_free(ctx);
    LayerSpec l{std::string(media_type), "sha256:" + hex_of(md, len), size, std::nullopt, std::nullopt};
    write_file(blob_path(l), "");
    std::filesystem::resize_file(blob_path(l), size);
    return l;
}

std::string OllamaStoreBuilder::blob_path(const LayerSpec& layer) const { return m_root + "/blobs/sha256-" + layer.digest.substr(7); }

std::string OllamaStoreBuilder::write_manifest(const std::string& rel, std::string_view text) {
    std::string path = m_root + "/manifests/" + rel;
    write_file(path, text);
    return path;
}

std::string OllamaStoreBuilder::add_model(const std::string& model, const std::vector<LayerSpec>& layers, std::string_view config,
                                          const std::string& tag) {
    LayerSpec c = blob(kImageConfigMediaType, config);
    return write_manifest("registry.ollama.ai/library/" + model + "/" + tag, manifest_json(c, layers));
}

void OllamaStoreBuilder::add_tiny() {
    m_tiny_config = blob(kImageConfigMediaType, config_json("gguf", "llama", "F32"));
    m_tiny_model = blob(kModelMediaType, t1_bytes());
    write_manifest("registry.ollama.ai/library/tiny/latest", manifest_json(m_tiny_config, {m_tiny_model}));
}

}  // namespace mlens::test
