#include "mlens/remote/source_opener.h"

namespace mlens {

bool is_http_url(const std::string& text) { return text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0; }

RemoteOptions remote_options_for(const HttpUrl& url) {
    RemoteOptions options;
    options.credential = hub_credential_for(url);
    if (range_cache_enabled()) options.cache = RangeCache::open();
    return options;
}

Result<ByteSourcePtr> open_source(const std::string& path_or_url) {
    if (!is_http_url(path_or_url)) return open_file(path_or_url);
    auto url = parse_http_url(path_or_url);
    if (!url) return url.error();
    return open_remote(path_or_url, remote_options_for(*url));
}

}  // namespace mlens
