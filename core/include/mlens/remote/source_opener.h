// open_source: a ByteSource for a local path or an http(s):// URL, for the readers that open a
// file named by another (the shards of a split GGUF, the files of a safetensors index), so a
// model named by a URL finds its other files at the URLs next to it.
//
// Contract: text starting with "http://" or "https://" opens with open_remote (remote_source.h)
// and remote_options_for its URL; anything else is open_file's.
// remote_options_for(url): the options every remote open of ModelLens uses: HTTP options from the
// environment (http_options_from_environment), the Hugging Face token when the URL is on the Hub
// endpoint's origin (hub_credential_for), and the cache in default_cache_folder() unless
// range_cache_enabled() is false.
#pragma once

#include <string>

#include "mlens/io/byte_source.h"
#include "mlens/remote/remote_source.h"

namespace mlens {

bool is_http_url(const std::string& text);

RemoteOptions remote_options_for(const HttpUrl& url);

Result<ByteSourcePtr> open_source(const std::string& path_or_url);

}  // namespace mlens
