#include "mlens/open/reference_inputs.h"

#include <filesystem>

#include "../formats/gguf_split.h"
#include "mlens/open/target.h"
#include "mlens/remote/remote_url.h"

namespace mlens {

void add_reference_inputs(OutputGuard& guard, const std::string& text) {
    // A model on a server is no file an output could be; resolving it would fetch its header.
    std::error_code ec;
    if (is_remote_reference(text) && !std::filesystem::exists(text, ec)) return;
    const Target target = resolve(text);
    switch (target.kind) {
        case TargetKind::model_file:
        case TargetKind::imatrix:
            guard.add_input(target.path);
            if (auto split = parse_split_name(target.path))
                for (uint32_t n = 1; n <= split->count; ++n) guard.add_input(split->shard_path(n));
            return;
        case TargetKind::safetensors_folder: {
            guard.add_input(target.path);
            std::error_code ec;
            for (const auto& entry : std::filesystem::directory_iterator(target.path, ec))
                if (entry.is_regular_file(ec)) guard.add_input(entry.path().string());
            return;
        }
        case TargetKind::store_model:
            guard.add_input(target.path);
            if (target.store) guard.add_protected_folder(target.store->root());
            return;
        case TargetKind::store_root:
            guard.add_protected_folder(target.path);
            return;
        case TargetKind::registry_model:
            return;
        case TargetKind::missing:
        case TargetKind::not_a_model:
            guard.add_input(text);
            return;
    }
}

}  // namespace mlens
