#include "panels/inference_memory_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "mlens/infer/dry_run.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// llama.cpp's --cache-type-k/v set, as memory_plan.h accepts it.
constexpr const char* kKvTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};

bool same_settings(const MemoryPlanOptions& a, const MemoryPlanOptions& b) {
    return a.n_ctx == b.n_ctx && a.n_batch == b.n_batch && a.n_ubatch == b.n_ubatch && a.kv_type == b.kv_type;
}

std::string error_text(uint64_t estimate, uint64_t measured) {
    if (measured == 0) return estimate == 0 ? "exact" : "(nothing allocated)";
    if (estimate == measured) return "exact";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%+.2f%%",
                  (static_cast<double>(estimate) - static_cast<double>(measured)) / static_cast<double>(measured) * 100.0);
    return buf;
}

struct Term {
    const char* name;
    uint64_t MemoryTerms::*field;
};
constexpr Term kTerms[] = {{"weights", &MemoryTerms::weights}, {"KV cache", &MemoryTerms::kv}, {"compute", &MemoryTerms::compute}};

bool input_u32(const char* label, uint32_t& value, uint32_t lo, uint32_t hi, int step) {
    int v = static_cast<int>(value);
    ImGui::SetNextItemWidth(100);
    if (!ImGui::InputInt(label, &v, step, step * 8)) return false;
    value = static_cast<uint32_t>(std::clamp<int64_t>(v, lo, hi));
    return true;
}

}  // namespace

InferenceMemoryView::InferenceMemoryView() { options.n_ctx = 2048; }

bool InferenceMemoryView::run(PanelContext& ctx, InferenceController& c) {
    if (!c.start<MemoryOp>(ctx.jobs, options)) return false;
    m_measured_for = options;
    return true;
}

void InferenceMemoryView::update_estimate(const Model& model, bool as_is) {
    if (m_estimate && m_model == &model && same_settings(m_estimated_for, options) && m_estimated_as_is == as_is) return;
    m_model = &model;
    m_estimated_for = options;
    m_estimated_as_is = as_is;
    m_estimate = estimate_memory(model, options, as_is);
}

void InferenceMemoryView::update_plan(PanelContext& ctx, bool as_is) {
    if (std::optional<Result<MemoryMeasure>> taken = m_plan_job.try_take()) {
        if (taken->ok() || !is_cancelled(taken->error())) m_plan = std::move(*taken);
    }
    const bool current = m_planned_path == ctx.doc.path && same_settings(m_planned_for, options) && m_planned_as_is == as_is;
    if (current && (m_plan_job || m_plan)) return;
    m_plan_job.cancel();
    m_plan.reset();
    m_planned_for = options;
    m_planned_path = ctx.doc.path;
    m_planned_as_is = as_is;
    SessionOptions session;
    session.as_is = as_is;
    session.n_ctx = 16;  // the session's own context is not planned: MemoryOp makes its own
    m_plan_job = ctx.jobs.start("llama.cpp memory plan", [path = ctx.doc.path, opts = options, session](JobContext& job) {
        return dry_run_memory(path, opts, session, &job);
    });
}

