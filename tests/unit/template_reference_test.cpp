// The template lab's Jinja renderings against the pinned llama.cpp's own program: its
// test-chat-template (installed by third_party/setup.sh as llama-test-chat-template), which
// renders a template file through common_chat_templates_init and common_chat_templates_apply on
// the messages and tools of a JSON file, as llama-server does, and writes the prompt to a file.
// Compared byte for byte on every demo model, upstream vocabulary and fixture that carries a
// template, on the default conversation and on one with a system turn, tool calls and reasoning.
//
// The one thing the program does differently from llama-server: it has no model, so the chat
// layer never learns that the tokenizer adds BOS. With a model whose tokenizer does
// (tokenizer.ggml.add_bos_token), llama-server drops the BOS text a template writes at the start
// (common/chat.cpp, common_chat_template_direct_apply_impl); the expected string is the program's
// with that BOS text dropped. With tools, llama-server renders the tokenizer.chat_template.tool_use
// variant when the file has one, so the program is given that text.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "build_paths.h"
#include "chat_fixtures.h"
#include "mlens/infer/template_lab.h"
#include "mlens/open/target.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
using nlohmann::json;

namespace {

std::string shell_quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string text_of(const std::string& path) {
    const std::vector<uint8_t> bytes = read_whole_file(path);
    return std::string(bytes.begin(), bytes.end());
}

void write_text(const std::string& path, const std::string& text) { write_whole_file(path, std::vector<uint8_t>(text.begin(), text.end())); }

// The prompt llama.cpp's test-chat-template renders from `template_text` on the conversation.
std::string reference_prompt(const TempDir& dir, const std::string& template_text, const json& conversation, const JinjaRender& chat) {
    write_text(dir.file("t.jinja"), template_text);
    json input = {{"messages", conversation["messages"]}, {"bos_token", chat.bos_token}, {"eos_token", chat.eos_token}};
    if (!conversation["tools"].empty()) input["tools"] = conversation["tools"];
    write_text(dir.file("in.json"), input.dump());
    std::filesystem::remove(dir.file("out.txt"));
    const std::string command = shell_quoted(MLENS_LLAMA_TEST_CHAT_TEMPLATE) + " " + shell_quoted(dir.file("t.jinja")) + " --json " +
                                shell_quoted(dir.file("in.json")) + " --output " + shell_quoted(dir.file("out.txt")) + " >/dev/null 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    return text_of(dir.file("out.txt"));
}

// Every Jinja rendering of `model` on `conversation` equals the reference's.
void check_against_reference(const std::string& model, const json& conversation) {
    INFO(model);
    auto opened = open_model(model);
    REQUIRE(opened);
    const auto add_bos_entry = opened->find("tokenizer.ggml.add_bos_token");
    const bool add_bos = add_bos_entry && add_bos_entry->value.scalar.bits != 0;
    TemplateLabRequest request;
    request.model = model;
    request.conversation = conversation;
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    TempDir dir;
    size_t compared = 0;
    for (const TemplateRendering& r : lab->renderings) {
        if (r.tmpl.engine != TemplateEngine::llama_jinja) continue;
        INFO(r.tmpl.source);
        REQUIRE(r.rendered);
        std::string text = r.tmpl.text;
        if (r.tmpl.source == "gguf" && !conversation["tools"].empty())
            for (const TemplateRendering& v : lab->renderings)
                if (v.tmpl.source == "gguf:tool_use") text = v.tmpl.text;
        std::string expected = reference_prompt(dir, text, conversation, *r.chat);
        if (add_bos && r.tmpl.jinja_source != JinjaTemplateSource::text_alone && !r.chat->bos_token.empty() &&
            expected.starts_with(r.chat->bos_token))
            expected.erase(0, r.chat->bos_token.size());
        CHECK(r.prompt == expected);
        ++compared;
    }
    CHECK(compared > 0);
}

std::vector<std::string> models_with_templates(const TempDir& dir) {
    std::vector<std::string> models;
    for (const auto& entry : std::filesystem::directory_iterator(MLENS_DEMO_DIR)) {
        if (entry.path().extension() != ".gguf") continue;
        auto model = open_model(entry.path().string());
        if (model && model->find("tokenizer.chat_template")) models.push_back(entry.path().string());
    }
    for (const char* vocab : {"ggml-vocab-qwen2.gguf", "ggml-vocab-command-r.gguf"}) models.push_back(llama_source_dir() + "/models/" + vocab);
    write_template_gguf(dir.file("chatml.gguf"), "ggml-vocab-qwen2.gguf", {{"", kChatml}, {"spaced", kChatmlSpaced}, {"nogen", kChatmlNoGeneration}});
    write_template_gguf(dir.file("spm-bos.gguf"), "ggml-vocab-llama-spm.gguf", {{"", kChatmlBos}});
    models.push_back(dir.file("chatml.gguf"));
    models.push_back(dir.file("spm-bos.gguf"));
    return models;
}

}  // namespace

TEST_CASE("every GGUF template renders as the pinned llama.cpp renders it, byte for byte", "[template][llama][reference]") {
    TempDir dir;
    const std::vector<std::string> models = models_with_templates(dir);
    CHECK(models.size() >= 5);  // at least one demo model, two upstream vocabularies, two fixtures
    const json plain = default_conversation();
    const json tools = parse_conversation(tool_and_reasoning_conversation()).value();
    for (const std::string& model : models) {
        check_against_reference(model, plain);
        check_against_reference(model, tools);
    }
}

TEST_CASE("a Hugging Face folder's template renders as the pinned llama.cpp renders it alone", "[template][llama][reference]") {
    TempDir dir;
    write_template_gguf(dir.file("spm.gguf"), "ggml-vocab-llama-spm.gguf", {{"", kChatml}});
    write_hub_folder(dir.file("hub"), kChatmlBos, "<s>", "</s>");
    TemplateLabRequest request;
    request.model = dir.file("spm.gguf");
    request.against = dir.file("hub");
    request.conversation = parse_conversation(tool_and_reasoning_conversation()).value();
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    size_t hub = 0;
    for (const TemplateRendering& r : lab->renderings)
        if (r.tmpl.source == "hub") {
            REQUIRE(r.rendered);
            CHECK(r.prompt == reference_prompt(dir, r.tmpl.text, *request.conversation, *r.chat));
            CHECK(r.prompt.starts_with("<s>"));
            ++hub;
        }
    CHECK(hub == 1);
}
