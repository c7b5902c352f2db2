#include "weight_placement.h"

#include <ggml-backend.h>
#include <ggml.h>

#include <algorithm>
#include <vector>

#include "mlens/formats/llama_requirements.h"

namespace mlens::infer_detail {

namespace {

// The op the loader uses `name` with, and whether it creates the tensor at all.
struct TensorUse {
    int op = GGML_OP_NONE;
    bool created = true;
};

TensorUse tensor_use(const LlamaArchRequirements* arch, const std::string& name) {
    if (!arch) return {};
    for (const LlamaTensorNeed& need : arch->tensors)
        if (tensor_name_matches(need.name, name)) return {need.op, true};
    return {GGML_OP_NONE, !arch->tensors_complete};
}

std::vector<ggml_backend_buffer_type_t> extra_buffer_types(ggml_backend_dev_t cpu) {
    std::vector<ggml_backend_buffer_type_t> out;
    using GetExtra = ggml_backend_buffer_type_t* (*)(ggml_backend_dev_t);
    auto get = reinterpret_cast<GetExtra>(ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu), "ggml_backend_dev_get_extra_bufts"));
    if (!get) return out;
    for (ggml_backend_buffer_type_t* b = get(cpu); b && *b; ++b) out.push_back(*b);
    return out;
}

// Whether `buft` takes the weight's matmul, asked of ggml as llama.cpp's loader asks it.
bool takes_matmul(ggml_backend_dev_t cpu, ggml_backend_buffer_type_t buft, const TensorInfo& t, int op, int64_t n_used) {
    ggml_init_params params{ggml_tensor_overhead() * 8, nullptr, true};
    ggml_context* ctx = ggml_init(params);
    if (!ctx) return false;
    int64_t ne[4] = {1, 1, 1, 1};
    for (size_t d = 0; d < t.ne.size() && d < 4; ++d) ne[d] = static_cast<int64_t>(t.ne[d]);
    ggml_tensor* w = ggml_new_tensor_4d(ctx, static_cast<ggml_type>(t.type.id), ne[0], ne[1], ne[2], ne[3]);
    ggml_tensor* node = nullptr;
    if (op == GGML_OP_MUL_MAT) {
        node = ggml_mul_mat(ctx, w, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], 512, ne[2], ne[3]));
    } else {
        ggml_tensor* b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne[0], n_used, 512);
        node = ggml_mul_mat_id(ctx, w, b, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, 512));
    }
    w->buffer = ggml_backend_buft_alloc_buffer(buft, 0);
    const bool ok = w->buffer && ggml_backend_dev_supports_op(cpu, node);
    if (w->buffer) ggml_backend_buffer_free(w->buffer);
    ggml_free(ctx);
    return ok;
}

bool matmul_shaped(const TensorInfo& t, int op) {
    if (op != GGML_OP_MUL_MAT && op != GGML_OP_MUL_MAT_ID) return false;
    const size_t dims = op == GGML_OP_MUL_MAT ? 2 : 3;
    if (t.ne.size() < dims || t.ne.size() > 4) return false;
    for (size_t d = dims; d < t.ne.size(); ++d)
        if (t.ne[d] != 1) return false;
    // ggml's own checks need a type it knows, with whole blocks in a row.
    if (!t.type.known || t.type.id >= GGML_TYPE_COUNT || ggml_blck_size(static_cast<ggml_type>(t.type.id)) <= 0) return false;
    return t.ne[0] % static_cast<uint64_t>(ggml_blck_size(static_cast<ggml_type>(t.type.id))) == 0;
}

uint64_t expert_used(const Model& model, const std::string& arch) {
    const MetadataEntry* e = model.find(arch + ".expert_used_count");
    if (!e || e->value.type == ValueType::array || e->value.type == ValueType::string) return 1;
    return std::max<uint64_t>(1, e->value.scalar.as_uint());
}

}  // namespace

uint64_t WeightPlacement::total() const {
    uint64_t sum = mapped;
    for (const auto& [name, bytes] : copied) sum += bytes;
    return sum;
}

WeightPlacement place_weights(const Model& model, const std::string& arch) {
    WeightPlacement p;
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    const std::vector<ggml_backend_buffer_type_t> extras = cpu ? extra_buffer_types(cpu) : std::vector<ggml_backend_buffer_type_t>{};
    const LlamaArchRequirements* requirements = find_llama_arch(arch);
    const auto n_used = static_cast<int64_t>(expert_used(model, arch));
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> spans;  // file -> [first, last)
    for (const TensorInfo& t : model.tensors) {
        if (!t.n_bytes) continue;
        const TensorUse use = tensor_use(requirements, t.name);
        if (!use.created) continue;
        ggml_backend_buffer_type_t chosen = nullptr;
        if (matmul_shaped(t, use.op))
            for (ggml_backend_buffer_type_t buft : extras)
                if (takes_matmul(cpu, buft, t, use.op, n_used)) {
                    chosen = buft;
                    break;
                }
        if (chosen) {
            const uint64_t align = ggml_backend_buft_get_alignment(chosen);
            p.copied[ggml_backend_buft_name(chosen)] += (*t.n_bytes + align - 1) / align * align;
            ++p.copied_tensors;
            continue;
        }
        auto [it, fresh] = spans.try_emplace(t.file, t.data_offset, t.data_offset + *t.n_bytes);
        if (!fresh) {
            it->second.first = std::min(it->second.first, t.data_offset);
            it->second.second = std::max(it->second.second, t.data_offset + *t.n_bytes);
        }
    }
    for (const auto& [file, span] : spans) p.mapped += span.second - span.first;
    return p;
}

}  // namespace mlens::infer_detail
