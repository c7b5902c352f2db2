#include "mlens/quant/block_scales.h"

#include <ggml.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <functional>

#include "k_quant_scales.h"
#include "mlens/formats/ggml_type_table.h"
#include "mlens/util/analysis_memory.h"

namespace mlens {

namespace {

float half_at(const uint8_t* p) {
    ggml_fp16_t h;
    std::memcpy(&h, p, 2);
    return ggml_fp16_to_fp32(h);
}

float scale_at(const GgmlScaleField& f, const uint8_t* block) {
    const uint8_t* p = block + f.offset;
    switch (f.encoding) {
        case ScaleEncoding::f16:
            return half_at(p);
        case ScaleEncoding::f32: {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case ScaleEncoding::e8m0:
            return p[0] == 0xFF ? INFINITY : std::ldexp(1.0f, static_cast<int>(p[0]) - 127);
        case ScaleEncoding::ue4m3:
            break;
    }
    assert(false && "an encoding no series uses");
    return NAN;
}

// The series of a type's packed sub-block scales: names and values per entry. `d` and `dmin`
// are the block's first two scale fields.
std::vector<std::pair<const char*, uint64_t>> sub_series(SubScales layout) {
    switch (layout) {
        case SubScales::q2_k:
            return {{"sub_scale", 16}, {"sub_min", 16}};
        case SubScales::k4:
            return {{"sub_scale", 32}, {"sub_min", 32}};
        case SubScales::q3_k:
        case SubScales::q6_k:
            return {{"sub_scale", 16}};
        case SubScales::iq4_xs:
            return {{"sub_scale", 32}};
        case SubScales::none:
        case SubScales::packed:
            break;
    }
    return {};
}

// Appends one block's sub-block scales (and mins) to out[first], out[first + 1].
void read_sub_scales(SubScales layout, const uint8_t* s, float d, float dmin, std::vector<std::vector<float>>& out, size_t first) {
    switch (layout) {
        case SubScales::q2_k:
            for (int i = 0; i < 16; ++i) {
                out[first].push_back(d * static_cast<float>(s[i] & 0xF));
                out[first + 1].push_back(dmin * static_cast<float>(s[i] >> 4));
            }
            return;
        case SubScales::q3_k:
            for (int i = 0; i < 16; ++i) {
                // Low 4 bits from bytes 0..7 (nibble i/8), high 2 bits from bytes 8..11.
                int low = (s[i % 8] >> (4 * (i / 8))) & 0xF;
                int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
                out[first].push_back(d * static_cast<float>((low | (high << 4)) - 32));
            }
            return;
        case SubScales::k4:
            for (int j = 0; j < 8; ++j) {
                int sc, m;
                k_quant_scale_min(s, j, sc, m);
                out[first].push_back(d * static_cast<float>(sc));
                out[first + 1].push_back(dmin * static_cast<float>(m));
            }
            return;
        case SubScales::q6_k:
            for (int i = 0; i < 16; ++i) out[first].push_back(d * static_cast<float>(static_cast<int8_t>(s[i])));
            return;
        case SubScales::iq4_xs: {  // scales_h (u16), scales_l[4]
            const unsigned h = s[0] | (s[1] << 8);
            for (int ib = 0; ib < 8; ++ib) {
                int ls = ((s[2 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((h >> (2 * ib)) & 3) << 4);
                out[first].push_back(d * static_cast<float>(ls - 32));
            }
            return;
        }
        case SubScales::none:
        case SubScales::packed:
            return;
    }
}

// The series one block type's scales give, from its row of the type table.
struct BlockLayout {
    const GgmlTypeRow* row = nullptr;
    std::vector<std::pair<const char*, uint64_t>> series;  // name, values per entry

    explicit BlockLayout(const GgmlTypeRow& r) : row(&r) {
        for (const GgmlScaleField& f : r.scales()) series.push_back({f.name, f.covers});
        for (const auto& s : sub_series(r.sub_scales)) series.push_back(s);
    }
    void read(const uint8_t* block, std::vector<std::vector<float>>& out) const {
        const auto fields = row->scales();
        float value[2] = {};
        for (size_t i = 0; i < fields.size(); ++i) {
            value[i] = scale_at(fields[i], block);
            out[i].push_back(value[i]);
        }
        read_sub_scales(row->sub_scales, block + row->sub_scales_offset, value[0], value[1], out, fields.size());
    }
};

std::optional<BlockLayout> layout_for(uint32_t type) {
    const GgmlTypeRow* row = ggml_type_row(type);
    if (!row || !row->scale_series) return std::nullopt;
    return BlockLayout(*row);
}

constexpr uint64_t kChunkBlocks = 1u << 14;

// Every `stride`-th of `blocks` blocks, so that `entries_per_block` entries of each stay within
// kMaxSeriesEntries.
uint64_t sample_stride(uint64_t blocks, uint64_t entries_per_block) {
    const uint64_t most = std::max<uint64_t>(1, kMaxSeriesEntries / std::max<uint64_t>(entries_per_block, 1));
    return std::max<uint64_t>(1, (blocks + most - 1) / most);
}

// Calls read(first, n) for every stride-th of `blocks` blocks: runs of kChunkBlocks consecutive
// blocks when every block is taken, else one block at a time.
Status for_each_sample(uint64_t blocks, uint64_t stride, JobContext* job, const std::function<Status(uint64_t, uint64_t)>& read) {
    const uint64_t sampled = (blocks + stride - 1) / stride, run = stride == 1 ? kChunkBlocks : 1;
    for (uint64_t s = 0; s < sampled; s += run) {
        if (job_cancelled(job)) return cancelled_error();
        const uint64_t n = std::min(run, sampled - s);
        if (Status st = read(s * stride, n); !st) return st;
        if (s % kChunkBlocks < run) job_report(job, static_cast<double>(s + n) / static_cast<double>(sampled));
    }
    job_report(job, 1.0);
    return ok_status();
}

Result<BlockScales> mlx_scales(const TensorView& view, JobContext* job, BlockScales r) {
    const uint64_t groups = view.size() / view.block_length();
    const uint64_t stride = sample_stride(groups, 1), sampled = (groups + stride - 1) / stride;
    const bool affine = view.info().quant->mode == "affine";
    r.series.push_back({"scale", view.block_length(), std::vector<float>(sampled), stride});
    if (affine) r.series.push_back({"bias", view.block_length(), std::vector<float>(sampled), stride});
    Status s = for_each_sample(groups, stride, job, [&](uint64_t first, uint64_t n) {
        const uint64_t at = first / stride;
        return view.read_group_params(first, n, r.series[0].values.data() + at, affine ? r.series[1].values.data() + at : nullptr);
    });
    if (!s) return s.error();
    return r;
}

}  // namespace

const ScaleSeries* BlockScales::find(const std::string& name) const {
    for (const ScaleSeries& s : series)
        if (s.name == name) return &s;
    return nullptr;
}

Result<BlockScales> block_scales(const TensorView& view, JobContext* job) {
    BlockScales r;
    r.type = view.type_name();
    if (view.kind() == TensorView::Kind::mlx) return mlx_scales(view, job, std::move(r));
    auto layout = view.kind() == TensorView::Kind::ggml ? layout_for(view.info().type.id) : std::nullopt;
    if (!layout)
        return Error{ErrorCode::E_UNSUPPORTED_TYPE, view.info().name, std::nullopt,
                     "type " + r.type + " stores no block scales decoded here"};
    std::vector<std::vector<float>> out(layout->series.size());
    const uint64_t blocks = view.size() / view.block_length();
    uint64_t entries_per_block = 1;
    for (const auto& series : layout->series) entries_per_block = std::max(entries_per_block, view.block_length() / series.second);
    const uint64_t stride = sample_stride(blocks, entries_per_block);
    std::vector<uint8_t> bytes;
    Status s = for_each_sample(blocks, stride, job, [&](uint64_t first, uint64_t n) {
        bytes.resize(n * view.block_bytes());
        if (Status st = view.read_blocks(first, n, bytes.data()); !st) return st;
        for (uint64_t b = 0; b < n; ++b) layout->read(bytes.data() + b * view.block_bytes(), out);
        return ok_status();
    });
    if (!s) return s.error();
    for (size_t i = 0; i < out.size(); ++i)
        r.series.push_back({layout->series[i].first, layout->series[i].second, std::move(out[i]), stride});
    return r;
}

}  // namespace mlens
