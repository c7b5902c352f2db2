#include "mlens/ollama/hf_export.h"

#include <ggml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/formats/safetensors_writer.h"
#include "mlens/model/logical_tensors.h"
#include "mlens/ollama/mlx_export.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kChunkValues = 1u << 20;
constexpr size_t kMaxFailureNotes = 8;

// Each dtype an export writes: its name in output, as --dtype spells it, as config.json's
// torch_dtype spells it, and its safetensors dtype.
struct HfDtypeFacts {
    HfDtype dtype;
    const char* name;
    std::string_view option;
    std::string_view torch;
    SafetensorsDtype stored;
};
constexpr HfDtypeFacts kHfDtypes[] = {
    {HfDtype::bf16, "BF16", "bf16", "bfloat16", SafetensorsDtype::bf16},
    {HfDtype::f16, "F16", "f16", "float16", SafetensorsDtype::f16},
    {HfDtype::f32, "F32", "f32", "float32", SafetensorsDtype::f32},
};

const HfDtypeFacts& facts_of(HfDtype d) {
    for (const HfDtypeFacts& f : kHfDtypes)
        if (f.dtype == d) return f;
    return kHfDtypes[2];
}

template <typename Field>
std::optional<HfDtype> dtype_where(Field field, std::string_view text) {
    for (const HfDtypeFacts& f : kHfDtypes)
        if (f.*field == text) return f.dtype;
    return std::nullopt;
}

SafetensorsDtype safetensors_of(HfDtype d) { return facts_of(d).stored; }

uint64_t dtype_bytes(HfDtype d) { return d == HfDtype::f32 ? 4 : 2; }

bool is_float_dtype(const std::string& name) { return name == "F16" || name == "BF16" || name == "F32" || name == "F64"; }

// Round to nearest even, as torch's .to(bfloat16) does; NaN stays a quiet NaN.
uint16_t bf16_from_float(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

// Values rounded to the dtype: `bytes` gets the stored form, `back` the value it holds.
void round_values(HfDtype dtype, const float* in, uint64_t n, uint8_t* bytes, float* back) {
    switch (dtype) {
        case HfDtype::f32:
            std::memcpy(bytes, in, n * 4);
            std::memcpy(back, in, n * 4);
            return;
        case HfDtype::bf16: {
            auto* out = reinterpret_cast<uint16_t*>(bytes);
            for (uint64_t i = 0; i < n; ++i) out[i] = bf16_from_float(in[i]);
            ggml_bf16_to_fp32_row(reinterpret_cast<const ggml_bf16_t*>(bytes), back, static_cast<int64_t>(n));
            return;
        }
        case HfDtype::f16:
            ggml_fp32_to_fp16_row(in, reinterpret_cast<ggml_fp16_t*>(bytes), static_cast<int64_t>(n));
            ggml_fp16_to_fp32_row(reinterpret_cast<const ggml_fp16_t*>(bytes), back, static_cast<int64_t>(n));
            return;
    }
}

// The HF name of expert `e` of a stacked member of `group`.
std::string unpacked_name(const std::string& name, const std::string& group, uint64_t e) {
    std::string prefix = group;
    const std::string switch_mlp = ".switch_mlp";
    if (prefix.ends_with(switch_mlp)) prefix = prefix.substr(0, prefix.size() - switch_mlp.size()) + ".experts";
    std::string rest = name.size() > group.size() + 1 ? name.substr(group.size() + 1) : name;
    return prefix + "." + std::to_string(e) + "." + rest;
}

std::string shard_file(size_t i, size_t n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", i + 1, n);
    return buf;
}

Result<std::string> shard_header(const HfShard& shard) {
    Model m;
    m.format = Format::safetensors;
    MetadataEntry format;
    format.key = "format";
    format.value = Value::of_string("pt");
    m.metadata.push_back(std::move(format));
    for (const HfTensor& t : shard.tensors) {
        TensorInfo info;
        info.name = t.name;
        info.type = safetensors_storage_type(*safetensors_dtype_from_name(t.dtype));
        info.ne = t.ne;
        info.n_elements = 1;
        for (uint64_t d : t.ne) info.n_elements *= d;
        info.n_bytes = t.bytes;
        m.tensors.push_back(std::move(info));
    }
    return safetensors_header_text(m);
}

// The view a tensor's values come from: the logical tensor, or one expert of it.
Result<TensorView> source_view(const Model& model, const HfTensor& t) {
    auto view = TensorView::open(model, t.entry);
    if (!view || !t.expert) return view;
    return view->slice(*t.expert);
}

// Reads the stored bytes or the rounded values of `t` in chunks and hands each to `sink`
// (bytes, the exact values or nullptr for copies, the rounded values or nullptr, count).
template <typename Sink>
Status for_each_chunk(const Model& model, const HfTensor& t, HfDtype dtype, JobContext* job, Sink&& sink) {
    std::vector<uint8_t> bytes;
    if (!t.converted) {
        const uint64_t chunk = 4u << 20;
        for (size_t entry : t.sources) {
            const uint64_t size = model.tensors[entry].n_bytes.value_or(0);
            for (uint64_t off = 0; off < size; off += chunk) {
                if (job_cancelled(job)) return cancelled_error("export");
                uint64_t n = std::min(chunk, size - off);
                bytes.resize(n);
                if (Status s = model.read_tensor_bytes(entry, off, n, bytes.data()); !s) return s;
                if (Status s = sink(bytes.data(), n, nullptr, nullptr, 0); !s) return s;
            }
        }
        return ok_status();
    }
    auto view = source_view(model, t);
    if (!view) return view.error();
    const uint64_t step = view->chunk_length(kChunkValues);
    std::vector<float> exact, back;
    for (uint64_t first = 0; first < view->size(); first += step) {
        if (job_cancelled(job)) return cancelled_error("export");
        uint64_t n = std::min(step, view->size() - first);
        exact.resize(n);
        back.resize(n);
        bytes.resize(n * dtype_bytes(dtype));
        if (Status s = view->read(first, n, exact.data()); !s) return s;
        round_values(dtype, exact.data(), n, bytes.data(), back.data());
        if (Status s = sink(bytes.data(), bytes.size(), exact.data(), back.data(), n); !s) return s;
    }
    return ok_status();
}

std::optional<HfDtype> dtype_from_torch(const nlohmann::json& v) {
    if (!v.is_string()) return std::nullopt;
    return dtype_where(&HfDtypeFacts::torch, v.get<std::string>());
}

}  // namespace

