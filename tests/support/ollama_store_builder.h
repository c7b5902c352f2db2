// OllamaStoreBuilder: writes an Ollama model store into a directory — blobs named by their sha256
// (computed here with OpenSSL, independently of the code under test), manifests with any text,
// and O1's valid `tiny` model (malformed-inputs.md B0) — for the store cases O01–O22. Like the
// other fixture writers it never validates: hostile manifests and blobs are written as asked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlens::test {

constexpr std::string_view kModelMediaType = "application/vnd.ollama.image.model";
constexpr std::string_view kTensorMediaType = "application/vnd.ollama.image.tensor";
constexpr std::string_view kJsonMediaType = "application/vnd.ollama.image.json";
constexpr std::string_view kTemplateMediaType = "application/vnd.ollama.image.template";
constexpr std::string_view kSystemMediaType = "application/vnd.ollama.image.system";
constexpr std::string_view kParamsMediaType = "application/vnd.ollama.image.params";
constexpr std::string_view kMessagesMediaType = "application/vnd.ollama.image.messages";
constexpr std::string_view kLicenseMediaType = "application/vnd.ollama.image.license";
constexpr std::string_view kImageConfigMediaType = "application/vnd.docker.container.image.v1+json";

// Lowercase hex sha256 of bytes.
std::string sha256_hex(std::string_view bytes);
std::string sha256_hex(const std::vector<uint8_t>& bytes);

// One entry of a manifest's layers (or its config).
struct LayerSpec {
    LayerSpec() = default;
    LayerSpec(std::string media_type_, std::string digest_, uint64_t size_, std::optional<std::string> from_ = std::nullopt,
              std::optional<std::string> name_ = std::nullopt)
        : media_type(std::move(media_type_)), digest(std::move(digest_)), size(size_), from(std::move(from_)), name(std::move(name_)) {}

    std::string media_type;
    std::string digest;  // written as given: "sha256:<hex>" for real blobs
    uint64_t size = 0;
    std::optional<std::string> from;
    std::optional<std::string> name;
    std::string json() const;  // the layer object's JSON text
};

// {"schemaVersion":2,"mediaType":...,"config":<config>,"layers":[...]} in O1's field order.
std::string manifest_json(const LayerSpec& config, const std::vector<LayerSpec>& layers);

// A config blob's JSON: model_format, model_family, model_families, model_type, file_type,
// architecture, os (as Ollama's GGUF create writes them).
std::string config_json(std::string_view format, std::string_view family, std::string_view file_type,
                        std::string_view model_type = "1.02K");

class OllamaStoreBuilder {
public:
    // Creates root/manifests and root/blobs (root must exist).
    explicit OllamaStoreBuilder(std::string root);
    const std::string& root() const { return m_root; }

    // Writes blobs/sha256-<hex> of `bytes` and returns the layer for it.
    LayerSpec blob(std::string_view media_type, std::string_view bytes, std::optional<std::string> name = std::nullopt);
    LayerSpec blob(std::string_view media_type, const std::vector<uint8_t>& bytes, std::optional<std::string> name = std::nullopt);
    std::string blob_path(const LayerSpec& layer) const;  // root/blobs/sha256-<hex> of a real digest
    // A blob of `size` zero bytes written sparse (its digest computed by streaming zeros).
    LayerSpec sparse_zero_blob(std::string_view media_type, uint64_t size);

    // Writes `text` at root/manifests/<rel> (directories created), e.g. "registry.ollama.ai/library/evil/latest".
    std::string write_manifest(const std::string& rel, std::string_view text);
    // registry.ollama.ai/library/<model>/<tag> with a config blob of `config` and these layers.
    std::string add_model(const std::string& model, const std::vector<LayerSpec>& layers, std::string_view config,
                          const std::string& tag = "latest");

    // O1: library/tiny:latest, config_json("gguf", "llama", "F32") + T1 as the model blob.
    void add_tiny();
    LayerSpec tiny_model_layer() const { return m_tiny_model; }
    LayerSpec tiny_config_layer() const { return m_tiny_config; }

private:
    std::string m_root;
    LayerSpec m_tiny_model, m_tiny_config;
};

// Writes bytes to a file, creating parent directories.
void write_file(const std::string& path, std::string_view bytes);

}  // namespace mlens::test
