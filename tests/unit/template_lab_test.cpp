// The template lab (template_lab.h): the conversation form and its Ollama twin, the engine's
// error positions, the differences and warnings on renderings made by hand, and whole runs on
// fixture GGUFs, a Hugging Face folder and the demo store, rendered by the llama.cpp worker and by
// mlens-ollama-template. Expected prompts were worked out by hand from the templates.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "chat_fixtures.h"
#include "mlens/infer/template_lab.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
using nlohmann::json;

namespace {

TokenPiece piece(int32_t id, std::string text, bool eog = false) { return TokenPiece{id, std::move(text), true, eog}; }

TemplateRendering made(std::string source, std::string prompt, std::vector<TokenPiece> tokens, std::string generation_prompt = "\n") {
    TemplateRendering r;
    r.side = "model";
    r.model = "m.gguf";
    r.tmpl.source = std::move(source);
    r.rendered = true;
    r.prompt = std::move(prompt);
    r.tokens = std::move(tokens);
    r.tokenized_by = "m.gguf";
    r.chat = JinjaRender{};
    r.chat->generation_prompt = std::move(generation_prompt);
    return r;
}

const TemplateWarning* find_warning(const TemplateLabResult& lab, const std::string& code, size_t rendering) {
    for (const TemplateWarning& w : lab.warnings)
        if (w.code == code && w.rendering == rendering) return &w;
    return nullptr;
}

const TemplateRendering& rendering(const TemplateLabResult& lab, const std::string& side, const std::string& source) {
    for (const TemplateRendering& r : lab.renderings)
        if (r.side == side && r.tmpl.source == source) return r;
    FAIL("no rendering " << side << " " << source);
    return lab.renderings.front();
}

size_t index_of(const TemplateLabResult& lab, const std::string& side, const std::string& source) {
    return static_cast<size_t>(&rendering(lab, side, source) - lab.renderings.data());
}

}  // namespace

TEST_CASE("a conversation is OpenAI's messages form, checked field by field", "[template]") {
    auto array = parse_conversation(json::array({{{"role", "user"}, {"content", "Hi"}}}));
    REQUIRE(array);
    CHECK(*array == json{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}, {"tools", json::array()}, {"add_generation_prompt", true}});
    auto object = parse_conversation(tool_and_reasoning_conversation());
    REQUIRE(object);
    CHECK((*object)["messages"].size() == 5);
    CHECK((*object)["tools"].size() == 1);

    auto typo = parse_conversation(json::array({{{"role", "user"}, {"contents", "Hi"}}}));
    REQUIRE_FALSE(typo);
    CHECK(typo.error().code == ErrorCode::E_USAGE);
    CHECK(typo.error().message == "unknown field \"contents\" in messages[0]");
    auto bad_arguments = parse_conversation(json::array(
        {{{"role", "assistant"}, {"tool_calls", json::array({{{"function", {{"name", "f"}, {"arguments", "{not json"}}}}})}}}));
    REQUIRE_FALSE(bad_arguments);
    CHECK(bad_arguments.error().message == "messages[0].tool_calls[0].function.arguments is not the JSON text of an object");
    auto empty = parse_conversation(json::array());
    REQUIRE_FALSE(empty);
    CHECK(empty.error().message == "the conversation has no messages");
    auto flag = parse_conversation(json{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}, {"add_generation_prompt", "yes"}});
    REQUIRE_FALSE(flag);
    CHECK(flag.error().message == "\"add_generation_prompt\" must be true or false");

    const json d = default_conversation();
    CHECK(d["messages"].size() == 2);
    CHECK(d["messages"][0]["role"] == "system");
    CHECK(d["messages"][1]["role"] == "user");
}

TEST_CASE("the Ollama form of a conversation carries thinking, object arguments and the tool's name", "[template][ollama]") {
    const json ollama = ollama_conversation(*parse_conversation(tool_and_reasoning_conversation()));
    const json expected_messages = json::array(
        {{{"role", "system"}, {"content", "You answer in one line."}},
         {{"role", "user"}, {"content", "Weather in Lyon?"}},
         {{"role", "assistant"},
          {"content", ""},
          {"thinking", "I should call the tool."},
          {"tool_calls", json::array({{{"function", {{"name", "get_weather"}, {"arguments", {{"city", "Lyon"}}}}}}})}},
         {{"role", "tool"}, {"content", "18 C, sunny"}, {"tool_name", "get_weather"}},
         {{"role", "user"}, {"content", "And tomorrow?"}}});
    CHECK(ollama["messages"] == expected_messages);
    CHECK(ollama["tools"] == tool_and_reasoning_conversation()["tools"]);
}

