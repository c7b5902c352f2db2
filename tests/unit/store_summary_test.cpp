// A store model at a glance: the Go template facts Ollama reads (fields, thinking tags), the
// capabilities `ollama show` derives from the GGUF, config, template, projector and parser, and
// the summary's facts from the config and the logical tensors.
#include <catch2/catch.hpp>

#include <optional>

#include "gguf_builder.h"
#include "mlens/ollama/go_template.h"
#include "mlens/ollama/store_model.h"
#include "mlens/ollama/store_summary.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

using Strings = std::vector<std::string>;

const char* kThinkingTemplate =
    "{{- range $i, $_ := .Messages }}{{- if eq .Role \"assistant\" }}<|im_start|>assistant\n"
    "{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}{{ end }}{{ end }}";

struct SummaryStore {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    Store store() const { return *Store::open(dir.path()); }

    // The capabilities and summary of model `name` with these layers and config.
    StoreModelSummary summary(const std::string& name, const std::vector<LayerSpec>& layers, const std::string& config) {
        b.add_model(name, layers, config);
        Store s = store();
        ModelName ref = *parse_model_reference(name);
        Result<ManifestView> view = view_manifest(s, ref);
        REQUIRE(view);
        Result<Model> model = open_store_model(s, ref);
        return summarize_store_model(*view, model ? &*model : nullptr);
    }
};

}  // namespace

TEST_CASE("read_go_template names the fields a template uses", "[store_summary]") {
    GoTemplateFacts f = read_go_template(
        "{{- if .System }}<<SYS>>{{ .System }}<</SYS>>{{ end }}\n[INST] {{ .Prompt }} [/INST]"
        "{{ range .Tools }}{{ .Function.Name }}{{ end }}{{/* .Hidden */}}{{ \".Quoted\" }}{{ $.Messages }}{{ $m.Role }}");
    CHECK(f.parsed);
    CHECK(f.vars == Strings{"function", "name", "prompt", "system", "tools"});
    CHECK(f.thinking_open.empty());

    GoTemplateFacts fim = read_go_template("{{ if .Suffix }}<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>{{ else }}{{ .Prompt }}{{ end }}");
    CHECK(fim.vars == Strings{"prompt", "suffix"});
    GoTemplateFacts chained = read_go_template("{{ if .A }}a{{ else if .B }}b{{ else with .C }}c{{ end }}{{ .D }}");
    CHECK(chained.parsed);
    CHECK(chained.vars == Strings{"a", "b", "c", "d"});
    GoTemplateFacts defined = read_go_template("{{ define \"x\" }}{{ .Inner }}{{ end }}{{ template \"x\" .Outer }}");
    CHECK(defined.vars == Strings{"inner", "outer"});

    for (const char* bad : {"{{ if .A }}open", "{{ end }}", "{{ .A ", "{{ \"unclosed }}", "{{ else }}"})
        CHECK_FALSE(read_go_template(bad).parsed);
}

TEST_CASE("read_go_template infers thinking tags as Ollama does", "[store_summary]") {
    GoTemplateFacts f = read_go_template(kThinkingTemplate);
    CHECK(f.parsed);
    CHECK(f.thinking_open == "<think>");
    CHECK(f.thinking_close == "</think>");
    // .Thinking outside a range over .Messages, or with no text around it, gives no tags.
    CHECK(read_go_template("<think>{{ .Thinking }}</think>").thinking_open.empty());
    CHECK(read_go_template("{{ range .Tools }}<think>{{ .Thinking }}</think>{{ end }}").thinking_open.empty());
    GoTemplateFacts bare = read_go_template("{{ range .Messages }}{{ .Thinking }}{{ end }}");
    CHECK(bare.thinking_open.empty());
    CHECK(bare.thinking_close.empty());
}