const char* hf_dtype_name(HfDtype dtype) { return facts_of(dtype).name; }

std::optional<HfDtype> parse_hf_dtype(const std::string& text) { return dtype_where(&HfDtypeFacts::option, text); }

uint64_t HfShard::bytes() const {
    uint64_t n = 8 + header.size();
    for (const HfTensor& t : tensors) n += t.bytes;
    return n;
}

std::optional<HfDtype> config_dtype(const Model& model) {
    auto text = model.get_string("file:config.json");
    if (!text) return std::nullopt;
    nlohmann::json config = nlohmann::json::parse(*text, nullptr, false);
    if (!config.is_object()) return std::nullopt;
    for (const nlohmann::json* scope : {&config, config.contains("text_config") ? &config["text_config"] : nullptr}) {
        if (!scope || !scope->is_object()) continue;
        for (const char* key : {"torch_dtype", "dtype"})
            if (scope->contains(key))
                if (auto d = dtype_from_torch((*scope)[key])) return d;
    }
    return std::nullopt;
}

Result<HfPlan> plan_hf_export(const Model& model, std::optional<HfDtype> dtype, uint64_t shard_limit) {
    HfPlan plan;
    if (dtype) {
        plan.dtype = *dtype;
        plan.dtype_origin = "--dtype";
    } else if (auto d = config_dtype(model)) {
        plan.dtype = *d;
        plan.dtype_origin = "config.json";
    } else {
        plan.dtype_origin = "default";
    }
    const SafetensorsDtype out_dtype = safetensors_of(plan.dtype);
    std::vector<HfTensor> tensors;
    for (const LogicalTensor& lt : logical_tensors(model)) {
        const TensorInfo& info = model.tensors[lt.index];
        HfTensor t;
        t.entry = lt.index;
        t.source_type = lt.type;
        t.mode = !info.quant ? "plain " + lt.type : info.quant->global_scale ? lt.type + " + global scale" : lt.type;
        t.converted = info.quant.has_value() || (dtype && is_float_dtype(info.type.name));
        if (info.quant)
            ++plan.dequantized;
        else if (is_float_dtype(info.type.name) && !t.converted)
            ++plan.kept_float;
        if (!t.converted) t.sources = {lt.index};
        if (info.quant && info.quant->logical_ne.empty())
            return Error{ErrorCode::E_UNSUPPORTED_TYPE, escape_for_display(info.name, 64), std::nullopt,
                         "the quantization of this tensor is unknown, so it cannot be dequantized"};
        t.dtype = t.converted ? safetensors_dtype_name(out_dtype) : info.type.name;
        if (!t.converted && !safetensors_dtype_from_name(info.type.name))
            return Error{ErrorCode::E_UNSUPPORTED_TYPE, escape_for_display(info.name, 64), std::nullopt,
                         "type " + info.type.name + " cannot be copied"};
        const bool stacked = lt.group && !lt.expert && lt.ne.size() == 3;
        std::vector<uint64_t> ne = lt.ne;
        if (stacked) ne.pop_back();
        uint64_t elements = 1;
        for (uint64_t d : ne) elements *= d;
        t.ne = ne;
        t.bytes = t.converted ? elements * dtype_bytes(plan.dtype) : *info.n_bytes;
        if (stacked) {
            for (uint64_t e = 0; e < lt.ne[2]; ++e) {
                HfTensor x = t;
                x.name = unpacked_name(info.name, model.groups[*lt.group].name, e);
                x.expert = e;
                tensors.push_back(std::move(x));
                ++plan.unpacked_experts;
            }
        } else {
            t.name = info.name;
            tensors.push_back(std::move(t));
        }
    }
    if (Status s = shard_tensors(plan, std::move(tensors), shard_limit); !s) return s.error();
    plan.config_json = hf_export_config(model, plan);
    return plan;
}

