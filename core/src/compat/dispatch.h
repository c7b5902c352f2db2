// The two dispatchers: translate_metadata (text, §1.4, text_dispatch.cpp) and
// translate_clip_metadata (clip, §1.5, clip_dispatch.cpp). Each fills one SidePlan through a
// PlanState; plan_compat calls PlanState::finish afterwards.
#pragma once

#include "plan_state.h"

namespace mlens::compat {

void dispatch_text(PlanState& s);
void dispatch_clip(PlanState& s);

}  // namespace mlens::compat
