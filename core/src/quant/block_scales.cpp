#include "mlens/quant/block_scales.h"

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "k_quant_scales.h"
#include "mlens/util/analysis_memory.h"

namespace mlens {

namespace {

float half_at(const uint8_t* p) {
    ggml_fp16_t h;
    std::memcpy(&h, p, 2);
    return ggml_fp16_to_fp32(h);
}

// How one block type's scales are laid out: which series it has and how to read one block.
struct BlockLayout {
    std::vector<std::pair<const char*, uint64_t>> series;  // name, values per entry
    std::function<void(const uint8_t* block, std::vector<std::vector<float>>& out)> read;
};

std::optional<BlockLayout> layout_for(uint32_t type) {
    auto d_at = [](size_t offset) {
        return [offset](const uint8_t* b, std::vector<std::vector<float>>& o) { o[0].push_back(half_at(b + offset)); };
    };
    switch (type) {
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_IQ4_NL:
            return BlockLayout{{{"d", 32}}, d_at(0)};
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_1:
            return BlockLayout{{{"d", 32}, {"m", 32}}, [](const uint8_t* b, auto& o) {
                                   o[0].push_back(half_at(b));
                                   o[1].push_back(half_at(b + 2));
                               }};
        case GGML_TYPE_Q8_K:
            return BlockLayout{{{"d", 256}}, [](const uint8_t* b, auto& o) {
                                   float d;
                                   std::memcpy(&d, b, 4);
                                   o[0].push_back(d);
                               }};
        case GGML_TYPE_Q2_K:  // scales[16], qs[64], d, dmin
            return BlockLayout{{{"d", 256}, {"dmin", 256}, {"sub_scale", 16}, {"sub_min", 16}}, [](const uint8_t* b, auto& o) {
                                   const float d = half_at(b + 80), dmin = half_at(b + 82);
                                   o[0].push_back(d);
                                   o[1].push_back(dmin);
                                   for (int i = 0; i < 16; ++i) {
                                       o[2].push_back(d * static_cast<float>(b[i] & 0xF));
                                       o[3].push_back(dmin * static_cast<float>(b[i] >> 4));
                                   }
                               }};
        case GGML_TYPE_Q3_K:  // hmask[32], qs[64], scales[12], d
            return BlockLayout{{{"d", 256}, {"sub_scale", 16}}, [](const uint8_t* b, auto& o) {
                                   const float d = half_at(b + 108);
                                   const uint8_t* s = b + 96;
                                   o[0].push_back(d);
                                   for (int i = 0; i < 16; ++i) {
                                       // Low 4 bits from bytes 0..7 (nibble i/8), high 2 bits from bytes 8..11.
                                       int low = (s[i % 8] >> (4 * (i / 8))) & 0xF;
                                       int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
                                       o[1].push_back(d * static_cast<float>((low | (high << 4)) - 32));
                                   }
                               }};
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:  // d, dmin, scales[12], ...
            return BlockLayout{{{"d", 256}, {"dmin", 256}, {"sub_scale", 32}, {"sub_min", 32}}, [](const uint8_t* b, auto& o) {
                                   const float d = half_at(b), dmin = half_at(b + 2);
                                   o[0].push_back(d);
                                   o[1].push_back(dmin);
                                   for (int j = 0; j < 8; ++j) {
                                       int sc, m;
                                       k_quant_scale_min(b + 4, j, sc, m);
                                       o[2].push_back(d * static_cast<float>(sc));
                                       o[3].push_back(dmin * static_cast<float>(m));
                                   }
                               }};
        case GGML_TYPE_Q6_K:  // ql[128], qh[64], scales[16] (int8), d
            return BlockLayout{{{"d", 256}, {"sub_scale", 16}}, [](const uint8_t* b, auto& o) {
                                   const float d = half_at(b + 208);
                                   o[0].push_back(d);
                                   for (int i = 0; i < 16; ++i) o[1].push_back(d * static_cast<float>(static_cast<int8_t>(b[192 + i])));
                               }};
        case GGML_TYPE_IQ4_XS:  // d, scales_h (u16), scales_l[4], qs[128]
            return BlockLayout{{{"d", 256}, {"sub_scale", 32}}, [](const uint8_t* b, auto& o) {
                                   const float d = half_at(b);
                                   const unsigned h = b[2] | (b[3] << 8);
                                   o[0].push_back(d);
                                   for (int ib = 0; ib < 8; ++ib) {
                                       int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((h >> (2 * ib)) & 3) << 4);
                                       o[1].push_back(d * static_cast<float>(ls - 32));
                                   }
                               }};
        case GGML_TYPE_MXFP4:
            return BlockLayout{{{"scale", 32}}, [](const uint8_t* b, auto& o) {
                                   o[0].push_back(b[0] == 0xFF ? INFINITY : std::ldexp(1.0f, static_cast<int>(b[0]) - 127));
                               }};
        default:
            return std::nullopt;
    }
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
