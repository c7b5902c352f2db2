#include "mlens/analysis/requant_reference.h"

#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

// How close a stored type is to the values before any quantization.
int precision_rank(const std::string& type) {
    if (type == "F64") return 3;
    if (type == "F32") return 2;
    if (type == "F16" || type == "BF16") return 1;
    return 0;
}

}  // namespace

bool is_float_twin(const Model& mine, size_t tensor, const Model& other) {
    if (tensor >= mine.tensors.size()) return false;
    const TensorInfo& t = mine.tensors[tensor];
    const TensorInfo* twin = other.find_tensor(t.name);
    return twin && twin->ne == t.ne && precision_rank(twin->type.name) > precision_rank(t.type.name);
}

std::optional<TensorPair> find_counterpart(const Model& mine, size_t tensor, std::optional<uint64_t> expert, const Model& other) {
    std::optional<NameAlignment> aligned = automatic_name_alignment(mine, other);
    const Pairing pairing = aligned ? pair_tensors(mine, other, aligned->map, aligned->side) : pair_tensors(mine, other);
    for (const TensorPair& p : pairing.pairs)
        if (p.a.tensor == tensor && p.a.slice == expert) return p;
    for (TensorPair p : pairing.pairs)
        if (p.a.tensor == tensor && !p.a.slice && !p.b.slice && expert) {
            p.a.slice = p.b.slice = expert;
            return p;
        }
    return std::nullopt;
}

Result<RequantReference> open_requant_reference(const Model& mine, size_t tensor, std::optional<uint64_t> expert, const Model* other) {
    if (tensor >= mine.tensors.size()) return Error{ErrorCode::E_RANGE, "", std::nullopt, "no tensor " + std::to_string(tensor)};
    Result<std::unique_ptr<PairSource>> self = PairSource::open(mine, PairSide{tensor, expert});
    if (!self) return self.error();
    RequantReference r;
    r.tensor_name = mine.tensors[tensor].name;
    r.type_name = (*self)->view().type_name();
    const std::string self_text = escape_for_display(r.type_name, 40);
    const int self_rank = precision_rank(r.type_name);
    std::string why;
    if (!other) {
        why = "no F32/F16/BF16 file is chosen to compare with";
    } else if (std::optional<TensorPair> pair = find_counterpart(mine, tensor, expert, *other); !pair) {
        why = "the compared file has no tensor paired with this one";
    } else {
        Result<std::unique_ptr<PairSource>> theirs = PairSource::open(*other, pair->b);
        if (!theirs) return theirs.error();
        const std::string their_type = (*theirs)->view().type_name();
        if ((*theirs)->source().size() != (*self)->source().size()) {
            why = "the compared file's tensor has " + std::to_string((*theirs)->source().size()) + " values, this one " +
                std::to_string((*self)->source().size());
        } else if (precision_rank(their_type) > self_rank) {
            r.values = std::move(*theirs);
            r.counterpart = true;
            r.tensor_name = other->tensors[pair->b.tensor].name;
            r.type_name = their_type;
            return r;
        } else {
            why = "the compared file's tensor is " + escape_for_display(their_type, 40) + ", not a more precise float type";
        }
    }
    r.values = std::move(*self);
    if (self_rank == 0)
        r.note = "the reference is this " + self_text + " tensor itself (" + why + "): the error is measured from already-quantized values";
    return r;
}

}  // namespace mlens
