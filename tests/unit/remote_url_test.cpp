// Remote references: URL parsing, what is shown of a URL, and hf:// resolution with its token.
#include <catch2/catch.hpp>

#include <fstream>

#include "mlens/remote/remote_url.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("parse_http_url splits scheme, host, port and target", "[remote]") {
    auto a = parse_http_url("https://huggingface.co/org/repo/resolve/main/m.gguf");
    REQUIRE(a);
    CHECK(a->scheme == "https");
    CHECK(a->host == "huggingface.co");
    CHECK(a->port == 443);
    CHECK(a->target == "/org/repo/resolve/main/m.gguf");
    CHECK(a->origin() == "https://huggingface.co:443");
    CHECK(a->text() == "https://huggingface.co/org/repo/resolve/main/m.gguf");

    auto b = parse_http_url("http://127.0.0.2:8081?x=1");
    REQUIRE(b);
    CHECK(b->port == 8081);
    CHECK(b->target == "/?x=1");
    CHECK(b->text() == "http://127.0.0.2:8081/?x=1");

    auto c = parse_http_url("http://[::1]:99/a");
    REQUIRE(c);
    CHECK(c->host == "[::1]");
    CHECK(c->origin() == "http://[::1]:99");
}

TEST_CASE("parse_http_url refuses credentials, bad ports, spaces and fragments without showing them", "[remote]") {
    auto creds = parse_http_url("https://user:secret@example.com/m.gguf");
    REQUIRE_FALSE(creds);
    CHECK(creds.error().code == ErrorCode::E_ARGS);
    CHECK(creds.error().message.find("secret") == std::string::npos);
    CHECK(creds.error().message ==
          "https://example.com/m.gguf: credentials in the URL are not accepted (HF_TOKEN or the Hugging Face token file carry a token)");
    CHECK_FALSE(parse_http_url("http://example.com:0/a"));
    CHECK_FALSE(parse_http_url("http://example.com:65536/a"));
    CHECK_FALSE(parse_http_url("http://example.com:/a"));
    CHECK_FALSE(parse_http_url("http://exa mple.com/a"));
    CHECK_FALSE(parse_http_url("http://example.com/a#b"));
    CHECK_FALSE(parse_http_url("http:///a"));
    CHECK_FALSE(parse_http_url("ftp://example.com/a"));
}

TEST_CASE("display_url drops the query and userinfo", "[remote]") {
    CHECK(display_url("https://cdn.example/x.gguf?X-Amz-Signature=abc&token=t") == "https://cdn.example/x.gguf");
    CHECK(display_url("https://u:p@host:8/x") == "https://host:8/x");
    CHECK(display_url("https://host/a@b") == "https://host/a@b");
}

TEST_CASE("is_remote_reference knows the four schemes", "[remote]") {
    CHECK(is_remote_reference("http://a/b"));
    CHECK(is_remote_reference("https://a/b"));
    CHECK(is_remote_reference("hf://o/r/f.gguf"));
    CHECK(is_remote_reference("ollama://gemma3:4b"));
    CHECK_FALSE(is_remote_reference("gemma3:4b"));
    CHECK_FALSE(is_remote_reference("HTTP://a/b"));
}

TEST_CASE("hf:// references resolve against HF_ENDPOINT with the token of HF_TOKEN or the token file", "[remote]") {
    test::TempDir home;
    test::ScopedEnv endpoint("HF_ENDPOINT", std::string("http://127.0.0.1:9999/"));
    test::ScopedEnv hf_home("HF_HOME", home.path());
    {
        test::ScopedEnv token("HF_TOKEN", std::nullopt);
        auto hub = resolve_hub_reference("hf://org/repo/sub/m.gguf");
        REQUIRE(hub);
        CHECK(hub->url == "http://127.0.0.1:9999/org/repo/resolve/main/sub/m.gguf");
        CHECK_FALSE(hub->credential);
        std::ofstream(home.file("token")) << "hf_from_file\n";
        auto with_file = resolve_hub_reference("hf://org/repo@v1.0/m.gguf");
        REQUIRE(with_file);
        CHECK(with_file->url == "http://127.0.0.1:9999/org/repo/resolve/v1.0/m.gguf");
        REQUIRE(with_file->credential);
        CHECK(with_file->credential->origin == "http://127.0.0.1:9999");
        CHECK(with_file->credential->authorization == "Bearer hf_from_file");
    }
    test::ScopedEnv token("HF_TOKEN", std::string("hf_env"));
    auto hub = resolve_hub_reference("hf://org/repo/m.gguf");
    REQUIRE(hub);
    CHECK(hub->credential->authorization == "Bearer hf_env");
    // The token goes with plain URLs on the endpoint's origin, and with no other.
    CHECK(hub_credential_for(*parse_http_url("http://127.0.0.1:9999/x")));
    CHECK_FALSE(hub_credential_for(*parse_http_url("http://127.0.0.2:9999/x")));
    for (const char* bad : {"hf://org/repo", "hf://org/repo/", "hf://org//m.gguf", "hf://org/repo@/m.gguf", "hf://org/repo/../m.gguf",
                            "hf://org/repo/a//b.gguf"}) {
        INFO(bad);
        auto r = resolve_hub_reference(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::E_ARGS);
    }
}
