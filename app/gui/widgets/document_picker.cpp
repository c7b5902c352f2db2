#include "widgets/document_picker.h"

#include <imgui.h>

#include "state/workspace.h"

namespace mlens::ui {

bool document_picker(const char* id, PanelContext& ctx, PairedDocument& pair, float width) {
    const Document* picked = pair.get(ctx.workspace);
    bool changed = false;
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo(id, picked ? picked->title.c_str() : "no other model open")) {
        if (ctx.workspace)
            for (const auto& d : ctx.workspace->documents()) {
                if (!can_pair(*d, ctx.doc)) continue;
                ImGui::PushID(static_cast<int>(d->id));
                if (ImGui::Selectable(d->title.c_str(), d->id == pair.id()) && d->id != pair.id()) {
                    pair.pick(d->id);
                    changed = true;
                }
                ImGui::PopID();
            }
        ImGui::EndCombo();
    }
    return changed;
}

}  // namespace mlens::ui