void InferenceMemoryView::terms_table(const MemoryEstimate* est, const MemoryMeasure* plan, const MemoryMeasure* measured) {
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg;
    if (!ImGui::BeginTable("memory_terms", 5, flags)) return;
    for (const char* h : {"term", "estimate (from the file)", "llama.cpp plan", "llama.cpp allocated", "error"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    auto row = [&](const char* name, uint64_t e, std::optional<uint64_t> p, std::optional<uint64_t> m) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(name);
        ImGui::TableNextColumn();
        ui::text(est ? mib_text(e) : "-");
        ImGui::TableNextColumn();
        ui::text(p ? mib_text(*p) : m_plan_job ? "planning\xE2\x80\xA6" : "-");
        ImGui::TableNextColumn();
        ui::text(m ? mib_text(*m) : "-");
        ImGui::TableNextColumn();
        if (est && m) {
            const std::string text = error_text(e, *m);
            const bool close = *m > 0 && std::abs(static_cast<double>(e) - static_cast<double>(*m)) <= 0.05 * static_cast<double>(*m);
            ui::text_colored(close || e == *m ? palette().ok : palette().warning, text);
        } else {
            ui::text_dim("-");
        }
    };
    auto term_of = [](const MemoryMeasure* m, uint64_t MemoryTerms::*field) {
        return m ? std::optional<uint64_t>(m->terms.*field) : std::nullopt;
    };
    for (const Term& t : kTerms) row(t.name, est ? est->terms.*t.field : 0, term_of(plan, t.field), term_of(measured, t.field));
    row("total", est ? est->terms.total() : 0, plan ? std::optional<uint64_t>(plan->terms.total()) : std::nullopt,
        measured ? std::optional<uint64_t>(measured->terms.total()) : std::nullopt);
    ImGui::EndTable();
}

void InferenceMemoryView::bar_chart(const MemoryEstimate& est, const MemoryMeasure* measured, float height) {
    double top = 0;
    for (const Term& t : kTerms) {
        top = std::max(top, static_cast<double>(est.terms.*t.field));
        if (measured) top = std::max(top, static_cast<double>(measured->terms.*t.field));
    }
    // Room above the tallest bar for its label and the legend.
    const double mib_top = std::max(top / (1 << 20) * 1.3, 0.001);
    PlotRange range{-0.5, 2.5, 0.0, mib_top};
    const auto term_name = [](double x) {
        const double i = std::round(x);
        return i >= 0 && i < static_cast<double>(std::size(kTerms)) && i == x ? std::string(kTerms[static_cast<size_t>(i)].name) : std::string();
    };
    PlotFrame f = draw_plot_frame("##memory_bars", ImVec2(0, height), range, "", "MiB", true, term_name);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 est_color = plot_series_color(0), measured_color = plot_series_color(1);
    const float slot = (f.max.x - f.min.x) / 3.0f;
    const float bar = slot * 0.3f;
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    for (size_t i = 0; i < std::size(kTerms); ++i) {
        const float x = f.x_of(static_cast<double>(i));
        const double e = static_cast<double>(est.terms.*kTerms[i].field) / (1 << 20);
        dl->AddRectFilled(ImVec2(x - bar, f.y_of(e)), ImVec2(x, f.max.y), est_color);
        if (measured) {
            const double m = static_cast<double>(measured->terms.*kTerms[i].field) / (1 << 20);
            dl->AddRectFilled(ImVec2(x, f.y_of(m)), ImVec2(x + bar, f.max.y), measured_color);
            // The axis names the term; above its bars, how far the estimate is off.
            const std::string label = error_text(est.terms.*kTerms[i].field, measured->terms.*kTerms[i].field);
            const float w = ImGui::CalcTextSize(label.c_str()).x;
            dl->AddText(ImVec2(x - w / 2, f.y_of(std::max(e, m)) - ImGui::GetTextLineHeight() - 2), text, label.c_str());
        } else {
            const std::string label = mib_text(est.terms.*kTerms[i].field);
            const float w = ImGui::CalcTextSize(label.c_str()).x;
            dl->AddText(ImVec2(x - bar / 2 - w / 2, f.y_of(e) - ImGui::GetTextLineHeight() - 2), text, label.c_str());
        }
    }
    const float line = ImGui::GetTextLineHeight();
    ImVec2 at(f.min.x + 8, f.min.y + 4);
    dl->AddRectFilled(at, ImVec2(at.x + 10, at.y + 10), est_color);
    dl->AddText(ImVec2(at.x + 14, at.y - (line - 10) / 2), text, "estimate");
    dl->AddRectFilled(ImVec2(at.x + 100, at.y), ImVec2(at.x + 110, at.y + 10), measured_color);
    dl->AddText(ImVec2(at.x + 114, at.y - (line - 10) / 2), text, "measured");
}

void InferenceMemoryView::draw(PanelContext& ctx, InferenceController& c) {
    if (!ctx.doc.model()) return;
    input_u32("ctx", options.n_ctx, 1, 1u << 20, 256);
    ImGui::SameLine();
    input_u32("batch", options.n_batch, 1, 1u << 16, 64);
    ImGui::SameLine();
    input_u32("micro-batch", options.n_ubatch, 1, 1u << 16, 64);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    if (ImGui::BeginCombo("KV cache type", options.kv_type.c_str())) {
        for (const char* t : kKvTypes)
            if (ImGui::Selectable(t, options.kv_type == t)) options.kv_type = t;
        ImGui::EndCombo();
    }
    // The button goes on the next line when the settings leave it no room.
    const float button = ImGui::CalcTextSize("Measure in llama.cpp").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SameLine(0, 16);
    if (ImGui::GetContentRegionAvail().x < button) ImGui::NewLine();
    ImGui::BeginDisabled(c.busy() || !c.can_decode());
    if (ImGui::Button("Measure in llama.cpp")) run(ctx, c);
    ImGui::EndDisabled();
    if (!c.can_decode() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Load the model with its weights first");
    // The estimate and the plan describe the file llama.cpp is given: the loaded session's (an
    // Ollama-made GGUF loaded as is, or through its upstream export), else the default route.
    const bool as_is = c.loaded() && c.load_banner().empty();
    update_estimate(*ctx.doc.model(), as_is);
    update_plan(ctx, as_is);

    const MemoryEstimate* est = m_estimate && m_estimate->ok() ? &m_estimate->value() : nullptr;
    if (m_estimate && !m_estimate->ok()) ui::text_colored(palette().error, escape_for_display(m_estimate->error().to_string(), 1000));
    if (const auto& e = error_of(c.latest<MemoryOp>())) ui::job_error_text(*e);
    const MemoryMeasure* plan = m_plan && m_plan->ok() ? &m_plan->value() : nullptr;
    if (m_plan && !m_plan->ok()) {
        ImGui::PushTextWrapPos(0.0f);
        ui::text_colored(palette().error, "llama.cpp plan: " + escape_for_display(m_plan->error().to_string(), 1000));
        ImGui::PopTextWrapPos();
    }
    const MemoryMeasure* measured = same_settings(m_measured_for, options) ? outcome_of(c.latest<MemoryOp>()) : nullptr;
    if (outcome_of(c.latest<MemoryOp>()) && !measured) ui::text_dim("The settings changed since the measure: press Measure again.");
    ImGui::PushTextWrapPos(0.0f);
    if (est) {
        ui::text_dim("Estimate: ctx padded to " + std::to_string(est->n_ctx_padded) + ", micro-batch " + std::to_string(est->n_ubatch) +
                     ", " + std::to_string(est->n_layer) + " layers, embd " + std::to_string(est->n_embd) + ", ff " +
                     std::to_string(est->n_ff) + ", vocab " + ui::with_separators(est->n_vocab) + ", K/V row " +
                     std::to_string(est->n_embd_k_gqa) + "/" + std::to_string(est->n_embd_v_gqa) + " values per layer and cell.");
        if (!est->note.empty()) ui::text_colored(palette().warning, escape_for_display(est->note, 400));
    }
    ImGui::PopTextWrapPos();
    terms_table(est, plan, measured);
    if (est) bar_chart(*est, measured, std::clamp(ImGui::GetContentRegionAvail().y * 0.6f, 140.0f, 320.0f));
    if (!measured) return;
    ui::text_dim("llama.cpp's buffers (context of " + std::to_string(measured->n_ctx) + " cells):");
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("memory_buffers", 4, flags)) return;
    for (const char* h : {"buffer type", "model", "context (KV)", "compute"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const MemoryBuffer& b : measured->buffers) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(escape_for_display(b.name, 60));
        for (const Term& t : kTerms) {
            ImGui::TableNextColumn();
            ui::text(mib_text(b.terms.*t.field));
        }
    }
    ImGui::EndTable();
}

}  // namespace mlens