std::optional<nlohmann::ordered_json> config_without_quantization(const std::string& text) {
    nlohmann::ordered_json config = nlohmann::ordered_json::parse(text, nullptr, false);
    if (!config.is_object()) return std::nullopt;
    for (nlohmann::ordered_json* scope : {&config, config.contains("text_config") ? &config["text_config"] : nullptr})
        if (scope && scope->is_object())
            for (const char* key : {"quantization", "quantization_config"}) scope->erase(key);
    return config;
}

std::string hf_export_config(const Model& model, const HfPlan& plan) {
    auto text = model.get_string("file:config.json");
    if (!text) return {};
    std::optional<nlohmann::ordered_json> config = config_without_quantization(*text);
    if (!config) return {};
    // The floating dtype holding the most bytes; ties go to the first in kHfDtypes.
    std::optional<HfDtype> most;
    uint64_t most_bytes = 0;
    for (const HfDtypeFacts& f : kHfDtypes) {
        uint64_t bytes = 0;
        for (const HfShard& shard : plan.shards)
            for (const HfTensor& t : shard.tensors)
                if (t.dtype == f.name) bytes += t.bytes;
        if (bytes > most_bytes) {
            most = f.dtype;
            most_bytes = bytes;
        }
    }
    if (most) {
        nlohmann::ordered_json* scope = &*config;
        if (!config->contains("torch_dtype") && config->contains("text_config") && (*config)["text_config"].is_object() &&
            (*config)["text_config"].contains("torch_dtype"))
            scope = &(*config)["text_config"];
        (*scope)["torch_dtype"] = std::string(facts_of(*most).torch);
    }
    return config->dump(2) + "\n";
}

Status shard_tensors(HfPlan& plan, std::vector<HfTensor> tensors, uint64_t shard_limit) {
    // Shards by size, in tensor order.
    std::vector<std::vector<HfTensor>> groups(1);
    uint64_t in_shard = 0;
    for (HfTensor& t : tensors) {
        if (!groups.back().empty() && in_shard + t.bytes > shard_limit) {
            groups.emplace_back();
            in_shard = 0;
        }
        in_shard += t.bytes;
        plan.tensor_bytes += t.bytes;
        groups.back().push_back(std::move(t));
    }
    nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
    std::map<std::string, std::string> sorted;
    for (size_t i = 0; i < groups.size(); ++i) {
        HfShard shard;
        shard.file = shard_file(i, groups.size());
        shard.tensors = std::move(groups[i]);
        auto header = shard_header(shard);
        if (!header) return header.error();
        shard.header = std::move(*header);
        for (const HfTensor& t : shard.tensors)
            if (!sorted.emplace(t.name, shard.file).second)
                return Error{ErrorCode::E_DUPLICATE_KEY, escape_for_display(t.name, 64), std::nullopt, "two tensors would have this name"};
        plan.shards.push_back(std::move(shard));
    }
    for (const auto& [name, file] : sorted) weight_map[name] = file;
    nlohmann::ordered_json index = {{"metadata", {{"total_size", plan.tensor_bytes}}}, {"weight_map", weight_map}};
    plan.index_json = index.dump(2) + "\n";
    return ok_status();
}

Status write_hf_shard(const Model& model, const HfPlan& plan, size_t shard_index, SafeFileWriter& out, JobContext* job,
                      uint64_t total_bytes, uint64_t& done_bytes) {
    const HfShard& shard = plan.shards[shard_index];
    uint8_t length[8];
    for (uint64_t i = 0, n = shard.header.size(); i < 8; ++i, n >>= 8) length[i] = static_cast<uint8_t>(n);
    if (Status s = out.write(length, 8); !s) return s;
    if (Status s = out.write(shard.header.data(), shard.header.size()); !s) return s;
    done_bytes += 8 + shard.header.size();
    for (const HfTensor& t : shard.tensors) {
        Status s = for_each_chunk(model, t, plan.dtype, job, [&](const uint8_t* bytes, uint64_t n, const float*, const float*, uint64_t) {
            if (Status w = out.write(bytes, n); !w) return w;
            done_bytes += n;
            job_report(job, total_bytes ? static_cast<double>(done_bytes) / static_cast<double>(total_bytes) : 1.0);
            return ok_status();
        });
        if (!s) return Error{s.error().code, t.name, s.error().offset, s.error().message};
    }
    return ok_status();
}

