// Modelfile quoting against hostile layer values: whatever a manifest's text layers hold, the
// written Modelfile reads back (with the parser that follows Ollama's grammar) as exactly the same
// layers and no instruction more; a value no Modelfile can carry is refused, not cut.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "mlens/ollama/modelfile.h"

using namespace mlens;

namespace {

// The layers a Modelfile written from `layers` reads back as, checked instruction by instruction.
std::vector<ModelfileTextLayer> round_trip(const std::vector<ModelfileTextLayer>& layers, size_t instructions) {
    ModelfileInput input;
    input.from = "./model.gguf";
    input.adapters = {"./adapter-1.gguf"};
    input.layers = layers;
    auto text = write_modelfile(input);
    REQUIRE(text);
    INFO(*text);
    auto parsed = parse_modelfile(*text);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == instructions);
    CHECK((*parsed)[0].keyword == "FROM");
    CHECK((*parsed)[0].value == "./model.gguf");
    CHECK((*parsed)[1].keyword == "ADAPTER");
    CHECK((*parsed)[1].value == "./adapter-1.gguf");
    return modelfile_layers(*parsed);
}

std::string refusal(const ModelfileTextLayer& layer) {
    ModelfileInput input;
    input.from = "./model.gguf";
    input.layers = {layer};
    auto text = write_modelfile(input);
    REQUIRE_FALSE(text);
    CHECK(text.error().code == ErrorCode::E_MODELFILE);
    return text.error().message;
}

const std::vector<std::string> kHostile = {
    "line\nFROM ./evil.gguf",
    "line\nPARAMETER temperature 9\nSYSTEM pwned",
    "\"\"\"\nSYSTEM injected",  // a line of only quotes is not at a line end here: see kUnquotable
    "has \"\"\" inside and \"\"\"\"\" more",
    "back\\slash \\\" \\n \\\\ end\\",
    "trailing quote\"",
    "trailing quotes\"\"",
    "\"leading quote",
    "\"",
    "",
    "  padded  ",
    "\ttabs\tand\r\nCRLF\r\nlines\r",
    "# not a comment\nADAPTER ./x.gguf\n",
    "ends with three \"\"\"",
    "MESSAGE user hi",
};

}  // namespace

TEST_CASE("Modelfile: hostile template, system and license text reads back unchanged", "[modelfile]") {
    for (const std::string& v : kHostile) {
        if (v.starts_with("\"\"\"\n")) continue;  // refused, below
        INFO(v);
        std::vector<ModelfileTextLayer> layers = {
            {LayerKind::template_text, v}, {LayerKind::system, v + " (system)"}, {LayerKind::license, v}, {LayerKind::license, "two"}};
        std::vector<ModelfileTextLayer> back = round_trip(layers, 2 + layers.size());
        REQUIRE(back.size() == layers.size());
        for (size_t i = 0; i < layers.size(); ++i) {
            CHECK(back[i].kind == layers[i].kind);
            CHECK(back[i].text == layers[i].text);
        }
    }
}

TEST_CASE("Modelfile: hostile parameter and message values read back unchanged", "[modelfile]") {
    nlohmann::json params = nlohmann::json::object(), messages = nlohmann::json::array();
    params["stop"] = nlohmann::json::array();
    for (const std::string& v : kHostile) {
        if (v.starts_with("\"\"\"\n")) continue;
        params["stop"].push_back(v);
        messages.push_back({{"role", "user"}, {"content", v}});
        messages.push_back({{"role", "assistant"}, {"content", "\n" + v}});
    }
    params["seed"] = 42;
    params["temperature"] = 0.5;
    params["penalize_newline"] = false;
    params["num_ctx_text"] = "4096";  // a string that looks like a number stays a string
    const std::vector<ModelfileTextLayer> layers = {{LayerKind::params, params.dump()}, {LayerKind::messages, messages.dump()}};
    const size_t lines = params["stop"].size() + 4 + messages.size();
    std::vector<ModelfileTextLayer> back = round_trip(layers, 2 + lines);
    REQUIRE(back.size() == 2);
    CHECK(back[0].kind == LayerKind::params);
    CHECK(nlohmann::json::parse(back[0].text) == params);
    CHECK(back[1].kind == LayerKind::messages);
    CHECK(nlohmann::json::parse(back[1].text) == messages);
}

