#include "chat_fixtures.h"

#include <filesystem>
#include <stdexcept>

#include "mlens/compat/value_builders.h"
#include "mlens/formats/gguf_reader.h"
#include "model_fixture.h"
#include "test_paths.h"

namespace mlens::test {

namespace {

MetadataEntry entry(std::string key, Value value) {
    MetadataEntry e;
    e.key = std::move(key);
    e.value = std::move(value);
    return e;
}

void write_text(const std::string& path, const std::string& text) { write_whole_file(path, std::vector<uint8_t>(text.begin(), text.end())); }

}  // namespace

void write_template_gguf(const std::string& path, const std::string& vocab, const std::vector<std::pair<std::string, std::string>>& templates,
                         const std::map<int32_t, std::string>& rename) {
    auto source = open_gguf(llama_source_dir() + "/models/" + vocab);
    if (!source) throw std::runtime_error("cannot open vocab " + vocab);
    std::vector<MetadataEntry> metadata;
    for (const MetadataEntry& e : source->metadata) {
        if (e.key.starts_with("tokenizer.chat_template")) continue;
        if (e.key == "tokenizer.ggml.tokens" && !rename.empty()) {
            std::vector<std::string> tokens = compat::array_strings_of(e.value).value();
            for (const auto& [id, text] : rename) tokens.at(static_cast<size_t>(id)) = text;
            metadata.push_back(entry(e.key, compat::array_strings(tokens)));
            continue;
        }
        metadata.push_back(e);
    }
    for (const auto& [name, text] : templates)
        metadata.push_back(entry(name.empty() ? "tokenizer.chat_template" : "tokenizer.chat_template." + name, compat::value_string(text)));
    write_fixture_gguf(path, std::move(metadata), {});
}

void write_hub_folder(const std::string& dir, const std::string& chat_template, const std::string& bos, const std::string& eos) {
    std::filesystem::create_directories(dir);
    write_text(dir + "/chat_template.jinja", chat_template);
    const nlohmann::json config = {{"bos_token", {{"content", bos}, {"special", true}}},
                                   {"eos_token", {{"content", eos}, {"special", true}}},
                                   {"model_max_length", 4096}};
    write_text(dir + "/tokenizer_config.json", config.dump(2));
    const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    std::vector<uint8_t> bytes(8, 0);
    bytes[0] = static_cast<uint8_t>(header.size());
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.insert(bytes.end(), {0, 0, 0x80, 0x3F});
    write_whole_file(dir + "/model.safetensors", bytes);
}

nlohmann::json tool_and_reasoning_conversation() {
    using nlohmann::json;
    const json call = {{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", R"({"city":"Lyon"})"}}}};
    return {{"messages",
             json::array({{{"role", "system"}, {"content", "You answer in one line."}},
                          {{"role", "user"}, {"content", "Weather in Lyon?"}},
                          {{"role", "assistant"}, {"content", ""}, {"reasoning_content", "I should call the tool."}, {"tool_calls", json::array({call})}},
                          {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "18 C, sunny"}},
                          {{"role", "user"}, {"content", "And tomorrow?"}}})},
            {"tools", json::array({{{"type", "function"},
                                    {"function",
                                     {{"name", "get_weather"},
                                      {"description", "Current weather of a city"},
                                      {"parameters",
                                       {{"type", "object"},
                                        {"properties", {{"city", {{"type", "string"}}}}},
                                        {"required", json::array({"city"})}}}}}}})},
            {"add_generation_prompt", true}};
}

// NL goes where a role's line ends: "" in the plain template, " " in the spaced one.
#define MLENS_CHATML_BODY(NL)                                                                                                      \
    "{%- if tools %}{{- '<|im_start|>system\\n# Tools' }}{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"       \
    "{{- '<|im_end|>\\n' }}{%- endif %}\n"                                                                                          \
    "{%- for message in messages %}\n"                                                                                             \
    "{%- if message.role == 'assistant' %}{{- '<|im_start|>assistant" NL "\\n' }}\n"                                               \
    "{%- if message.reasoning_content %}{{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n' }}{%- endif %}\n"          \
    "{{- message.content }}\n"                                                                                                     \
    "{%- if message.tool_calls %}{%- for call in message.tool_calls %}{{- '\\n<tool_call>\\n{\"name\": \"' + call.function.name + " \
    "'\", \"arguments\": ' + (call.function.arguments | tojson) + '}\\n</tool_call>' }}{%- endfor %}{%- endif %}"                  \
    "{{- '<|im_end|>\\n' }}\n"                                                                                                     \
    "{%- elif message.role == 'tool' %}{{- '<|im_start|>user" NL "\\n<tool_response>\\n' + message.content + "                    \
    "'\\n</tool_response><|im_end|>\\n' }}\n"                                                                                      \
    "{%- else %}{{- '<|im_start|>' + message.role + '" NL "\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}\n"             \
    "{%- endfor %}\n"

const char* const kChatml = MLENS_CHATML_BODY("") "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
const char* const kChatmlSpaced = MLENS_CHATML_BODY(" ") "{%- if add_generation_prompt %}{{- '<|im_start|>assistant \\n' }}{%- endif %}";
const char* const kChatmlBos =
    "{{- bos_token }}\n" MLENS_CHATML_BODY("") "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
const char* const kChatmlNoGeneration = MLENS_CHATML_BODY("");
const char* const kChatmlBroken =
    "{%- for message in messages %}\n{{- '<|im_start|>' + message.role + '\\n' }}\n{{- message.content | shout }}\n"
    "{{- '<|im_end|>\\n' }}\n{%- endfor %}";

#undef MLENS_CHATML_BODY

}  // namespace mlens::test
