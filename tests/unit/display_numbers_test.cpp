// Text people can read: display widths for aligned CLI tables, significant digits for
// probabilities and divergences, and the model line of the inference views.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/model/summary.h"
#include "mlens/open/target.h"
#include "mlens/text/display_width.h"
#include "mlens/text/number_format.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

}  // namespace

TEST_CASE("display_width counts wide characters as two columns and combining marks as none", "[text]") {
    CHECK(display_width("abc") == 3);
    CHECK(display_width("\xC2\xB7Hello") == 6);  // ·Hello
    CHECK(display_width("\xE8\xAA\x9E") == 2);  // 語
    CHECK(display_width("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E") == 6);  // 日本語
    CHECK(display_width("\xED\x95\x9C\xEA\xB5\xAD") == 4);  // 한국
    CHECK(display_width("\xE3\x81\x8B\xE3\x82\xAB") == 4);  // かカ
    CHECK(display_width("\xEF\xBC\xA8") == 2);  // Ｈ fullwidth
    CHECK(display_width("\xF0\x9F\x98\x80") == 2);  // 😀
    CHECK(display_width("e\xCC\x81") == 1);  // e + combining acute
    CHECK(display_width("\xE0\xB8\x81\xE0\xB8\xB5\xE0\xB9\x88") == 1);  // Thai ก + ี + ่
    // नमस्ते: four letters, a virama and a vowel sign that draw on them
    CHECK(display_width("\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87") == 4);
    CHECK(display_width("a\xE2\x80\x8D"
                        "b") == 2);  // zero width joiner
    CHECK(display_width("\xE2\x96\x81x") == 2);  // ▁ (ambiguous width: one column)
    CHECK(display_width("\xFF"
                        "a") == 2);  // an invalid byte takes one column
    CHECK(code_point_width(0x3000) == 2);  // ideographic space
    CHECK(code_point_width(0x20000) == 2);  // CJK extension B
    CHECK(code_point_width(0x1160) == 0);  // Hangul medial vowel filler
    CHECK(code_point_width(0x00AD) == 1);  // soft hyphen
    CHECK(code_point_width(0x0007) == 0);
    CHECK(code_point_width(0x0416) == 1);  // Ж
}

TEST_CASE("significant prints probabilities with significant digits at any magnitude", "[text]") {
    CHECK(significant(0.87312) == "0.873");
    CHECK(significant(0.000123) == "1.2e-04");
    CHECK(significant(0.00012) == "1.2e-04");
    CHECK(significant(0.0005) == "5.0e-04");
    CHECK(significant(0.05) == "0.05");
    CHECK(significant(0.0512) == "0.0512");
    CHECK(significant(0.00123) == "0.00123");
    CHECK(significant(0.0999) == "0.0999");
    CHECK(significant(0.09999) == "0.1");
    CHECK(significant(0.99996) == "1");
    CHECK(significant(1.0) == "1");
    CHECK(significant(123.4) == "123");
    CHECK(significant(1234.5) == "1.2e+03");
    CHECK(significant(4.2e-9) == "4.2e-09");
    CHECK(significant(-0.0512) == "-0.0512");
    CHECK(significant(0.0) == "0");
    CHECK(significant(0.123456, 4) == "0.1235");
    CHECK(significant(0.000123456, 4) == "1.23e-04");
    CHECK(significant(std::nan("")) == "nan");
    CHECK(significant(-1.0 / 0.0) == "-inf");
}

TEST_CASE("model_line names the architecture, the parameter count and the file type", "[text]") {
    ModelSummary s;
    s.architecture = "llama";
    s.parameters = 4194304;
    s.file_type = 1;
    s.file_type_name = "F16";
    CHECK(model_line(s) == "llama \xC2\xB7 4.19 M parameters \xC2\xB7 F16");
    ModelSummary vocab;
    vocab.architecture = "gemma4";
    CHECK(model_line(vocab) == "gemma4 \xC2\xB7 no weights");
    CHECK(model_line(ModelSummary{}) == "unknown architecture \xC2\xB7 no weights");
}

TEST_CASE("mlens tokenize aligns a CJK row by display width", "[infer][cli][text]") {
    const std::string vocab = test::llama_source_dir() + "/models/ggml-vocab-gemma-4.gguf";
    test::CliRun r = test::run_mlens({"tokenize", vocab, "\xE8\xAA\x9E is a word", "--no-bos"});
    INFO(r.err);
    REQUIRE(r.exit_status == 0);
    std::vector<std::string> lines = test::lines_of(r.out);
    REQUIRE(lines.size() >= 3);
    const std::string& header = lines[0];
    REQUIRE(header.rfind("bytes") != std::string::npos);
    const size_t bytes_column = display_width(header.substr(0, header.rfind("bytes")));
    const size_t piece_column = display_width(header.substr(0, header.find("piece")));
    size_t rows = 0;
    bool cjk_row = false;
    for (size_t i = 1; i < lines.size() && lines[i].find(" tokens; detokenized:") == std::string::npos; ++i) {
        const std::string& line = lines[i];
        const size_t quote_open = line.find('\'');
        const size_t quote_close = line.rfind('\'');
        REQUIRE(quote_close != std::string::npos);
        CHECK(display_width(line.substr(0, quote_open)) == piece_column);
        const size_t bytes_start = line.find_first_not_of(' ', quote_close + 1);
        CHECK(display_width(line.substr(0, bytes_start)) == bytes_column);
        if (line.find("\xE8\xAA\x9E") != std::string::npos) {
            cjk_row = true;
            CHECK(line.substr(bytes_start) == "E8 AA 9E");
        }
        ++rows;
    }
    CHECK(rows >= 3);
    CHECK(cjk_row);
}

TEST_CASE("mlens run prints the file's model line and probabilities with significant digits", "[infer][cli][text]") {
    test::CliRun r =
        test::run_mlens({"run", demo("tiny-llama-f32.gguf"), "-p", "Once upon a time", "-n", "2", "--top-k", "3", "--threads", "2"});
    INFO(r.err);
    REQUIRE(r.exit_status == 0);
    auto model = open_model(demo("tiny-llama-f32.gguf"));
    REQUIRE(model.ok());
    const ModelSummary s = summarize(*model);
    std::vector<std::string> lines = test::lines_of(r.out);
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0] == "model: llama \xC2\xB7 " + human_count(s.parameters) + " parameters \xC2\xB7 F32");
    CHECK(lines[0].find("?B") == std::string::npos);
    // Greedy decoding: the JSON run has the same steps, with the probabilities as numbers.
    test::CliRun j = test::run_mlens(
        {"run", demo("tiny-llama-f32.gguf"), "-p", "Once upon a time", "-n", "2", "--top-k", "3", "--threads", "2", "--json"});
    REQUIRE(j.exit_status == 0);
    nlohmann::json steps = nlohmann::json::parse(j.out)["steps"];
    REQUIRE(steps.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        const std::string& line = lines[i + 1];
        INFO(line);
        CHECK_THAT(line, Catch::Contains("  p=" + significant(steps[i]["prob"].get<double>()) + "  top: "));
        for (const auto& c : steps[i]["candidates"]) CHECK_THAT(line, Catch::Contains(" " + significant(c["prob"].get<double>())));
    }
}