TEST_CASE("Modelfile: a value no Modelfile can carry is refused with the reason", "[modelfile]") {
    CHECK(refusal({LayerKind::system, "\"\"\"\nSYSTEM injected"}).find("SYSTEM has a line ending in three quotes") != std::string::npos);
    CHECK(refusal({LayerKind::template_text, "a \"\"\"  \r\nb"}).find("TEMPLATE has a line ending in three quotes") != std::string::npos);
    CHECK(refusal({LayerKind::license, "bidi \xE2\x80\xAE here"}).find("\\u202E, which Ollama's Modelfile parser drops") !=
          std::string::npos);
    CHECK(refusal({LayerKind::system, "bell \x07"}).find("drops") != std::string::npos);
    CHECK(refusal({LayerKind::system, "bad \xFF byte"}).find("not UTF-8") != std::string::npos);
    CHECK(refusal({LayerKind::params, R"({"stop\nFROM x":"a"})"}).find("which a PARAMETER line cannot spell") != std::string::npos);
    CHECK(refusal({LayerKind::params, R"({"stop":{"a":1}})"}).find("not a string, number or boolean") != std::string::npos);
    CHECK(refusal({LayerKind::params, R"({"stop":"a\n\"\"\"\nb"})"}).find("PARAMETER stop has a line ending") != std::string::npos);
    CHECK(refusal({LayerKind::messages, R"([{"role":"user\nFROM x","content":"a"}])"}).find("has the role") != std::string::npos);
    CHECK(refusal({LayerKind::messages, R"([{"role":"tool","content":"a"}])"}).find("system, user or assistant") != std::string::npos);
    CHECK(refusal({LayerKind::messages, R"({"role":"user"})"}).find("not a JSON array") != std::string::npos);
}

TEST_CASE("Modelfile: the parser follows Ollama's grammar", "[modelfile]") {
    // A value ends at the first line break where it reads as complete: a smuggled line is an
    // instruction of its own, which is why the writer must never produce one.
    auto p = parse_modelfile("FROM ./a.gguf\nSYSTEM \"\"\"a\"\"\"\nFROM ./evil.gguf\n");
    REQUIRE(p);
    REQUIRE(p->size() == 3);
    CHECK((*p)[2].value == "./evil.gguf");
    // Inside a """ quote, """ followed by more text on its line does not end it.
    p = parse_modelfile("FROM x\nTEMPLATE \"\"\"a\"\"\"b\nc\"\"\"\n");
    REQUIRE(p);
    REQUIRE(p->size() == 2);
    CHECK((*p)[1].value == "a\"\"\"b\nc");
    // CR ends a line as LF does; the keyword is case-insensitive; blanks around a bare value go.
    p = parse_modelfile("from  ./x.gguf  \r\nparameter seed 1\r\n");
    REQUIRE(p);
    REQUIRE(p->size() == 2);
    CHECK((*p)[0].value == "./x.gguf");
    CHECK((*p)[1].name == "seed");
    CHECK_FALSE((*p)[1].quoted);
    // Characters Ollama's parser drops are dropped.
    p = parse_modelfile("FROM x\nSYSTEM \"a\xE2\x80\x8B" "b\"\n");
    REQUIRE(p);
    CHECK((*p)[1].value == "ab");
    auto unclosed = parse_modelfile("FROM x\nSYSTEM \"\"\"never closed\n");
    REQUIRE_FALSE(unclosed);
    CHECK(unclosed.error().code == ErrorCode::E_MODELFILE);
    auto role = parse_modelfile("FROM x\nMESSAGE tool hi\n");
    REQUIRE_FALSE(role);
    auto name = parse_modelfile("FROM x\nPARAMETER st-op a\n");
    REQUIRE_FALSE(name);
}