TEST_CASE("capabilities of a GGUF store model come from its GGUF, template and projector", "[store_summary]") {
    SummaryStore s;
    const std::string config = config_json("gguf", "llama", "F32");
    LayerSpec plain = s.b.blob(kModelMediaType, t1_bytes());
    CHECK(s.summary("plain", {plain}, config).capabilities == Strings{"completion"});

    LayerSpec embedding = s.b.blob(kModelMediaType, t1_plus_kvs(1, [](GgufBuilder& g) { g.kv_u32("llama.pooling_type", 1); }));
    CHECK(s.summary("embed", {embedding}, config).capabilities == Strings{"embedding"});

    LayerSpec vision = s.b.blob(kModelMediaType, t1_plus_kvs(1, [](GgufBuilder& g) { g.kv_u32("llama.vision.block_count", 2); }));
    LayerSpec tools = s.b.blob(kTemplateMediaType, "{{ if .Tools }}{{ .Tools }}{{ end }}{{ .Prompt }}");
    CHECK(s.summary("vision-tools", {vision, tools}, config).capabilities == Strings{"completion", "vision", "tools"});

    LayerSpec projector = s.b.blob("application/vnd.ollama.image.projector", t1_bytes());
    LayerSpec thinking = s.b.blob(kTemplateMediaType, kThinkingTemplate);
    CHECK(s.summary("projector", {plain, projector, thinking}, config).capabilities == Strings{"completion", "vision", "thinking"});

    LayerSpec fim = s.b.blob(kTemplateMediaType, "{{ .Prompt }}{{ .Suffix }}");
    CHECK(s.summary("fim", {plain, fim}, config).capabilities == Strings{"completion", "insert"});

    // The family and the parser add what they support; an unknown parser adds nothing.
    CHECK(s.summary("gptoss", {plain}, config_json("gguf", "gptoss", "MXFP4")).capabilities == Strings{"completion", "thinking"});
    const std::string harmony = R"({"model_format":"gguf","model_family":"x","parser":"harmony"})";
    CHECK(s.summary("harmony", {plain}, harmony).capabilities == Strings{"completion", "tools", "thinking"});
    const std::string unknown = R"({"model_format":"gguf","model_family":"x","parser":"no-such-parser"})";
    CHECK(s.summary("unknown-parser", {plain}, unknown).capabilities == Strings{"completion"});

    // A GGUF that does not read gives no completion, as Ollama's gguf.Open failing does.
    LayerSpec broken = s.b.blob(kModelMediaType, std::string("not a gguf at all"));
    CHECK(s.summary("broken", {broken}, config).capabilities.empty());
}

TEST_CASE("capabilities of a tensor-blob model come from its config", "[store_summary]") {
    SummaryStore s;
    LayerSpec thinking = s.b.blob(kTemplateMediaType, kThinkingTemplate);
    const std::string listed = R"({"model_format":"safetensors","capabilities":["completion","vision"]})";
    CHECK(s.summary("listed", {thinking}, listed).capabilities == Strings{"completion", "vision", "thinking"});
    const std::string image = R"({"model_format":"safetensors","capabilities":["completion","image"]})";
    CHECK(s.summary("image", {thinking}, image).capabilities == Strings{"image"});
    // A template that does not parse adds nothing.
    LayerSpec broken = s.b.blob(kTemplateMediaType, "{{ if .Tools }}");
    CHECK(s.summary("broken-template", {broken}, listed).capabilities == Strings{"completion", "vision"});
}

TEST_CASE("the summary takes config facts first and counts parameters from the logical tensors", "[store_summary]") {
    SummaryStore s;
    LayerSpec model = s.b.blob(kModelMediaType, t1_plus_kvs(1, [](GgufBuilder& g) { g.kv_u32("llama.context_length", 4096); }));
    LayerSpec system = s.b.blob(kSystemMediaType, "Be brief.");
    LayerSpec license_a = s.b.blob(kLicenseMediaType, "License A\nline 2");
    LayerSpec license_b = s.b.blob(kLicenseMediaType, "License B");
    StoreModelSummary sum = s.summary("tiny", {model, system, license_a, license_b}, config_json("gguf", "llama", "F32"));
    CHECK(sum.format == "gguf");
    CHECK(sum.family == "llama");
    CHECK(sum.parameters == std::optional<uint64_t>(32));
    CHECK(sum.parameter_size == "1.02K");
    CHECK(sum.quantization == "F32");
    CHECK(sum.context_length == std::optional<uint64_t>(4096));
    CHECK(sum.system_text == "Be brief.");
    CHECK(sum.template_text.empty());
    CHECK(sum.licenses == Strings{"License A\nline 2", "License B"});

    // Without config facts, the GGUF's architecture stands for the family.
    StoreModelSummary bare = s.summary("bare", {model}, "{}");
    CHECK(bare.family == "llama");
    CHECK(bare.quantization.empty());
    CHECK(bare.parameter_size.empty());
}
