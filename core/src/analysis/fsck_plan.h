// The plan of an fsck scan (fsck.h): one Plan per logical tensor, the row items it is read in,
// and the merged per-tensor results. Internal to core/analysis.
//
// Contract:
//  - plan_tensor opens a logical tensor's TensorView and decides how it is read: F32/F16/BF16 on
//    stored bits, Q8_0 on its int8 codes (a value is d × code: with d finite and non-zero it is zero
//    exactly where its code is, so only blocks whose d is NaN or Inf are decoded), other ggml block
//    types decoded from the same bytes, everything else (MLX, other
//    element types) through TensorView::read; items of whole rows never cross an expert, rows too
//    long for one item are read in pieces of whole blocks.
//  - scan_item reads one item once, scans it, and merges what it found into its Plan under
//    Scan::mutex. A read that fails becomes an F_READ_FAILED finding; scan_item itself never fails.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "fsck_scan.h"
#include "mlens/model/logical_tensors.h"
#include "mlens/quant/tensor_view.h"

namespace mlens::fsck_detail {

// An item reads about this many stored bytes and decodes at most kItemValues values, so two
// threads hold a few MiB whatever a tensor claims (analysis_memory.h).
constexpr uint64_t kItemBytes = 1u << 20;
constexpr uint64_t kItemValues = 1u << 18;

enum class Path { f32_bits, f16_bits, bf16_bits, q8_0_codes, ggml_blocks, decoded };

struct ExpertAcc {
    uint64_t zero_rows = 0;
    std::vector<FsckLocation> zero_locations;
    uint64_t hash = 0;
};

struct Plan {
    const LogicalTensor* logical = nullptr;
    std::optional<TensorView> view;
    Path path = Path::decoded;
    uint64_t row_len = 1, rows = 0, experts = 1, rows_per_expert = 0, rows_per_item = 1, piece = 1;
    bool stacked = false, check_beyond = false, track_columns = false, mlx = false;
    // Only the whole rows present of a tensor the end of its file cuts: no verdict on the whole
    // tensor (all zero, duplicate, zero columns) is drawn from them.
    bool cut = false;
    std::optional<uint64_t> expert_number;  // a per-expert tensor of an Ollama group
    uint32_t file = 0;
    uint64_t data_offset = 0;
    uint64_t unit_elements = 1, unit_bytes = 4;  // stored bytes per run of elements
    std::vector<GgmlScaleField> scales;
    // MLX scale and bias companions: entry index, bytes per value, least normal magnitude.
    std::optional<size_t> scale_entry, bias_entry;
    uint64_t scale_width = 0, bias_width = 0;
    float scale_min_normal = 0;
    // Merged results (under Scan::mutex). `columns` (which columns held a non-zero value) lives
    // only while the plan's items are being scanned: allocated when the first one is merged and,
    // when the last one is, turned into `zero_columns` and freed, so a file of many wide tensors
    // holds the flags of the few tensors in flight, not of all of them.
    FindingSet findings;
    std::vector<ExpertAcc> expert_acc;
    std::vector<uint8_t> columns;
    Accumulator zero_columns;
    uint64_t items_left = 0;
    uint64_t hash = 0;

    std::optional<uint64_t> offset_of(uint64_t element) const { return data_offset + element / unit_elements * unit_bytes; }
    FsckLocation location(uint64_t expert, uint64_t row_in_expert, uint64_t column) const {
        FsckLocation l;
        const uint64_t global_row = expert * rows_per_expert + row_in_expert;
        l.element = global_row * row_len + column;
        if (stacked)
            l.expert = expert;
        else if (expert_number)
            l.expert = expert_number;
        l.row = row_in_expert;
        l.column = column;
        l.block = column / view->block_length();
        l.file = file;
        l.offset = offset_of(l.element);
        return l;
    }
};

struct Item {
    size_t plan = 0;
    uint64_t expert = 0, row_begin = 0, row_end = 0;
};

struct Scan {
    const Model& model;
    std::vector<Plan> plans;
    std::vector<Item> items;
    std::mutex mutex;
    std::atomic<uint64_t> values{0}, bytes{0};
};

Result<Plan> plan_tensor(const Model& model, const LogicalTensor& lt);
Status scan_item(Scan& scan, const Item& item);

}  // namespace mlens::fsck_detail
