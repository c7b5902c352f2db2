// The statistics `llama-imatrix --show-statistics` of the pinned llama.cpp prints for an importance
// matrix (tools/imatrix/imatrix.cpp), computed the way it computes them, so every printed figure
// agrees to its printed precision.
//
// Contract (llama-imatrix's steps, in float where it uses float and in its order):
//  - The stored sums and counts are loaded as llama-imatrix loads them: GGUF sums as stored with
//    each expert's count truncated to an integer; a legacy file's sums times the chunk size and its
//    ncall times the chunk size (llama-imatrix's default 512 = its -c 512 over 1 sequence).
//  - Per entry, the activations are sum / count for every column of every expert whose count is
//    not 0, expert by expert (an entry whose experts all have count 0 has no statistics and is
//    listed in `without_activations`). Σ(Act²) is their float sum, min, max, μ = Σ / N,
//    σ = sqrt(max(0, Σa²/N − μ²)) with Σa² the float inner product, active = 1 − (count of
//    |a| ≤ 1e-5) / N, entropy = −Σ p·log2 p over p = a / Σ (when Σ > 0, terms with p > 0),
//    E(norm) = 100·entropy / log2 N, ZD = (count of (a − μ) / σ > 1) / N (0 when σ is 0).
//  - CosSim: for a tensor named "blk.N.…", the cosine of its stored sums (scaled as loaded) with
//    those of the same name in block N−1, in float; 0 without such a tensor.
//  - The layer and the tensor kind of a name as llama-imatrix splits it: the part after "blk",
//    "-" when there is none; the part before "weight", the whole name when there is none.
//  - Order: llama-imatrix's, by kind, then by Σ(Act²) descending (then by name, which it leaves
//    open). Per layer (block tensors only, layers ascending): μΣ(Act²) = Σ N·Σ(Act²) / Σ N,
//    μZD = Σ N·ZD / Σ N, μCosSim = Σ N·CosSim / Σ N, summed in float in that order.
//  - Sums are read through read_sums (imatrix.h): a value that is NaN, infinite or negative
//    fails with its E_IMATRIX_VALUE. Cancel stops between entries (E_CANCELLED).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/imatrix.h"
#include "mlens/result.h"

namespace mlens {

struct ImatrixTensorStatistics {
    std::string tensor;  // the entry's name
    std::string layer;  // "12", or "-" for a tensor outside the blocks
    std::string kind;  // "attn_q", or the whole name
    float sum = 0;  // Σ(Act²)
    float min = 0, max = 0, mean = 0, stddev = 0;
    float active = 0;  // share of activations above 1e-5
    int32_t elements = 0;  // N
    float entropy = 0;  // bits
    float entropy_norm = 0;  // percent of log2 N
    float zd = 0;  // share of activations more than one σ above μ
    float cossim = 0;  // with the same tensor in the previous block; 0 without one
};

struct ImatrixLayerStatistics {
    int32_t layer = 0;
    float mean_sum = 0;  // μΣ(Act²)
    float zd = 0;  // μZD (a share)
    float cossim = 0;  // μCosSim
};

struct ImatrixStatistics {
    std::vector<ImatrixTensorStatistics> tensors;  // llama-imatrix's order
    std::vector<ImatrixLayerStatistics> layers;  // ascending
    std::vector<std::string> without_activations;  // entries whose every count is 0
};

// llama-imatrix's chunk size for a legacy file when run with its defaults (-c 512, one sequence).
constexpr int32_t kImatrixDefaultChunkSize = 512;

Result<ImatrixStatistics> imatrix_statistics(const Imatrix& imatrix, JobContext* job = nullptr);

}  // namespace mlens
