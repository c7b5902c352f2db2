// olmo3 (spec §1.4): Ollama's name for an olmo2 model.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_olmo3(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "olmo3"); }

void handle_olmo3(PlanState& s, std::string& arch) { rename_arch(s, arch, "olmo2"); }

}  // namespace

const ArchRules kOlmo3Rules = {"olmo3", "olmo3", detect_olmo3, handle_olmo3, nullptr};

}  // namespace mlens::compat
