// Remote references: what an http(s)://, hf:// or ollama:// text names, and how a URL is shown.
//
// Contract:
//  - is_remote_reference(text) is true for text starting with "http://", "https://", "hf://" or
//    "ollama://" (the scheme in lower case, as people type it). resolve() (open/target.h) asks
//    only after a local file of the same text was not found: a file always wins.
//  - parse_http_url accepts http and https URLs: a host (a name, an IPv4 address or a bracketed
//    IPv6 address), an optional port (1..65535) and a target (path and query, "/" when absent).
//    A URL with userinfo ("user:pass@host") is refused (E_ARGS): credentials come from HF_TOKEN
//    or the Hugging Face token file, never from the URL text, so they never reach the output.
//    Whitespace, control characters and a fragment are refused too.
//  - display_url is what every path(), message, log and JSON shows of a URL: the URL without its
//    query string (where signed URLs and ?token= carry credentials) and without userinfo;
//    url_query is that query ("?..." up to a fragment, empty when there is none), which the files
//    beside the URL (shards, a safetensors index's files) are fetched with too.
//  - An origin is "scheme://host:port" with the default port filled in; credentials belong to one
//    origin and are sent to no other (http_client.h).
//  - hf://OWNER/REPO[@REVISION]/PATH is {endpoint}/OWNER/REPO/resolve/{REVISION or main}/PATH,
//    the endpoint from HF_ENDPOINT (default https://huggingface.co, a trailing '/' dropped); the
//    token from HF_TOKEN, else the first line of $HF_HOME/token (HF_HOME default
//    ~/.cache/huggingface), sent as "Authorization: Bearer TOKEN" to the endpoint's origin only.
//    The same token goes with a plain URL on the endpoint's origin (hub_credential_for).
//    OWNER, REPO and REVISION are one path segment each; PATH is at least one segment; no segment
//    is empty, "." or "..".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mlens/result.h"

namespace mlens {

struct HttpUrl {
    std::string scheme;  // "http" or "https"
    std::string host;  // as written, brackets kept for IPv6
    uint16_t port = 0;  // the default port of the scheme when none is written
    std::string target;  // path and query, starting with '/'

    std::string origin() const;  // "https://host:443"
    std::string text() const;  // the whole URL, port written only when not the default
};

bool is_remote_reference(std::string_view text);

Result<HttpUrl> parse_http_url(std::string_view text);

std::string display_url(std::string_view url);
std::string url_query(std::string_view url);

// A header value that goes with requests to one origin only.
struct Credential {
    std::string origin;
    std::string authorization;  // the header value, e.g. "Bearer hf_..."
};

struct HubReference {
    std::string url;  // the resolve URL
    std::optional<Credential> credential;
};

// The Hugging Face token's credential when `url` is on the endpoint's origin (hf:// references
// and https://huggingface.co/... URLs alike), else nullopt.
std::optional<Credential> hub_credential_for(const HttpUrl& url);

// hf://... resolved against the environment (HF_ENDPOINT, HF_TOKEN, HF_HOME, HOME). E_ARGS names
// what is wrong with the text.
Result<HubReference> resolve_hub_reference(std::string_view text);

}  // namespace mlens
