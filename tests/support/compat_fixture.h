// OllamaGguf: builds small Ollama-format GGUF files for the compat rule tests, through our own
// writer (keys in the order added, or in Ollama's writer order on request; tensors zero-filled),
// and reads them back as a Model. Also the expectation helpers the compat tests share: resulting
// key order, one key's type and value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/compat/value_builders.h"
#include "mlens/model/model.h"
#include "test_paths.h"

namespace mlens::test {

// ggml type ids for OllamaGguf::tensor.
constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8;

// A list of expected names written as string literals.
inline std::vector<std::string> strings(std::initializer_list<const char*> v) { return {v.begin(), v.end()}; }

class OllamaGguf {
public:
    explicit OllamaGguf(std::string arch);

    OllamaGguf& kv(const std::string& key, Value v);
    OllamaGguf& str(const std::string& key, std::string v) { return kv(key, compat::value_string(std::move(v))); }
    OllamaGguf& u32(const std::string& key, uint32_t v) { return kv(key, Value::of_u32(v)); }
    OllamaGguf& f32(const std::string& key, float v) { return kv(key, compat::value_f32(v)); }
    OllamaGguf& boolean(const std::string& key, bool v) { return kv(key, compat::value_bool(v)); }
    // A tensor of ggml type `type` (default F32) and shape `ne` (GGUF order), zero bytes.
    OllamaGguf& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type = 0);

    // Puts the keys added so far in the order of Ollama's GGUF writer: sorted by the key with its
    // "<arch>." prefix removed.
    OllamaGguf& sorted_keys();

    // Writes the file into `dir` and reads it back (the Model keeps the file open).
    Model write(const TempDir& dir, const std::string& name = "model.gguf") const;

private:
    Model m_model;
};

// Keys of the upstream view of one side, in resulting order.
std::vector<std::string> result_keys(const Model& model, const compat::SidePlan& side);
// Keys as stored, in file order.
std::vector<std::string> stored_keys(const Model& model);
// The resulting order when `appended` keys were (re)written in that order and `removed` ones
// removed: the stored keys not in either list, then `appended`.
std::vector<std::string> keys_after(const Model& model, const std::vector<std::string>& appended,
                                    const std::vector<std::string>& removed = {});
// The resulting value of `key` in the upstream view, or a Value of type ARRAY without elements
// (which never equals anything) when absent.
Value result_value(const Model& model, const compat::SidePlan& side, const std::string& key);
// "TYPE value" of a Value, all elements, for exact comparisons in tests.
std::string typed(const Value& v);

// One resulting tensor: "name TYPE [ne...]" plus " hidden" and " op=<data op>" when they apply.
std::vector<std::string> result_tensors(const Model& model, const compat::SidePlan& side);

}  // namespace mlens::test
