// translate_metadata (spec §1.4): the 22 dispatch steps in the shim's order. Every step is
// recorded as a check; a handler runs only when its detector fires.
#include "dispatch.h"

#include "compat/arch/arch_rules.h"

namespace mlens::compat {

namespace {

constexpr const ArchRules* kTextOrder[] = {
    &kEmbeddingGemmaRules, &kGemma3Rules,      &kSnowflakeArcticEmbed2Rules,
    &kGemma3nRules,        &kGemma4Rules,      &kQwen35MoeRules,
    &kQwen35Rules,         &kQwen3nextRules,   &kLagunaRules,
    &kGptossRules,         &kLfm2Rules,        &kOlmo3Rules,
    &kMistral3Rules,       &kQwen25vlRules,    &kQwen3vlRules,
    &kGlm4moeliteRules,    &kDeepseekocrRules, &kNemotronHOmniRules,
    &kNemotronHMoeRules,   &kLlama3Rules,      &kLlama4Rules,
    &kGlmocrRules,
};

}  // namespace

void dispatch_text(PlanState& s) {
    std::string arch = s.plan().arch_before;
    for (const ArchRules* rules : kTextOrder) {
        const std::string rule = std::string("handle_") + rules->name;
        Detection d = rules->detect(s, arch);
        s.record_check(rule, rules->gate, d);
        if (!d.fired) continue;
        s.begin_rule(rule);
        rules->text(s, arch);
    }
    s.set_arch(arch);
}

}  // namespace mlens::compat
