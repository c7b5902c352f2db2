// Ollama's Go templates rendered by Go's own text/template (mlens-ollama-template): the demo
// store's template layers on a fixed conversation, Ollama's messages form with tools, tool calls
// and collation, and the errors a template or a conversation can give. Every expected string was
// worked out by hand from Ollama's rules (app/ollama_template/main.go).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "mlens/ollama/go_template_render.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

// The template layer of a demo store model's manifest, as stored.
std::string template_of(const std::string& model, const std::string& tag) {
    std::ifstream in(kStore + "/manifests/registry.ollama.ai/library/" + model + "/" + tag);
    const nlohmann::json manifest = nlohmann::json::parse(in);
    for (const nlohmann::json& layer : manifest["layers"])
        if (layer["mediaType"] == "application/vnd.ollama.image.template") {
            std::string digest = layer["digest"];
            digest[6] = '-';  // sha256:… is stored as sha256-…
            const std::vector<uint8_t> bytes = test::read_whole_file(kStore + "/blobs/" + digest);
            return std::string(bytes.begin(), bytes.end());
        }
    return "";
}

const nlohmann::json kConversation = {{"messages",
                                       {{{"role", "system"}, {"content", "Be brief."}},
                                        {{"role", "user"}, {"content", "Hi"}},
                                        {{"role", "assistant"}, {"content", "Hello!"}},
                                        {{"role", "user"}, {"content", "2+2?"}}}}};

}  // namespace

TEST_CASE("the demo store's Ollama templates render as Ollama renders them", "[template][ollama]") {
    // ChatML in the legacy form: one pass per exchange; without {{ .Response }} in it, Ollama
    // appends one, so the earlier answer follows its header with no end marker, and the last pass
    // stops where the answer starts.
    auto chatml = render_go_template(template_of("tiny-mlx", "mixed"), kConversation);
    REQUIRE(chatml);
    CHECK(*chatml ==
          "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!"
          "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
    // Llama-2 style: the system text rides with the first exchange only; the line break after
    // {{ end }} is text, so the second exchange starts with it.
    auto llama2 = render_go_template(template_of("tiny-llama", "q4_0"), kConversation);
    REQUIRE(llama2);
    CHECK(*llama2 == "<<SYS>>Be brief.<</SYS>>\n[INST] Hi [/INST]Hello!\n[INST] 2+2? [/INST]");
    // A model without a template layer gets Ollama's default, {{ .Prompt }}: the turns run
    // together.
    CHECK(template_of("tiny-moe", "int4").empty());
    auto plain = render_go_template("{{ .Prompt }}", kConversation);
    REQUIRE(plain);
    CHECK(*plain == "HiHello!2+2?");
}

TEST_CASE("a messages template sees collated messages, the system text, tools and tool calls", "[template][ollama]") {
    const std::string tmpl =
        "{{ if .System }}S:{{ .System }}\n{{ end }}{{ if .Tools }}T:{{ range .Tools }}{{ .Function }}{{ end }}\n{{ end }}"
        "{{ range .Messages }}{{ .Role }}:{{ .Content }}{{ range .ToolCalls }} call {{ .Function.Name }} "
        "{{ .Function.Arguments }}{{ end }}\n{{ end }}";
    const nlohmann::json conversation = {
        {"messages",
         {{{"role", "system"}, {"content", "one"}},
          {{"role", "system"}, {"content", "two"}},
          {{"role", "user"}, {"content", "a"}},
          {{"role", "user"}, {"content", "b"}},
          {{"role", "assistant"},
           {"content", ""},
           {"tool_calls", {{{"function", {{"name", "get"}, {"arguments", nlohmann::ordered_json::parse(R"({"z":1,"a":"x"})")}}}}}}},
          {{"role", "tool"}, {"content", "r1"}, {"tool_name", "get"}},
          {{"role", "tool"}, {"content", "r2"}, {"tool_name", "get"}}}},
        {"tools",
         {{{"type", "function"},
           {"function",
            {{"name", "get"},
             {"parameters", {{"type", "object"}, {"required", {"city"}}, {"properties", {{"city", {{"type", "string"}}}}}}}}}}}}};
    auto out = render_go_template(tmpl, conversation);
    REQUIRE(out);
    CHECK(*out ==
          "S:one\n\ntwo\n"
          "T:{\"name\":\"get\",\"parameters\":{\"type\":\"object\",\"required\":[\"city\"],\"properties\":{\"city\":{\"type\":\"string\"}}}}\n"
          "system:one\n\ntwo\nuser:a\n\nb\nassistant: call get {\"a\":\"x\",\"z\":1}\ntool:r1\ntool:r2\n");
}

TEST_CASE("a template Go cannot parse or run, and a conversation with an unknown field, are refused with the reason", "[template][ollama]") {
    auto bad = render_go_template("line one\n{{ if .System }x", kConversation);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::E_TEMPLATE);
    CHECK(bad.error().message == "template: :2: unexpected \"}\" in operand");
    auto failing = render_go_template("{{ index .Messages 9 }}", kConversation);
    REQUIRE_FALSE(failing);
    CHECK(failing.error().code == ErrorCode::E_TEMPLATE);
    CHECK(failing.error().message.find("index out of range: 9") != std::string::npos);
    auto typo = render_go_template("{{ .Prompt }}", {{"messages", {{{"role", "user"}, {"contents", "x"}}}}});
    REQUIRE_FALSE(typo);
    CHECK(typo.error().code == ErrorCode::E_USAGE);
    CHECK(typo.error().message == "unknown field \"contents\" in messages[0]");
}