TEST_CASE("the engine's error gives its line: a render error names it, a parse error points into the source", "[template]") {
    const std::string source = "{%- for m in messages %}\n{{ m.content }}\n{{ m.content | shout }}\n{%- endfor %}";
    auto runtime = template_failure("\n------------\nWhile executing FilterExpression at line 3, column 14 in source:\n...↵{{ m.content | shout }}↵...\n      ^\nError: Unknown filter 'shout'", source);
    CHECK(runtime.line == 3);
    CHECK(runtime.column == 14);
    // A parser error: the excerpt is the source around the position (newlines as ↵), the caret
    // under it, three columns of "..." first.
    const std::string bad = "line one\nline two {% if %} end";
    const size_t pos = bad.find("%}", bad.find("if"));
    const std::string excerpt = "..." + std::string("line one↵line two {% if %} end") + "...";
    const std::string message = "parser: Parser Error: Expected expression (Got %})\n" + excerpt + "\n" + std::string(pos + 3, ' ') + "^";
    auto parsed = template_failure(message, bad);
    CHECK(parsed.line == 2);
    CHECK(parsed.column == pos - bad.find('\n'));
    auto unknown = template_failure("something went wrong", bad);
    CHECK(unknown.line == 0);
    CHECK(unknown.message == "something went wrong");
}

TEST_CASE("renderings are compared with the first: first differing byte, the differing parts, the first differing token", "[template]") {
    TemplateLabResult lab;
    lab.renderings.push_back(made("gguf", "<s>A: hi\nB:\n", {piece(1, "<s>"), piece(5, "A"), piece(6, "hi"), piece(7, "B")}, "B:\n"));
    lab.renderings.push_back(made("gguf:spaced", "<s>A: hi \nB: \n", {piece(1, "<s>"), piece(5, "A"), piece(8, "hi "), piece(7, "B")}, "B: \n"));
    lab.renderings.push_back(made("gguf:same", "<s>A: hi\nB:\n", {piece(1, "<s>"), piece(5, "A"), piece(6, "hi"), piece(7, "B")}, "B:\n"));
    compare_renderings(lab, {1, 1, 1}, true);
    REQUIRE(lab.differences.size() == 2);
    const TemplateDifference& d = lab.differences[0];
    CHECK(d.rendering == 1);
    CHECK(d.reference == 0);
    CHECK_FALSE(d.same_text);
    CHECK(d.first_byte == 8);
    CHECK(d.common_before == "<s>A: hi");
    CHECK(d.reference_part == "\nB:");
    CHECK(d.rendering_part == " \nB: ");
    CHECK(d.compared_tokens);
    CHECK_FALSE(d.same_ids);
    CHECK(d.first_token == 2);
    CHECK(lab.differences[1].same_text);
    CHECK(lab.differences[1].same_ids);
    CHECK(lab.warnings.empty());
}

