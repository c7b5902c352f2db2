#include "mlens/ollama/registry_model.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/manifest.h"
#include "mlens/ollama/store_model.h"
#include "mlens/remote/remote_source.h"
#include "mlens/remote/source_opener.h"
#include "mlens/text/escape.h"
#include "registry_blob_pool.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxTokenAnswerBytes = 64u << 10;
constexpr const char* kManifestType = "application/vnd.docker.distribution.manifest.v2+json";

std::string percent_encoded(std::string_view text) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

// The value of `name` in a challenge's parameters: Bearer realm="...",service="...",scope="...".
std::string challenge_parameter(const std::string& challenge, const std::string& name) {
    const std::string key = name + "=\"";
    const size_t at = challenge.find(key);
    if (at == std::string::npos) return {};
    const size_t start = at + key.size();
    const size_t end = challenge.find('"', start);
    return end == std::string::npos ? std::string() : challenge.substr(start, end - start);
}

Error registry_error(ErrorCode code, const RegistryReference& ref, const std::string& what) {
    return Error{code, "", std::nullopt, "ollama://" + ref.name.full() + ": " + what};
}

// The bearer token the challenge of a 401 names, asked from its realm.
Result<std::string> bearer_token(const RegistryReference& ref, const std::string& challenge, const HttpOptions& options, JobContext* job) {
    if (challenge.rfind("Bearer ", 0) != 0)
        return registry_error(ErrorCode::E_HTTP, ref, "the registry answered 401 without a Bearer challenge");
    const std::string realm = challenge_parameter(challenge, "realm");
    if (realm.empty()) return registry_error(ErrorCode::E_HTTP, ref, "the registry's Bearer challenge names no realm");
    std::string url = realm;
    char separator = realm.find('?') == std::string::npos ? '?' : '&';
    for (const char* name : {"service", "scope"}) {
        const std::string value = challenge_parameter(challenge, name);
        if (value.empty()) continue;
        url += separator + std::string(name) + "=" + percent_encoded(value);
        separator = '&';
    }
    HttpRequest request;
    request.url = url;
    request.max_body = kMaxTokenAnswerBytes;
    auto answer = http_get(request, options, job);
    if (!answer) return answer.error();
    const auto json = nlohmann::json::parse(answer->body.begin(), answer->body.end(), nullptr, false);
    for (const char* key : {"token", "access_token"})
        if (json.is_object() && json.contains(key) && json[key].is_string() && !json[key].get<std::string>().empty()) {
            // The token becomes a header line: a CR, LF or any byte but visible ASCII would let the
            // realm write headers of its own into every request to the registry.
            const std::string token = json[key].get<std::string>();
            if (!std::all_of(token.begin(), token.end(), [](unsigned char c) { return c > 0x20 && c < 0x7F; }))
                return registry_error(ErrorCode::E_HTTP, ref,
                                      "the token endpoint " + escape_for_display(display_url(realm)) +
                                          " gave a token with spaces, control characters or bytes outside ASCII");
            return token;
        }
    return registry_error(ErrorCode::E_HTTP, ref, "the token endpoint " + escape_for_display(display_url(realm)) + " gave no token");
}

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

Result<RegistryReference> parse_registry_reference(std::string_view text) {
    auto name = parse_model_reference(text);
    if (!name) return name.error();
    RegistryReference ref;
    ref.name = *name;
    std::string base = "https://" + name->host;
    if (name->host == kDefaultHost) {
        const std::string configured = environment("OLLAMA_REGISTRY");
        if (!configured.empty()) base = configured.find("://") == std::string::npos ? "https://" + configured : configured;
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    auto parsed = parse_http_url(base);
    if (!parsed) return parsed.error();
    ref.base = base;
    return ref;
}

Result<RegistryManifest> fetch_registry_manifest(const RegistryReference& ref, JobContext* job) {
    const HttpOptions options = http_options_from_environment();
    RegistryManifest out;
    out.repository = ref.base + "/v2/" + ref.name.name_space + "/" + ref.name.model;
    HttpRequest request;
    request.url = out.manifest_url(ref.name.tag);
    request.headers.emplace_back("Accept", kManifestType);
    request.max_body = kMaxManifestBytes;
    request.accept_status = {401};
    auto answer = http_get(request, options, job);
    if (!answer) return answer.error();
    if (answer->status == 401) {
        auto token = bearer_token(ref, answer->header("www-authenticate"), options, job);
        if (!token) return token.error();
        request.credential = Credential{parse_http_url(ref.base)->origin(), "Bearer " + *token};
        request.accept_status.clear();
        answer = http_get(request, options, job);
        if (!answer) return answer.error();
    }
    const std::string text(answer->body.begin(), answer->body.end());
    out.manifest = parse_manifest(text);
    for (const Diagnostic& d : out.manifest.diagnostics)
        if (d.severity == Severity::error) return Error{d.code, d.field, d.offset, "ollama://" + ref.name.display() + ": " + d.message};
    out.digest = "sha256:" + sha256_hex_digest(text);
    out.manifest_bytes = text.size();
    out.blob_options = remote_options_for(*parse_http_url(ref.base));
    out.blob_options.credential = request.credential;
    return out;
}

Result<Model> open_registry_model(const RegistryReference& ref, JobContext* job) {
    auto registry = fetch_registry_manifest(ref, job);
    if (!registry) return registry.error();
    return open_registry_model(ref, *registry, job);
}

Result<Model> open_registry_model(const RegistryReference& ref, const RegistryManifest& registry, JobContext* job) {
    // After a blob the registry could not deliver (the network, a server error), the others are
    // not asked for: each would cost its own stall time and retries.
    TransferBatch blobs("blob");
    const std::shared_ptr<RegistryBlobPool> pool = make_registry_blob_pool(kOpenRegistryBlobs);
    auto open_blob = [&](Model& model, const ManifestLayer& layer) -> std::optional<ByteSourcePtr> {
        if (const std::optional<Error> skipped = blobs.skipped()) {
            fail_layer(model, layer, *skipped);
            return std::nullopt;
        }
        const std::string url = registry.blob_url(*layer.blob);
        auto source = open_remote(url, registry.blob_options, job);
        if (!source) {
            blobs.note(source.error());
            fail_layer(model, layer, source.error());
            return std::nullopt;
        }
        if (layer.has_size && (*source)->size() != layer.size)
            model.diagnostics.push_back({Severity::error, "store", ErrorCode::E_SIZE_MISMATCH, layer.field + ".size", std::nullopt,
                                         "the layer says " + std::to_string(layer.size) + " bytes; the registry's blob has " +
                                             std::to_string((*source)->size())});
        return pooled_blob(pool, url, registry.blob_options, std::move(*source));
    };
    std::vector<const ManifestLayer*> read;
    return open_manifest_model("ollama://" + ref.name.display(), registry.manifest, open_blob, read, job);
}

}  // namespace mlens
