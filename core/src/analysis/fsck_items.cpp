#include <ggml.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "fsck_plan.h"
#include "util/thread_scratch.h"

namespace mlens::fsck_detail {

namespace {

bool is_stacked_experts(const Model& model, const LogicalTensor& lt, const TensorView& view) {
    if (view.shape().size() != 3 || view.shape()[2] < 2) return false;
    if (lt.group && !lt.expert) return true;
    return model.tensors[lt.index].name.find("_exps") != std::string::npos;
}

float min_normal_of(const std::string& type_name, const std::string& mode) {
    if (mode == "nvfp4") return 0.015625f;  // E4M3: 2^-6
    if (mode == "mxfp4" || mode == "mxfp8") return 0.0f;
    if (type_name == "F16") return 6.103515625e-05f;
    return 1.17549435e-38f;
}

}  // namespace

Result<Plan> plan_tensor(const Model& model, const LogicalTensor& lt) {
    auto view = TensorView::open(model, lt.index);
    if (!view) return view.error();
    Plan p;
    p.logical = &lt;
    const TensorInfo& t = model.tensors[lt.index];
    const std::string& type = t.type.name;
    p.file = t.file;
    p.data_offset = t.data_offset;
    p.row_len = std::max<uint64_t>(1, view->row_length());
    p.rows = view->size() / p.row_len;
    p.mlx = view->kind() == TensorView::Kind::mlx;
    if (view->kind() == TensorView::Kind::mlx) {
        const QuantLayout& q = *t.quant;
        p.path = Path::decoded;
        p.unit_elements = 32 / q.bits;
        p.unit_bytes = 4;
        p.scale_entry = q.scale;
        const TensorInfo& s = model.tensors[*q.scale];
        p.scale_width = s.n_elements ? s.n_bytes.value_or(0) / s.n_elements : 0;
        p.scale_min_normal = min_normal_of(s.type.name, q.mode);
        if (q.mode == "affine" && q.bias) {
            p.bias_entry = q.bias;
            const TensorInfo& b = model.tensors[*q.bias];
            p.bias_width = b.n_elements ? b.n_bytes.value_or(0) / b.n_elements : 0;
        }
    } else {
        p.unit_elements = view->block_length();
        p.unit_bytes = view->block_bytes();
        if (type == "F32")
            p.path = Path::f32_bits;
        else if (type == "F16")
            p.path = Path::f16_bits;
        else if (type == "BF16")
            p.path = Path::bf16_bits;
        else if (view->kind() == TensorView::Kind::ggml)
            p.path = t.type.id == GGML_TYPE_Q8_0 ? Path::q8_0_codes : Path::ggml_blocks;
        else
            p.path = Path::decoded;
        p.check_beyond = type == "F32" || type == "BF16";
        if (p.path == Path::ggml_blocks || p.path == Path::q8_0_codes) p.scales = ggml_scale_fields(t.type.id);
    }
    p.stacked = is_stacked_experts(model, lt, *view);
    if (p.stacked)
        p.experts = view->shape()[2];
    else if (lt.expert)
        p.expert_number = lt.expert;
    p.rows_per_expert = p.rows / p.experts;
    p.track_columns = p.rows >= 2 && p.row_len <= kFsckMaxColumns;
    const uint64_t row_bytes = p.row_len / p.unit_elements * p.unit_bytes;
    if (row_bytes <= kItemBytes && p.row_len <= kItemValues) {
        p.rows_per_item = std::max<uint64_t>(1, std::min(kItemBytes / std::max<uint64_t>(row_bytes, 1), kItemValues / p.row_len));
        p.piece = p.row_len;
    } else {
        // Long rows: one row per item, read in pieces of whole blocks (or MLX words).
        const uint64_t unit = std::lcm(view->block_length(), p.unit_elements);
        p.piece = std::max<uint64_t>(unit, kItemValues / unit * unit);
    }
    p.view = std::move(*view);
    p.expert_acc.resize(p.experts);
    return p;
}

namespace {

// One row piece: values [column, column + n) of one row, `raw` its stored bytes and `values`
// its decoded values (F32 bits) where the path decodes.
struct PieceInput {
    uint64_t expert, row, column, n;
    const uint8_t* raw;
    const float* values;
};

struct ItemState {
    FindingSet findings;
    ExpertAcc expert;
    std::vector<uint8_t> columns;
    // Every column has held a non-zero value in this item: later rows need not mark them again.
    bool columns_full = false;
    uint64_t hash = 0;
};

// The finding a scale that is not normal gives: NaN and Inf are errors, zero a warning, subnormal a note.
struct ScaleFinding {
    ErrorCode code;
    FindingSeverity severity;
};

ScaleFinding scale_finding(ScaleClass c) {
    switch (c) {
        case ScaleClass::nan:
            return {ErrorCode::F_SCALE_NAN, FindingSeverity::error};
        case ScaleClass::inf:
            return {ErrorCode::F_SCALE_INF, FindingSeverity::error};
        case ScaleClass::zero:
            return {ErrorCode::F_SCALE_ZERO, FindingSeverity::warning};
        default:
            return {ErrorCode::F_SCALE_SUBNORMAL, FindingSeverity::info};
    }
}

void check_ggml_scales(const Plan& p, const PieceInput& in, ItemState& st) {
    const uint64_t bl = p.view->block_length(), bb = p.view->block_bytes(), blocks = in.n / bl;
    for (const GgmlScaleField& f : p.scales) {
        for (uint64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = in.raw + b * bb;
            const ScaleClass c = classify_scale(f.encoding, block + f.offset);
            if (c == ScaleClass::normal) continue;
            if (c == ScaleClass::zero) {
                if (!in.values) continue;  // Q8_0 read on its codes: a zero d makes every value zero
                const float* v = in.values + b * bl;
                if (std::all_of(v, v + bl, [](float x) { return x == 0.0f; })) continue;
            }
            FsckLocation at = p.location(in.expert, in.row, in.column + b * bl);
            *at.offset += f.offset;
            const ScaleFinding finding = scale_finding(c);
            st.findings.at(finding.code, f.name, finding.severity).add(at);
        }
    }
}

Status check_mlx_scales(const Scan& scan, const Plan& p, const PieceInput& in, ItemState& st) {
    const uint64_t g = p.view->block_length(), groups = in.n / g;
    const uint64_t first_group = (in.expert * p.rows_per_expert + in.row) * (p.row_len / g) + in.column / g;
    std::vector<float>& scales = thread_scratch<std::vector<float>>([] {});
    std::vector<float>& biases = thread_scratch<std::vector<float>>([] {});
    scales.resize(groups);
    biases.resize(groups);
    if (Status s = p.view->read_group_params(first_group, groups, scales.data(), biases.data()); !s) return s;
    auto report = [&](const char* field, size_t entry, uint64_t width, uint64_t k, ScaleClass c, float v) {
        const auto [code, sev] = scale_finding(c);
        FsckLocation at = p.location(in.expert, in.row, in.column + k * g);
        const TensorInfo& c_info = scan.model.tensors[entry];
        at.file = c_info.file;
        at.offset = c_info.data_offset + (first_group + k) * width;
        st.findings.at(code, field, sev).add(at, 1, v);
    };
    for (uint64_t k = 0; k < groups; ++k) {
        const ScaleClass c = classify_value(scales[k], p.scale_min_normal);
        if (c == ScaleClass::zero) {
            const float* v = in.values + k * g;
            if (std::all_of(v, v + g, [](float x) { return x == 0.0f; })) continue;
        }
        if (c != ScaleClass::normal) report("scale", *p.scale_entry, p.scale_width, k, c, scales[k]);
        if (p.bias_entry) {
            const ScaleClass cb = classify_value(biases[k], 0.0f);
            if (cb == ScaleClass::nan || cb == ScaleClass::inf) report("bias", *p.bias_entry, p.bias_width, k, cb, biases[k]);
        }
    }
    return ok_status();
}

constexpr uint64_t kQ8Block = 32, kQ8BlockBytes = 34;  // ggml's block_q8_0: F16 d, then 32 int8 codes

float q8_0_value(const uint8_t* raw, uint64_t i) {
    const uint8_t* block = raw + i / kQ8Block * kQ8BlockBytes;
    const float d = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(block[0] | (block[1] << 8)));
    return d * static_cast<float>(static_cast<int8_t>(block[2 + i % kQ8Block]));
}

// scan_values for Q8_0 codes (see fsck_plan.h): a block with a zero d holds only zeros, one with a
// finite d is non-zero where its codes are, and one whose d is NaN or Inf is decoded and scanned.
template <typename Report>
bool scan_q8_0_codes(const uint8_t* raw, uint64_t n, uint8_t* columns, Report&& report) {
    bool nonzero = false;
    for (uint64_t b = 0; b < n / kQ8Block; ++b) {
        const uint8_t* block = raw + b * kQ8BlockBytes;
        const unsigned magnitude = (block[0] | (block[1] << 8)) & 0x7FFFu;
        if (magnitude == 0) continue;
        uint8_t* block_columns = columns ? columns + b * kQ8Block : nullptr;
        if (magnitude >= 0x7C00) {
            float values[kQ8Block];
            ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(block, values, kQ8Block);
            nonzero |= scan_values(BitsKind::f32, values, kQ8Block, block_columns, false,
                                   [&](ValueEvent e, uint64_t i) { report(e, b * kQ8Block + i); });
            continue;
        }
        const uint8_t* codes = block + 2;
        uint8_t any = 0;
        for (uint64_t j = 0; j < kQ8Block; ++j) any |= codes[j];
        nonzero |= any != 0;
        if (block_columns && any)
            for (uint64_t j = 0; j < kQ8Block; ++j) block_columns[j] |= codes[j] != 0;
    }
    return nonzero;
}

// Scans one piece; returns whether it holds a non-zero value.
bool scan_piece(const Plan& p, const PieceInput& in, ItemState& st) {
    uint8_t* columns = p.track_columns && !st.columns_full ? st.columns.data() + in.column : nullptr;
    BitsKind kind = BitsKind::f32;
    const void* codes = in.values;
    if (p.path == Path::f16_bits || p.path == Path::bf16_bits || p.path == Path::f32_bits) {
        kind = p.path == Path::f16_bits ? BitsKind::f16 : p.path == Path::bf16_bits ? BitsKind::bf16 : BitsKind::f32;
        codes = in.raw;
    }
    Accumulator* nan = nullptr;
    Accumulator* inf = nullptr;
    Accumulator* beyond = nullptr;
    auto value_at = [&](uint64_t i) -> double {
        if (in.values) return in.values[i];
        if (p.path == Path::q8_0_codes) return q8_0_value(in.raw, i);
        if (kind == BitsKind::f32) {
            float f;
            std::memcpy(&f, in.raw + 4 * i, 4);
            return f;
        }
        uint16_t h;
        std::memcpy(&h, in.raw + 2 * i, 2);
        if (kind == BitsKind::bf16) {
            const uint32_t bits = static_cast<uint32_t>(h) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
        return ggml_fp16_to_fp32(h);
    };
    auto report = [&](ValueEvent e, uint64_t i) {
        Accumulator*& acc = e == ValueEvent::nan ? nan : e == ValueEvent::inf ? inf : beyond;
        if (!acc)
            acc = e == ValueEvent::nan ? &st.findings.at(ErrorCode::F_NAN, "", FindingSeverity::error)
                : e == ValueEvent::inf ? &st.findings.at(ErrorCode::F_INF, "", FindingSeverity::error)
                                       : &st.findings.at(ErrorCode::F_BEYOND_F16, "", FindingSeverity::warning);
        if (acc->locations.size() < kFsckMaxLocations)
            acc->add(p.location(in.expert, in.row, in.column + i), 1, value_at(i));
        else
            ++acc->count;
    };
    const bool nonzero = p.path == Path::q8_0_codes ? scan_q8_0_codes(in.raw, in.n, columns, report)
                                                    : scan_values(kind, codes, in.n, columns, p.check_beyond, report);
    if (!p.scales.empty()) check_ggml_scales(p, in, st);
    return nonzero;
}

void flush_item(Scan& scan, Plan& p, const Item& item, ItemState& st) {
    std::lock_guard<std::mutex> lock(scan.mutex);
    p.findings.merge(std::move(st.findings));
    ExpertAcc& e = p.expert_acc[item.expert];
    e.zero_rows += st.expert.zero_rows;
    e.hash += st.expert.hash;
    e.zero_locations.insert(e.zero_locations.end(), st.expert.zero_locations.begin(), st.expert.zero_locations.end());
    std::sort(e.zero_locations.begin(), e.zero_locations.end(),
              [](const FsckLocation& a, const FsckLocation& b) { return a.element < b.element; });
    if (e.zero_locations.size() > kFsckMaxLocations) e.zero_locations.resize(kFsckMaxLocations);
    p.hash += st.hash;
    if (p.track_columns) {
        if (p.columns.empty()) p.columns.assign(p.row_len, 0);
        for (size_t i = 0; i < st.columns.size(); ++i) p.columns[i] |= st.columns[i];
    }
    if (--p.items_left > 0 || !p.track_columns) return;
    // A column is zero in every row only when every row was read: rows a read failed on may hold
    // its non-zero values.
    const bool every_row_read = p.findings.by_key.count({ErrorCode::F_READ_FAILED, ""}) == 0;
    for (uint64_t c = 0; c < p.row_len && every_row_read; ++c)
        if (!p.columns[c]) p.zero_columns.add(p.location(0, 0, c));
    std::vector<uint8_t>().swap(p.columns);
}

}  // namespace

Status scan_item(Scan& scan, const Item& item) {
    Plan& p = scan.plans[item.plan];
    const TensorView& v = *p.view;
    ItemState st;
    if (p.track_columns) st.columns.assign(p.row_len, 0);
    std::vector<uint32_t>& raw_words = thread_scratch<std::vector<uint32_t>>([] {});
    std::vector<float>& values = thread_scratch<std::vector<float>>([] {});
    const uint64_t rows = item.row_end - item.row_begin;
    const bool whole_rows = p.piece == p.row_len;
    const uint64_t span = whole_rows ? rows * p.row_len : p.piece;
    const uint64_t bl = v.block_length();
    raw_words.resize((span / p.unit_elements * p.unit_bytes + 3) / 4 + 1);
    if (p.path == Path::decoded) values.resize(span);
    // ggml blocks decode one row (or piece) at a time, into a buffer that stays in cache while
    // it is scanned.
    std::vector<float>& row_values = thread_scratch<std::vector<float>>([] {});
    if (p.path == Path::ggml_blocks) row_values.resize(p.piece);
    auto decoded = [&](const uint8_t* bytes, uint64_t k, uint64_t n) -> const float* {
        if (p.path == Path::decoded) return values.data() + k;
        if (p.path != Path::ggml_blocks) return nullptr;
        ggml_get_type_traits(static_cast<ggml_type>(v.info().type.id))->to_float(bytes, row_values.data(), static_cast<int64_t>(n));
        return row_values.data();
    };
    auto* raw = reinterpret_cast<uint8_t*>(raw_words.data());
    // Reads values [first, first + n) of the tensor; hashes the stored bytes (decoded values for
    // MLX and element types decoded through TensorView).
    auto read = [&](uint64_t first, uint64_t n) -> Status {
        const uint64_t stored = n / p.unit_elements * p.unit_bytes;
        if (p.path == Path::decoded) {
            if (Status s = v.read(first, n, values.data()); !s) return s;
        } else {
            if (Status s = v.read_blocks(first / bl, n / bl, raw); !s) return s;
        }
        scan.values.fetch_add(n, std::memory_order_relaxed);
        scan.bytes.fetch_add(stored, std::memory_order_relaxed);
        return ok_status();
    };
    auto row_bytes = [&](uint64_t k, uint64_t n) -> std::pair<const uint8_t*, uint64_t> {
        if (p.path == Path::decoded) return {reinterpret_cast<const uint8_t*>(values.data() + k), n * 4};
        return {raw + k / p.unit_elements * p.unit_bytes, n / p.unit_elements * p.unit_bytes};
    };
    // A read that fails is counted at its row, with why (the first failure of the tensor is
    // shown: a network error is the network's, not the model's); the scan goes on with the next item.
    auto fail = [&](uint64_t row, const Status& why) {
        Accumulator& failed = st.findings.at(ErrorCode::F_READ_FAILED, "", FindingSeverity::error);
        if (failed.count == 0) failed.first_reason = why.error().message;
        failed.add(p.location(item.expert, row, 0), 1);
    };
    const uint64_t first_row = item.expert * p.rows_per_expert;
    auto finish_row = [&](uint64_t row, bool nonzero, uint64_t row_hash) {
        const uint64_t global = first_row + row;
        st.hash += mix64(row_hash ^ (global * 0x9E3779B97F4A7C15ull));
        st.expert.hash += mix64(row_hash ^ (row * 0x9E3779B97F4A7C15ull));
        if (p.track_columns && !st.columns_full) st.columns_full = !std::memchr(st.columns.data(), 0, st.columns.size());
        if (nonzero) return;
        ++st.expert.zero_rows;
        if (st.expert.zero_locations.size() < kFsckMaxLocations) st.expert.zero_locations.push_back(p.location(item.expert, row, 0));
    };
    if (whole_rows) {
        if (Status s = read((first_row + item.row_begin) * p.row_len, span); !s) {
            fail(item.row_begin, s);
        } else {
            for (uint64_t r = 0; r < rows; ++r) {
                const uint64_t k = r * p.row_len;
                const uint8_t* stored = raw + k / p.unit_elements * p.unit_bytes;
                PieceInput in{item.expert, item.row_begin + r, 0, p.row_len, stored, decoded(stored, k, p.row_len)};
                bool nonzero = scan_piece(p, in, st);
                if (p.mlx)
                    if (Status s = check_mlx_scales(scan, p, in, st); !s) fail(in.row, s);
                auto [bytes, length] = row_bytes(k, p.row_len);
                finish_row(in.row, nonzero, hash_bytes(bytes, length, 0));
            }
        }
    } else {
        const uint64_t row = item.row_begin;
        bool nonzero = false, ok = true;
        uint64_t row_hash = 0;
        for (uint64_t c = 0; c < p.row_len && ok; c += p.piece) {
            const uint64_t n = std::min(p.piece, p.row_len - c);
            if (Status s = read((first_row + row) * p.row_len + c, n); !s) {
                fail(row, s);
                ok = false;
                break;
            }
            PieceInput in{item.expert, row, c, n, raw, decoded(raw, 0, n)};
            nonzero |= scan_piece(p, in, st);
            if (p.mlx)
                if (Status s = check_mlx_scales(scan, p, in, st); !s) fail(row, s);
            auto [bytes, length] = row_bytes(0, n);
            row_hash = hash_bytes(bytes, length, row_hash);
        }
        if (ok) finish_row(row, nonzero, row_hash);
    }
    flush_item(scan, p, item, st);
    return ok_status();
}

}  // namespace mlens::fsck_detail