TEST_CASE("the lab warns of a doubled BOS, a missing generation prompt, a turn end the model does not stop on and a failed render", "[template]") {
    TemplateLabResult lab;
    lab.renderings.push_back(made("gguf", "<s><s>Q\n", {piece(1, "<s>"), piece(1, "<s>"), piece(9, "Q")}));
    lab.renderings.push_back(made("gguf:nogen", "<s>Q", {piece(1, "<s>"), piece(9, "Q")}, ""));
    lab.renderings.push_back(made("gguf:turns", "Q<|end_of_turn|>\n", {piece(9, "Q"), piece(30, "<|end_of_turn|>"), piece(31, "\n")}));
    lab.renderings.push_back(made("gguf:eot", "Q<|im_end|>\n", {piece(9, "Q"), piece(32, "<|im_end|>", true), piece(31, "\n")}));
    TemplateRendering broken;
    broken.side = "model";
    broken.tmpl.source = "gguf:broken";
    broken.failure = TemplateFailure{"Unknown filter 'shout'", 3, 14};
    lab.renderings.push_back(broken);
    TemplateRendering ollama = made("ollama", "[INST] Q [/INST]", {piece(9, "Q")});
    ollama.chat.reset();
    lab.renderings.push_back(ollama);
    compare_renderings(lab, {1, 1, 1, 1, 1, 1}, true);

    const TemplateWarning* bos = find_warning(lab, "W_DOUBLE_BOS", 0);
    REQUIRE(bos);
    CHECK(bos->message == "the prompt starts with BOS twice: the template writes \"<s>\" and the tokenizer adds BOS too");
    const TemplateWarning* nogen = find_warning(lab, "W_NO_GENERATION_PROMPT", 1);
    REQUIRE(nogen);
    CHECK(nogen->message ==
          "add_generation_prompt changes nothing: the rendering is the same with and without it (the template writes no assistant prefix "
          "for it, or writes one every time)");
    const TemplateWarning* stop = find_warning(lab, "W_STOP_NOT_EOG", 2);
    REQUIRE(stop);
    CHECK(stop->message ==
          "the template ends turns with \"<|end_of_turn|>\" (token 30), which m.gguf does not stop on (not an end-of-generation token)");
    CHECK_FALSE(find_warning(lab, "W_STOP_NOT_EOG", 3));  // <|im_end|> is EOG here
    const TemplateWarning* failed = find_warning(lab, "W_TEMPLATE_FAILED", 4);
    REQUIRE(failed);
    CHECK(failed->message == "did not render (line 3, column 14): Unknown filter 'shout'");
    // The Ollama rendering is held to the GGUF template's assistant prefix, "\n".
    const TemplateWarning* ollama_gen = find_warning(lab, "W_NO_GENERATION_PROMPT", 5);
    REQUIRE(ollama_gen);
    CHECK(ollama_gen->message == "the rendering does not end with the assistant prefix \"\\x0A\" of the GGUF's template");
    CHECK(lab.warnings.size() == 5);
    // Without add_generation_prompt nothing is held to a prefix.
    compare_renderings(lab, {1, 1, 1, 1, 1, 1}, false);
    CHECK_FALSE(find_warning(lab, "W_NO_GENERATION_PROMPT", 1));
    CHECK_FALSE(find_warning(lab, "W_NO_GENERATION_PROMPT", 5));
}

TEST_CASE("a GGUF's templates render through llama.cpp's chat layer: default, variants, and the one that fails", "[template][llama]") {
    TempDir dir;
    const std::string gguf = dir.file("chatml.gguf");
    write_template_gguf(gguf, "ggml-vocab-qwen2.gguf",
                        {{"", kChatml},
                         {"spaced", kChatmlSpaced},
                         {"nogen", kChatmlNoGeneration},
                         {"broken", kChatmlBroken},
                         {"parse", "line one\nline two {% if %} end"}});
    auto templates = find_templates(gguf);
    REQUIRE(templates);
    CHECK(templates->has_gguf);
    REQUIRE(templates->templates.size() == 5);
    CHECK(templates->templates[0].source == "gguf");
    CHECK(templates->templates[0].jinja_source == JinjaTemplateSource::model);
    CHECK(templates->templates[1].source == "gguf:spaced");
    CHECK(templates->templates[1].where == "tokenizer.chat_template.spaced");

    TemplateLabRequest request;
    request.model = gguf;
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    REQUIRE(lab->renderings.size() == 5);
    const std::string expected =
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is in a GGUF file?<|im_end|>\n<|im_start|>assistant\n";
    const TemplateRendering& plain = rendering(*lab, "model", "gguf");
    REQUIRE(plain.rendered);
    CHECK(plain.prompt == expected);
    REQUIRE(plain.chat);
    CHECK(plain.chat->generation_prompt == "<|im_start|>assistant\n");
    // ChatML's markers are one token each in the Qwen2 vocabulary; no BOS is added (add_bos false).
    REQUIRE(plain.tokens.size() >= 3);
    CHECK(plain.tokens.front().id == 151644);
    CHECK(plain.tokens.back().id == 198);
    CHECK(plain.tokens[plain.tokens.size() - 3].id == 151644);

    const TemplateRendering& spaced = rendering(*lab, "model", "gguf:spaced");
    CHECK(spaced.prompt ==
          "<|im_start|>system \nYou are a helpful assistant.<|im_end|>\n<|im_start|>user \nWhat is in a GGUF file?<|im_end|>\n<|im_start|>assistant \n");
    const TemplateDifference* spaced_diff = nullptr;
    for (const TemplateDifference& d : lab->differences)
        if (d.rendering == index_of(*lab, "model", "gguf:spaced")) spaced_diff = &d;
    REQUIRE(spaced_diff);
    CHECK(spaced_diff->first_byte == std::string("<|im_start|>system").size());
    CHECK(spaced_diff->common_before == "<|im_start|>system");
    CHECK_FALSE(spaced_diff->same_ids);
    CHECK(spaced_diff->first_token == 2);  // <|im_start|>, system, then "\n" against " \n"

    const size_t nogen = index_of(*lab, "model", "gguf:nogen");
    CHECK(lab->renderings[nogen].prompt == expected.substr(0, expected.size() - std::string("<|im_start|>assistant\n").size()));
    REQUIRE(find_warning(*lab, "W_NO_GENERATION_PROMPT", nogen));

    const size_t broken = index_of(*lab, "model", "gguf:broken");
    CHECK_FALSE(lab->renderings[broken].rendered);
    REQUIRE(lab->renderings[broken].failure);
    CHECK(lab->renderings[broken].failure->line == 3);
    const TemplateWarning* failed = find_warning(*lab, "W_TEMPLATE_FAILED", broken);
    REQUIRE(failed);
    CHECK(failed->message.find("shout") != std::string::npos);
    // A parse error the engine gives no position for: its line found by the engine itself.
    const size_t parse = index_of(*lab, "model", "gguf:parse");
    REQUIRE(lab->renderings[parse].failure);
    CHECK(lab->renderings[parse].failure->line == 2);
    CHECK(lab->renderings[parse].failure->message.ends_with(" (line 2)"));
}