std::optional<NameMap> unpacked_experts_name_map(const Model& stacked, const Model& other) {
    auto names = std::make_shared<std::unordered_map<std::string, NameMatch>>();
    const std::string switch_mlp = ".switch_mlp.";
    for (const LogicalTensor& lt : logical_tensors(stacked)) {
        if (lt.expert || lt.ne.size() != 3) continue;
        const std::string& name = stacked.tensors[lt.index].name;
        std::string group;
        if (lt.group) {
            group = stacked.groups[*lt.group].name;
            // The MLX export's name for the whole stacked tensor.
            std::optional<std::string> mlx = mlx_stacked_name(name, group);
            if (mlx && *mlx != name) names->emplace(*mlx, NameMatch{name, std::nullopt, 0, 0.0f});
        } else if (size_t at = name.find(switch_mlp); at != std::string::npos) {
            group = name.substr(0, at + switch_mlp.size() - 1);  // an MLX folder's stacked tensor (no expert groups)
        } else {
            continue;
        }
        for (uint64_t e = 0; e < lt.ne[2]; ++e) names->emplace(unpacked_name(name, group, e), NameMatch{name, e, 0, 0.0f});
    }
    bool used = false;
    for (const TensorInfo& t : other.tensors) used = used || names->count(t.name) > 0;
    if (!used) return std::nullopt;
    return NameMap([names](const std::string& n) -> std::optional<NameMatch> {
        auto it = names->find(n);
        if (it == names->end()) return std::nullopt;
        return it->second;
    });
}

Result<HfVerification> verify_hf_export(const Model& model, const HfPlan& plan, const std::string& folder, JobContext* job) {
    auto written = open_safetensors_folder(folder);
    if (!written) return written.error();
    HfVerification result;
    auto fail = [&](const std::string& note) {
        ++result.failures;
        if (result.failure_notes.size() < kMaxFailureNotes) result.failure_notes.push_back(note);
    };
    if (written->error_count() > 0) fail("the written folder has errors: " + written->diagnostics.front().message);
    std::map<std::string, QuantExactness> modes;
    size_t expected = 0;
    std::vector<uint8_t> stored;
    for (const HfShard& shard : plan.shards) {
        for (const HfTensor& t : shard.tensors) {
            ++expected;
            const TensorInfo* w = written->find_tensor(t.name);
            const std::string shown = escape_for_display(t.name, 120);
            if (!w) {
                fail(shown + ": missing");
                continue;
            }
            if (w->type.name != t.dtype || w->ne != t.ne || w->n_bytes != t.bytes) {
                fail(shown + ": dtype or shape differs");
                continue;
            }
            const size_t index = static_cast<size_t>(w - written->tensors.data());
            QuantExactness& mode = modes[t.mode];
            mode.mode = t.mode;
            ++mode.tensors;
            uint64_t at = 0;
            bool equal = true;
            Status s = for_each_chunk(model, t, plan.dtype, job,
                                      [&](const uint8_t* bytes, uint64_t n, const float* exact, const float* back, uint64_t values) {
                                          stored.resize(n);
                                          if (Status r = written->read_tensor_bytes(index, at, n, stored.data()); !r) return r;
                                          at += n;
                                          if (std::memcmp(stored.data(), bytes, n) != 0) equal = false;
                                          mode.values += values;
                                          for (uint64_t i = 0; i < values; ++i) {
                                              if (std::memcmp(&exact[i], &back[i], 4) == 0) continue;
                                              ++mode.rounded;
                                              const double err = std::fabs(static_cast<double>(back[i]) - static_cast<double>(exact[i]));
                                              if (std::isfinite(err)) mode.worst_error = std::max(mode.worst_error, err);
                                          }
                                          return ok_status();
                                      });
            if (!s) return Error{s.error().code, t.name, s.error().offset, s.error().message};
            if (!equal) fail(shown + ": values differ from ModelLens's dequantization rounded to " + t.dtype);
            ++result.tensors_checked;
        }
    }
    if (written->tensors.size() != expected)
        fail("the folder holds " + std::to_string(written->tensors.size()) + " tensors, " + std::to_string(expected) + " were written");
    for (auto& [name, mode] : modes) result.modes.push_back(std::move(mode));
    return result;
}

}  // namespace mlens
