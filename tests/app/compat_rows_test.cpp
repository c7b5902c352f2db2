// The Compat panel's row model on small in-memory Ollama-format models (the plan reads metadata
// and tensor infos only): AMBIGUOUS notes, removed keys and keys the plan created and removed again.
#include <catch2/catch.hpp>

#include <algorithm>

#include "mlens/compat/value_builders.h"
#include "model_parts.h"
#include "state/compat_rows.h"

using namespace mlens;
using mlens::compat::EditKind;

namespace {

// A GGUF Model with F32 tensors of the given shapes; no file behind it.
class MemoryModel {
public:
    explicit MemoryModel(const std::string& arch) {
        m_model.format = Format::gguf;
        kv("general.architecture", compat::value_string(arch));
    }
    MemoryModel& kv(const std::string& key, Value v) {
        test::add_metadata(m_model, key, std::move(v));
        return *this;
    }
    MemoryModel& tensor(const std::string& name, std::vector<uint64_t> ne) {
        m_model.tensors.push_back(test::tensor_info(name, 0, std::move(ne)));
        return *this;
    }
    const Model& model() const { return m_model; }

private:
    Model m_model;
};

const CompatRow* find_row(const std::vector<CompatRow>& rows, const std::string& name) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const CompatRow& r) { return r.left_name == name || r.right_name == name; });
    return it == rows.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("compat rows mark AMBIGUOUS notes", "[gui-compat]") {
    MemoryModel m("gemma3n");
    m.kv("tokenizer.ggml.model", compat::value_string("gemma"))
        .kv("tokenizer.ggml.tokens", compat::array_strings({"<pad>", "a", "b"}))
        .tensor("token_embd.weight", {4, 3})
        .tensor("per_layer_token_embd.weight", {4, 2});
    CompatView v = build_compat_view(m.model()).value();
    const CompatRow* model = find_row(v.text.metadata, "tokenizer.ggml.model");
    REQUIRE(model);
    CHECK(model->ambiguous);
    CHECK(model->kind == EditKind::changed);
    CHECK(model->note.starts_with("AMBIGUOUS:"));
    const CompatRow* embd = find_row(v.text.tensors, "token_embd.weight");
    REQUIRE(embd);
    CHECK(embd->kind == EditKind::retyped);
    CHECK_FALSE(embd->ambiguous);
    CHECK(embd->left_value == "4 \xC3\x97 3");
    CHECK(embd->right_value == "4 \xC3\x97 2");
}

TEST_CASE("compat rows show removed keys and keys created then removed", "[gui-compat]") {
    MemoryModel m("gemma3");
    m.kv("gemma3.embedding_length", Value::of_u32(8))
        .kv("gemma3.attention.causal", compat::value_bool(false))
        .tensor("dense.0.weight", {8, 16})
        .tensor("dense.1.weight", {16, 8})
        .tensor("token_embd.weight", {8, 4});
    CompatView v = build_compat_view(m.model()).value();
    REQUIRE(v.plan.text.handlers.front() == "handle_embeddinggemma");
    // The prefix copy creates gemma-embedding.attention.causal; the handler then removes it.
    const CompatRow* gone = find_row(v.text.metadata, "gemma-embedding.attention.causal");
    REQUIRE(gone);
    CHECK(gone->kind == EditKind::removed);
    CHECK(gone->left_name.empty());
    CHECK(gone->has(EditKind::injected));
    CHECK(gone->has(EditKind::removed));
    const CompatRow* kept = find_row(v.text.metadata, "gemma3.attention.causal");
    REQUIRE(kept);
    CHECK_FALSE(kept->changed());
    const CompatRow* dense = find_row(v.text.tensors, "dense.0.weight");
    REQUIRE(dense);
    CHECK(dense->kind == EditKind::renamed);
    CHECK(dense->right_name == "dense_2.weight");
}