TEST_CASE("a turn-end token the vocabulary does not mark as end of generation is named", "[template][llama]") {
    TempDir dir;
    const std::string gguf = dir.file("turns.gguf");
    // Qwen2's <|im_end|> (151645), which llama.cpp stops on by its text, renamed to OpenChat's
    // <|end_of_turn|>, which it does not know.
    std::string tmpl = kChatml;
    for (size_t at = tmpl.find("<|im_end|>"); at != std::string::npos; at = tmpl.find("<|im_end|>", at)) tmpl.replace(at, 10, "<|end_of_turn|>");
    write_template_gguf(gguf, "ggml-vocab-qwen2.gguf", {{"", tmpl}}, {{151645, "<|end_of_turn|>"}});
    TemplateLabRequest request;
    request.model = gguf;
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    REQUIRE(lab->renderings.size() == 1);
    const TemplateWarning* stop = find_warning(*lab, "W_STOP_NOT_EOG", 0);
    REQUIRE(stop);
    CHECK(stop->message == "the template ends turns with \"<|end_of_turn|>\" (token 151645), which " + gguf +
                               " does not stop on (not an end-of-generation token)");
}

TEST_CASE("a Hub template renders with its own BOS text: against a GGUF whose tokenizer adds BOS, BOS is doubled", "[template][llama]") {
    TempDir dir;
    const std::string gguf = dir.file("spm.gguf");
    write_template_gguf(gguf, "ggml-vocab-llama-spm.gguf", {{"", kChatmlBos}});
    const std::string folder = dir.file("hub");
    write_hub_folder(folder, kChatmlBos, "<s>", "</s>");
    TemplateLabRequest request;
    request.model = gguf;
    request.against = folder;
    request.conversation = parse_conversation(tool_and_reasoning_conversation()).value();
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    REQUIRE(lab->renderings.size() == 2);
    const TemplateRendering& own = rendering(*lab, "model", "gguf");
    const TemplateRendering& hub = rendering(*lab, "against", "hub");
    REQUIRE(own.rendered);
    REQUIRE(hub.rendered);
    CHECK(hub.tmpl.where == "chat_template.jinja");
    CHECK(hub.tokenized_by == gguf);
    // llama.cpp drops the BOS text a template writes when the tokenizer adds BOS; the Hub
    // rendering keeps it, as transformers does.
    CHECK(hub.prompt == "<s>" + own.prompt);
    CHECK(own.tokens.front().id == 1);
    CHECK(own.tokens[1].id != 1);
    const size_t hub_index = index_of(*lab, "against", "hub");
    REQUIRE(find_warning(*lab, "W_DOUBLE_BOS", hub_index));
    CHECK_FALSE(find_warning(*lab, "W_DOUBLE_BOS", index_of(*lab, "model", "gguf")));
    REQUIRE(lab->differences.size() == 1);
    // Both start with '<' ("<s>" and "<|im_start|>"): the first differing byte is the second.
    CHECK(lab->differences[0].first_byte == 1);
    CHECK(lab->differences[0].common_before == "<");
    CHECK(lab->differences[0].rendering_part == "s><");
    CHECK(lab->differences[0].reference_part.empty());
    CHECK(lab->differences[0].first_token == 1);
    // The tool, the reasoning and the tool call are in both.
    for (const std::string& part :
         {std::string("# Tools\n{"), std::string("<think>\nI should call the tool.\n</think>\n"),
          std::string("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "),
          std::string("<tool_response>\n18 C, sunny\n</tool_response>")})
        CHECK(own.prompt.find(part) != std::string::npos);
}

