#include "mlens/remote/remote_url.h"

#include <cstdlib>
#include <fstream>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

Error bad_url(std::string_view text, const std::string& why) {
    return Error{ErrorCode::E_ARGS, "url", std::nullopt, escape_for_display(display_url(text)) + ": " + why};
}

bool starts_with_scheme(std::string_view text, std::string_view scheme) { return text.substr(0, scheme.size()) == scheme; }

uint16_t default_port(const std::string& scheme) { return scheme == "https" ? 443 : 80; }

std::optional<uint16_t> parse_port(std::string_view digits) {
    if (digits.empty() || digits.size() > 5) return std::nullopt;
    uint32_t v = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    if (v == 0 || v > 65535) return std::nullopt;
    return static_cast<uint16_t>(v);
}

bool valid_segment(std::string_view s) { return !s.empty() && s != "." && s != ".."; }

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// The token of HF_TOKEN or of the Hugging Face token file; empty when there is none.
std::string hub_token() {
    if (std::string token = environment("HF_TOKEN"); !token.empty()) return token;
    std::string home = environment("HF_HOME");
    if (home.empty()) {
        std::string user_home = environment("HOME");
        if (user_home.empty()) return {};
        home = user_home + "/.cache/huggingface";
    }
    std::ifstream file(home + "/token");
    std::string token;
    std::getline(file, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
    return token;
}

std::string hub_endpoint() {
    std::string endpoint = environment("HF_ENDPOINT");
    if (endpoint.empty()) endpoint = "https://huggingface.co";
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    return endpoint;
}

}  // namespace

std::optional<Credential> hub_credential_for(const HttpUrl& url) {
    auto endpoint = parse_http_url(hub_endpoint());
    if (!endpoint || endpoint->origin() != url.origin()) return std::nullopt;
    std::string token = hub_token();
    if (token.empty()) return std::nullopt;
    return Credential{url.origin(), "Bearer " + token};
}

std::string HttpUrl::origin() const { return scheme + "://" + host + ":" + std::to_string(port); }

std::string HttpUrl::text() const {
    std::string out = scheme + "://" + host;
    if (port != default_port(scheme)) out += ":" + std::to_string(port);
    return out + target;
}

bool is_remote_reference(std::string_view text) {
    return starts_with_scheme(text, "http://") || starts_with_scheme(text, "https://") || starts_with_scheme(text, "hf://") ||
           starts_with_scheme(text, "ollama://");
}

Result<HttpUrl> parse_http_url(std::string_view text) {
    HttpUrl url;
    std::string_view rest;
    if (starts_with_scheme(text, "https://")) {
        url.scheme = "https";
        rest = text.substr(8);
    } else if (starts_with_scheme(text, "http://")) {
        url.scheme = "http";
        rest = text.substr(7);
    } else {
        return bad_url(text, "not an http:// or https:// URL");
    }
    for (unsigned char c : text)
        if (c <= ' ' || c == 0x7f) return bad_url(text, "a URL has no spaces or control characters");
    if (text.find('#') != std::string_view::npos) return bad_url(text, "a URL to a file has no fragment (#...)");
    const size_t authority_end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, authority_end);
    if (authority.find('@') != std::string_view::npos)
        return bad_url(text, "credentials in the URL are not accepted (HF_TOKEN or the Hugging Face token file carry a token)");
    std::string_view port_text;
    if (!authority.empty() && authority[0] == '[') {
        const size_t close = authority.find(']');
        if (close == std::string_view::npos) return bad_url(text, "an IPv6 host without its closing ']'");
        url.host = std::string(authority.substr(0, close + 1));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') return bad_url(text, "unexpected text after the IPv6 host");
            port_text = after.substr(1);
            if (port_text.empty()) return bad_url(text, "an empty port");
        }
    } else {
        const size_t colon = authority.find(':');
        url.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) return bad_url(text, "an empty port");
        }
    }
    if (url.host.empty() || url.host == "[]") return bad_url(text, "no host");
    url.port = default_port(url.scheme);
    if (!port_text.empty()) {
        auto port = parse_port(port_text);
        if (!port) return bad_url(text, "the port is not a number from 1 to 65535");
        url.port = *port;
    }
    url.target = authority_end == std::string_view::npos ? "/" : std::string(rest.substr(authority_end));
    if (url.target[0] == '?') url.target.insert(0, "/");
    return url;
}

std::string url_query(std::string_view url) {
    const size_t query = url.find('?');
    if (query == std::string_view::npos) return {};
    return std::string(url.substr(query, url.find('#', query) - query));
}

std::string display_url(std::string_view url) {
    std::string_view shown = url.substr(0, url.find_first_of("?#"));
    const size_t scheme_end = shown.find("://");
    if (scheme_end == std::string_view::npos) return std::string(shown);
    const size_t authority_start = scheme_end + 3;
    const size_t authority_end = std::min(shown.find('/', authority_start), shown.size());
    const size_t at = shown.rfind('@', authority_end);
    if (at == std::string_view::npos || at < authority_start) return std::string(shown);
    return std::string(shown.substr(0, authority_start)) + std::string(shown.substr(at + 1));
}

Result<HubReference> resolve_hub_reference(std::string_view text) {
    if (!starts_with_scheme(text, "hf://")) return bad_url(text, "not an hf:// reference");
    std::string_view rest = text.substr(5);
    auto next_segment = [&rest]() {
        const size_t slash = rest.find('/');
        std::string_view segment = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        return segment;
    };
    const std::string_view owner = next_segment();
    std::string_view repo = next_segment();
    std::string_view revision = "main";
    if (const size_t at = repo.find('@'); at != std::string_view::npos) {
        revision = repo.substr(at + 1);
        repo = repo.substr(0, at);
    }
    const std::string_view path = rest;
    const char* form = "an hf:// reference is hf://OWNER/REPO[@REVISION]/PATH";
    if (!valid_segment(owner) || !valid_segment(repo) || !valid_segment(revision) || path.empty()) return bad_url(text, form);
    for (std::string_view p = path; !p.empty();) {
        const size_t slash = p.find('/');
        if (!valid_segment(p.substr(0, slash))) return bad_url(text, form);
        p = slash == std::string_view::npos ? std::string_view() : p.substr(slash + 1);
        if (slash != std::string_view::npos && p.empty()) return bad_url(text, form);
    }
    HubReference hub;
    hub.url = hub_endpoint() + "/" + std::string(owner) + "/" + std::string(repo) + "/resolve/" + std::string(revision) + "/" + std::string(path);
    auto parsed = parse_http_url(hub.url);
    if (!parsed) return parsed.error();
    hub.credential = hub_credential_for(*parsed);
    return hub;
}

}  // namespace mlens
