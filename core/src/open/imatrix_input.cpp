#include "mlens/open/imatrix_input.h"

#include "mlens/open/target.h"

namespace mlens {

Result<Imatrix> open_imatrix_input(const std::string& text) {
    const Target target = resolve(text);
    if (target.source) return read_imatrix(target.source);
    if (target.kind == TargetKind::missing || target.kind == TargetKind::not_a_model) return target.problem;
    return Error{ErrorCode::E_NOT_A_MODEL, "", std::nullopt, std::string(target_kind_name(target)) + ": not an importance matrix"};
}

}  // namespace mlens