TEST_CASE("a store model renders its Ollama TEMPLATE layer by Go's engine, as Ollama does", "[template][ollama]") {
    const std::string store = std::string(MLENS_DEMO_DIR) + "/ollama-store";
    TemplateLabRequest request;
    request.model = store + "/tiny-llama:q4_0";
    request.conversation = parse_conversation(json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                           {{"role", "user"}, {"content", "Hi"}},
                                                           {{"role", "assistant"}, {"content", "Hello!"}},
                                                           {{"role", "user"}, {"content", "2+2?"}}}))
                               .value();
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    const TemplateRendering& ollama = rendering(*lab, "model", "ollama");
    REQUIRE(ollama.rendered);
    // The hand-checked string of go_template_render_test.cpp.
    CHECK(ollama.prompt == "<<SYS>>Be brief.<</SYS>>\n[INST] Hi [/INST]Hello!\n[INST] 2+2? [/INST]");
    CHECK(ollama.tmpl.engine == TemplateEngine::ollama_go);
    CHECK(ollama.tokenized_by == request.model);
    REQUIRE_FALSE(ollama.tokens.empty());
    CHECK(ollama.tokens.front().id == 1);  // the LLaMA vocabulary adds BOS

    // A safetensors store model has no GGUF: its ChatML layer renders beside a GGUF.
    TemplateLabRequest mlx;
    mlx.model = store + "/tiny-mlx:mixed";
    mlx.conversation = request.conversation;
    auto alone = run_template_lab(mlx);
    REQUIRE_FALSE(alone);
    CHECK(alone.error().code == ErrorCode::E_USAGE);
    mlx.against = store + "/tiny-llama:q4_0";
    auto beside = run_template_lab(mlx);
    REQUIRE(beside);
    CHECK(rendering(*beside, "model", "ollama").prompt ==
          "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!"
          "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("an Ollama-made GGUF renders the template llama.cpp reads after the compat rewrite, named as added by it", "[template][llama]") {
    const std::string gemma = std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf";
    auto templates = find_templates(gemma);
    REQUIRE(templates);
    REQUIRE(templates->templates.size() == 1);
    CHECK(templates->templates[0].source == "gguf");
    CHECK(templates->templates[0].where == "tokenizer.chat_template, added by the compat rewrite (handle_gemma3)");
    CHECK(templates->templates[0].text.starts_with("{{ bos_token }}{% if messages[0]['role'] == 'system' %}"));
    // Loaded as it is, llama.cpp reads the file's keys: it has no template.
    auto as_is = find_templates(gemma, true);
    REQUIRE(as_is);
    CHECK(as_is->templates.empty());

    TemplateLabRequest request;
    request.model = gemma;
    auto lab = run_template_lab(request);
    REQUIRE(lab);
    REQUIRE(lab->renderings.size() == 1);
    const TemplateRendering& r = lab->renderings[0];
    REQUIRE(r.rendered);
    // The template refuses a system turn; llama.cpp's chat layer folds it into the first user turn.
    CHECK(r.prompt == "<start_of_turn>user\nYou are a helpful assistant.\nWhat is in a GGUF file?<end_of_turn>\n<start_of_turn>model\n");
    request.session.as_is = true;
    auto plain = run_template_lab(request);
    REQUIRE(plain);
    CHECK(plain->renderings.empty());
}
