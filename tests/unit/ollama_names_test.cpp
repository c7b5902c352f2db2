// The store's grammars on their own: blob digests (O01, O02), blob file names in blobs/ (O18),
// manifest name parts (O10) and model references.
#include <catch2/catch.hpp>

#include "mlens/ollama/digest.h"
#include "mlens/ollama/model_name.h"

using namespace mlens;

namespace {

const std::string kHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("digests: exactly sha256, a separator and 64 lowercase hex digits", "[ollama]") {
    auto colon = parse_blob_digest("sha256:" + kHex);
    REQUIRE(colon);
    CHECK(colon->hex == kHex);
    CHECK(colon->colon);
    CHECK(blob_file_name(*colon) == "sha256-" + kHex);
    CHECK(legacy_blob_file_name(*colon) == "sha256:" + kHex);
    auto dash = parse_blob_digest("sha256-" + kHex);
    REQUIRE(dash);
    CHECK(!dash->colon);
    CHECK(blob_file_name(*dash) == "sha256-" + kHex);
    CHECK(dash->text() == "sha256:" + kHex);
}

TEST_CASE("O01/O02 digests outside the grammar are refused", "[ollama]") {
    std::string upper = kHex;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::vector<std::string> bad = {
        "sha256:../../../../etc/ld.so.preload",
        "sha256-../x",
        "../sha256-" + kHex,
        "sha256:" + kHex + "/../../x",
        "sha256:" + kHex.substr(1),  // 63 digits
        "sha256:" + kHex + "0",  // 65 digits
        "sha256:" + upper,
        "sha512:" + kHex + kHex,
        "sha256:",
        "sha256:" + kHex + "\n",
        "sha256:" + kHex + " ",
        "sha256:" + kHex.substr(0, 32) + std::string(1, '\0') + kHex.substr(33),
        "sha256:" + kHex.substr(0, 61) + "\xEF\xBC\x90",  // fullwidth digit zero, 71 bytes in all
        "sha256:" + kHex.substr(0, 62) + "\xD9\xA0",  // Arabic-Indic digit zero, 71 bytes
        "SHA256:" + kHex,
        "sha256_" + kHex,
        "",
    };
    for (const std::string& d : bad) {
        INFO("digest of " << d.size() << " bytes");
        CHECK(!parse_blob_digest(d));
    }
}

TEST_CASE("O18 blob file names are classified, leftovers labelled", "[ollama]") {
    CHECK(classify_blob_file("sha256-" + kHex).kind == BlobFileKind::blob);
    for (const std::string name : {"sha256-" + kHex, "sha256:" + kHex, "sha256-" + kHex + "-partial", "sha256-" + kHex + "-partial-3"})
        CHECK(classify_blob_file(name).hex_in(name) == kHex);
    for (const std::string name : {std::string("sha256-123456789"), std::string("README"), "sha256-" + kHex + ".tmp"}) CHECK(classify_blob_file(name).hex_in(name).empty());
    CHECK(classify_blob_file("sha256-" + kHex + "-partial").kind == BlobFileKind::partial);
    CHECK(classify_blob_file("sha256-" + kHex + "-partial-0").kind == BlobFileKind::partial_part);
    CHECK(classify_blob_file("sha256-" + kHex + "-partial-17").kind == BlobFileKind::partial_part);
    CHECK(classify_blob_file("sha256-" + kHex + "-partial-").kind == BlobFileKind::other);
    CHECK(classify_blob_file("sha256-" + kHex + ".tmp").kind == BlobFileKind::other);
    CHECK(classify_blob_file("sha256-123456789").kind == BlobFileKind::temporary);
    CHECK(classify_blob_file("sha256:" + kHex).kind == BlobFileKind::legacy_name);
    CHECK(classify_blob_file("README").kind == BlobFileKind::other);
    CHECK(classify_blob_file("sha256-").kind == BlobFileKind::other);
    CHECK(std::string(blob_file_kind_name(BlobFileKind::partial)) == "partial download");
}

TEST_CASE("O10 name parts follow the grammar", "[ollama]") {
    CHECK(name_part_valid(NamePart::host, "registry.ollama.ai"));
    CHECK(name_part_valid(NamePart::host, "localhost:11434"));
    CHECK(name_part_valid(NamePart::name_space, "library"));
    CHECK(name_part_valid(NamePart::name_space, "my-org_1"));
    CHECK(name_part_valid(NamePart::model, "gemma3"));
    CHECK(name_part_valid(NamePart::model, "qwen3.5"));
    CHECK(name_part_valid(NamePart::tag, "35b-a3b-q4_K_M"));
    CHECK(name_part_valid(NamePart::tag, "latest"));
    CHECK(name_part_valid(NamePart::host, std::string(350, 'h')));
    CHECK(name_part_valid(NamePart::model, std::string(80, 'm')));

    CHECK(!name_part_valid(NamePart::model, "-evil"));
    CHECK(!name_part_valid(NamePart::model, ".hidden"));
    CHECK(!name_part_valid(NamePart::model, "sp ace"));
    CHECK(!name_part_valid(NamePart::model,
                           "m\xC3\xB6"
                           "del"));
    CHECK(!name_part_valid(NamePart::tag, "lat$est"));
    CHECK(!name_part_valid(NamePart::name_space, std::string(81, 'n')));
    CHECK(!name_part_valid(NamePart::model, std::string(81, 'm')));
    CHECK(!name_part_valid(NamePart::host, std::string(351, 'h')));
    CHECK(!name_part_valid(NamePart::name_space, "na:me"));
    CHECK(!name_part_valid(NamePart::name_space, "na.me"));
    CHECK(!name_part_valid(NamePart::host, "-host"));
    CHECK(!name_part_valid(NamePart::model, ""));
    CHECK(!name_part_valid(NamePart::model, ".."));
    CHECK(!name_part_valid(NamePart::model, "a/b"));
    CHECK(!name_part_valid(NamePart::tag, "a\\b"));
    CHECK(!name_part_valid(NamePart::tag, std::string("a\0b", 3)));
}

TEST_CASE("non-portable but valid names are told apart", "[ollama]") {
    CHECK(nonportable_reason("CON"));
    CHECK(nonportable_reason("con.txt"));
    CHECK(nonportable_reason("com1"));
    CHECK(nonportable_reason("LPT9"));
    CHECK(nonportable_reason("name."));
    CHECK(!nonportable_reason("console"));
    CHECK(!nonportable_reason("com10"));
    CHECK(!nonportable_reason("gemma3"));
}

TEST_CASE("model references parse like Ollama's names, with defaults", "[ollama]") {
    struct Case {
        const char* text;
        const char* host;
        const char* name_space;
        const char* model;
        const char* tag;
        const char* display;
    };
    const Case cases[] = {
        {"gemma3:4b", "registry.ollama.ai", "library", "gemma3", "4b", "gemma3:4b"},
        {"tiny", "registry.ollama.ai", "library", "tiny", "latest", "tiny:latest"},
        {"someone/model:q8", "registry.ollama.ai", "someone", "model", "q8", "someone/model:q8"},
        {"hf.co/org/repo:Q4_K_M", "hf.co", "org", "repo", "Q4_K_M", "hf.co/org/repo:Q4_K_M"},
        {"localhost:5000/ns/m", "localhost:5000", "ns", "m", "latest", "localhost:5000/ns/m:latest"},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        auto name = parse_model_reference(c.text);
        REQUIRE(name);
        CHECK(name->host == c.host);
        CHECK(name->name_space == c.name_space);
        CHECK(name->model == c.model);
        CHECK(name->tag == c.tag);
        CHECK(name->display() == c.display);
    }
    auto short_name = parse_model_reference("gemma3:4b");
    REQUIRE(short_name);
    CHECK(short_name->full() == "registry.ollama.ai/library/gemma3:4b");
    CHECK(short_name->manifest_path() == "manifests/registry.ollama.ai/library/gemma3/4b");

    for (const char* bad : {"a/b/c/d", "../x", "x:", ":tag", "a//b", "m:lat$est", "/abs"}) {
        INFO(bad);
        auto r = parse_model_reference(bad);
        REQUIRE(!r);
        CHECK(r.error().code == ErrorCode::E_BAD_NAME);
    }
}
