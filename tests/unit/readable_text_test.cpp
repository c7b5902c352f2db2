// Text layers as readable text: line breaks kept, only real control characters escaped, JSON
// pretty-printed with its \u escapes resolved, and the head of a long text.
#include <catch2/catch.hpp>

#include <string>

#include "mlens/text/readable_text.h"

using namespace mlens;

TEST_CASE("readable_text keeps lines and tabs and escapes only control characters", "[readable_text]") {
    CHECK(readable_text("line one\nline two\r\nline three\rend") == "line one\nline two\nline three\nend");
    CHECK(readable_text("a\tb") == "a\tb");
    CHECK(readable_text("bell \x07 esc \x1B[31m") == "bell \\x07 esc \\x1B[31m");
    CHECK(readable_text("bidi \xE2\x80\xAE here") == "bidi \\u202E here");
    CHECK(readable_text("bad \xFF byte") == "bad \\xFF byte");
    CHECK(readable_text("語\n<tag>") == "語\n<tag>");
    CHECK(readable_text("abcdef", 3) == "abc…");
}

TEST_CASE("pretty_json indents and resolves escapes that name printable characters", "[readable_text]") {
    CHECK(pretty_json(R"({"stop":["</s>","[INST]"],"temperature":0.7})") ==
          "{\n  \"stop\": [\n    \"</s>\",\n    \"[INST]\"\n  ],\n  \"temperature\": 0.7\n}");
    CHECK(pretty_json(R"({"stop":["\u003cstart_of_turn\u003e"],"a":{},"b":[],"c":null,"d":-1.5e3,"e":true})") ==
          "{\n  \"stop\": [\n    \"<start_of_turn>\"\n  ],\n  \"a\": {},\n  \"b\": [],\n  \"c\": null,\n  \"d\": -1.5e3,\n"
          "  \"e\": true\n}");
    // Control characters, bidi controls and lone surrogates stay escaped; pairs become the character.
    CHECK(pretty_json(R"(["a\nb","\u0007","\u202e","\ud800","\ud83d\ude00","\/","\"q\"","\u00e9"])") ==
          "[\n  \"a\\nb\",\n  \"\\u0007\",\n  \"\\u202e\",\n  \"\\ud800\",\n  \"\xF0\x9F\x98\x80\",\n  \"/\",\n"
          "  \"\\\"q\\\"\",\n  \"\xC3\xA9\"\n]");
    CHECK(pretty_json(R"(["\u0022\u005c"])") == "[\n  \"\\\"\\\\\"\n]");
    CHECK(pretty_json("  42 ") == "42");
    CHECK(pretty_json("[[[]]]") == "[\n  [\n    []\n  ]\n]");
    for (const char* bad :
         {"", "{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{1:2}", "[1] [2]", "01", "\"a\x01\"", "tru", "{\"a\":1}}", "[\"\\x\"]", "\"\xFF\""})
        CHECK_FALSE(pretty_json(bad));
    // As deep as any JSON ModelLens reads, and no deeper; indentation stops growing.
    const std::string deepest = std::string(kMaxPrettyJsonDepth, '[') + std::string(kMaxPrettyJsonDepth, ']');
    REQUIRE(pretty_json(deepest));
    CHECK(pretty_json(deepest)->find(std::string(2 * kMaxPrettyJsonIndent + 1, ' ')) == std::string::npos);
    CHECK(pretty_json(deepest)->find("\n" + std::string(2 * kMaxPrettyJsonIndent, ' ') + "[") != std::string::npos);
    CHECK_FALSE(pretty_json("[" + deepest + "]"));
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK_FALSE(pretty_json(deep));
    CHECK(readable_json(deep, 10) == "[[[[[[[[[[\xE2\x80\xA6");
}

TEST_CASE("readable_json falls back to the text when it is not JSON", "[readable_text]") {
    CHECK(readable_json(R"({"a":"x\u202ey"})") == "{\n  \"a\": \"x\\u202ey\"\n}");
    CHECK(readable_json("{\"a\":\"\xE2\x80\xAE\"}") == "{\n  \"a\": \"\\u202E\"\n}");
    CHECK(readable_json("not json\nat all") == "not json\nat all");
}

TEST_CASE("first_lines keeps the head of a text and counts the rest", "[readable_text]") {
    TextHead head = first_lines("one\ntwo\nthree\nfour\n", 2);
    CHECK(head.text == "one\ntwo");
    CHECK(head.more_lines == 2);
    head = first_lines("one\n\n", 2);
    CHECK(head.text == "one");
    CHECK(head.more_lines == 0);
    CHECK(first_lines("", 3).text.empty());
    CHECK(first_lines("a\nb", 5).more_lines == 0);
}
