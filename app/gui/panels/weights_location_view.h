// WeightsLocationView: the "Row · block" tab of the Weights panel — one row of the shown tensor
// (or expert slice) at the place a Health finding names (a "weights:...#row=R,block=B" link,
// panel_links.h): the row's RMS, max |x| and non-finite count (the row series' entries for that
// row), then its blocks as a table (first column, min, max, RMS, NaN/Inf) scrolled to the named
// block and highlighted, then that block's values.
//
// Contract:
//  - read_row_blocks decodes row `row` of the view (TensorView, sliced to `expert` when set) and
//    summarises it per block of the tensor's type (block_length(); element types use blocks of
//    kElementBlock values): the same values the Weights histogram counts. A row beyond the view
//    gives E_RANGE; cancellation E_CANCELLED.
//  - follow() names the place; when it differs from the one shown, the view starts one job
//    (JobHandle<RowBlocks>) and takes its result on the main thread at a later draw; a new place
//    cancels the running job. A click on another block highlights that one instead.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fonts.h"
#include "mlens/model/model.h"
#include "state/job_runner.h"

namespace mlens {

inline constexpr uint64_t kElementBlock = 32;

struct BlockSummary {
    float min = 0, max = 0;  // over finite values (0 when there are none)
    double rms = 0;  // over finite values
    uint64_t nonfinite = 0;  // NaN and ±Inf
};

struct RowBlocks {
    uint64_t row = 0;
    uint64_t rows = 0;  // rows of the view
    uint64_t block_length = 1;  // values per listed block
    uint64_t type_block_length = 1;  // the type's block (a finding's block counts these)
    double rms = 0;
    float absmax = 0;
    uint64_t nonfinite = 0;
    std::vector<float> values;  // the whole row
    std::vector<BlockSummary> blocks;
};

struct RowPlace {
    std::shared_ptr<const Model> model;
    size_t tensor = 0;
    std::optional<uint64_t> expert;
    uint64_t row = 0;
    std::optional<uint64_t> block;  // the type's block within the row
    bool operator==(const RowPlace& o) const {
        return model == o.model && tensor == o.tensor && expert == o.expert && row == o.row && block == o.block;
    }
};

Result<RowBlocks> read_row_blocks(const Model& model, size_t tensor, std::optional<uint64_t> expert, uint64_t row,
                                  JobContext* job = nullptr);

class WeightsLocationView {
public:
    void follow(JobRunner& jobs, RowPlace place);
    void draw(const FontSet& fonts);

    // For tests: the decoded row, the highlighted listed block, and whether a job runs.
    const RowBlocks* row() const { return m_row.get(); }
    std::optional<uint64_t> highlighted() const { return m_highlight; }
    bool running() const { return static_cast<bool>(m_job); }

private:
    void poll();
    void blocks_table();
    void block_values(const FontSet& fonts);

    std::optional<RowPlace> m_place;
    JobHandle<RowBlocks> m_job;
    std::shared_ptr<RowBlocks> m_row;
    std::string m_error;
    std::optional<uint64_t> m_highlight;  // listed block
    bool m_scroll = false;  // scroll the table to the highlighted block once
};

}  // namespace mlens
