// The hyperparameter combinations on which the pinned llama.cpp (0.5.0) aborts the process (a
// GGML_ASSERT) instead of refusing the file: one table, each row naming the keys it reads, the
// assert as the source writes it and where it is, so `mlens check` can warn before anything loads.
// The assert texts, their file:line and the architectures whose graph builder holds an assert come
// from the generated requirements (llama_requirements.h); what makes a row trip is written here.
//
// Contract:
//  - llama_hparams_of reads the keys llama.cpp's load_hparams reads (`<arch>.` + suffix), with its
//    defaults for absent keys: expert_count, expert_group_count, expert_group_used_count and
//    nextn_predict_layers 0; expert_used_count 0, or the largest element of a per-layer array.
//    Head counts, lengths, epsilons and the rope scaling type are read when scalar (strings for
//    the type) and stay unset otherwise.
//  - llama_asserts() lists the rows; row.trips(h) is true when llama.cpp would hit that assert.
//  - check_llama_asserts adds one W_LLAMA_ABORT warning per row that trips, on the entry of the
//    first of the row's keys present in the file, naming the keys, their values, the assert and
//    where it is. A file without general.architecture is not checked.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "mlens/model/model.h"

namespace mlens {

struct LlamaHparams {
    std::string arch;
    std::optional<int64_t> n_layer;  // block_count
    int64_t n_layer_nextn = 0;
    int64_t n_expert = 0, n_expert_used_max = 0, n_expert_groups = 0, n_group_used = 0;
    std::optional<int64_t> n_embd, n_head, n_head_kv, key_length, value_length, n_rot;
    std::optional<double> rms_eps, norm_eps;
    std::optional<std::string> rope_scaling;
};

struct LlamaAssert {
    std::array<const char*, 2> keys;  // key suffixes after "<arch>."; the second may be nullptr
    const char* assert_text;  // as the source writes it
    const char* function;  // where the generated assert sites hold it (llama_requirements.h); null: the graph builder
    const char* note;  // what else to say about where it is, or ""
    bool (*trips)(const LlamaHparams&);
};

LlamaHparams llama_hparams_of(const Model& model);
std::span<const LlamaAssert> llama_asserts();
// file:line (function) of the row's assert in the pinned source, from the generated assert sites,
// with the row's note; for a graph builder assert, the src/models/ file of the arch's graph builder.
std::string llama_assert_where(const LlamaAssert& row, const std::string& arch);
void check_llama_asserts(Model& model);

}  // namespace mlens
