#include "panels/compat_panel.h"

#include <algorithm>
#include <utility>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "mlens/text/text_search.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

using compat::EditKind;
using compat::kEditKinds;

bool light_background() {
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    return 0.299f * bg.x + 0.587f * bg.y + 0.114f * bg.z > 0.5f;
}

// Text colours per kind, readable on the theme's window background; row tints are the same hues
// at low alpha.
ImVec4 kind_color(EditKind k) {
    static const ImVec4 kDark[kEditKinds.size()] = {
        {0.42f, 0.86f, 0.46f, 1.0f},  // injected: green
        {0.98f, 0.78f, 0.28f, 1.0f},  // changed: amber
        {1.00f, 0.45f, 0.45f, 1.0f},  // removed: red
        {0.45f, 0.70f, 1.00f, 1.0f},  // renamed: blue
        {0.62f, 0.64f, 0.70f, 1.0f},  // hidden: grey
        {0.80f, 0.56f, 1.00f, 1.0f},  // retyped: violet
        {0.30f, 0.86f, 0.86f, 1.0f},  // data op: cyan
    };
    static const ImVec4 kLight[kEditKinds.size()] = {
        {0.05f, 0.50f, 0.15f, 1.0f}, {0.66f, 0.40f, 0.00f, 1.0f}, {0.78f, 0.10f, 0.10f, 1.0f}, {0.10f, 0.36f, 0.85f, 1.0f},
        {0.40f, 0.42f, 0.47f, 1.0f}, {0.50f, 0.20f, 0.78f, 1.0f}, {0.00f, 0.47f, 0.52f, 1.0f},
    };
    return (light_background() ? kLight : kDark)[static_cast<size_t>(k)];
}

ImU32 row_tint(EditKind k) {
    ImVec4 c = kind_color(k);
    c.w = light_background() ? 0.13f : 0.15f;
    return ImGui::GetColorU32(c);
}

const char* plural_kind_name(EditKind k) { return k == EditKind::data_op ? "data ops" : compat::edit_kind_name(k); }

// "type value" with the type dim; arrays show only the value (it names type and count).
// Type then value, the value elided at a word boundary to the cell (the row's tooltip has it whole).
void type_value(const std::string& type, const std::string& value, bool dim, const FontSet& fonts) {
    if (!type.empty() && !type.starts_with("ARRAY")) {
        ui::text_dim(ui::elided_text(type, ImGui::GetContentRegionAvail().x));
        ImGui::SameLine();
    }
    ImGui::PushFont(fonts.mono());
    std::string shown = ui::elided_text(value, ImGui::GetContentRegionAvail().x);
    if (dim)
        ui::text_dim(shown);
    else
        ui::text(shown);
    ImGui::PopFont();
}

// Text elided at word boundaries to what is left of the cell; names keep their last words.
void fitted(std::string_view s, ui::Elide where = ui::Elide::end) { ui::text(ui::elided_text(s, ImGui::GetContentRegionAvail().x, where)); }
void fitted_colored(const ImVec4& color, std::string_view s) {
    ui::text_colored(color, ui::elided_text(s, ImGui::GetContentRegionAvail().x, ui::Elide::start));
}

void row_tooltip(const CompatRow& row) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    if (row.kind)
        ui::text_colored(kind_color(*row.kind), compat::edit_kind_name(*row.kind));
    else
        ui::text_dim("unchanged");
    ui::label_value("as stored  ", row.left_name.empty() ? "\xE2\x80\x94" : row.left_name + "  " + row.left_type + "  " + row.left_value);
    ui::label_value("upstream   ",
                    row.right_name.empty() ? "\xE2\x80\x94 removed" : row.right_name + "  " + row.right_type + "  " + row.right_value);
    if (!row.rule.empty()) ui::label_value("rule       ", row.rule);
    if (!row.note.empty()) ui::label_value("note       ", row.note);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

// Each piece of evidence with the reason no upstream file has it.
void origin_tooltip(const compat::OllamaOrigin& origin) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    for (const compat::OriginEvidence& e : origin.evidence) {
        ui::text(escape_for_display(e.marker, 400));
        ui::text_dim("  " + e.reason);
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

}  // namespace

void CompatPanel::poll() {
    std::optional<Result<CompatView>> taken = m_job.try_take();
    if (!taken) return;
    if (!*taken) {
        m_cancelled = true;
        if (taken->error().code != ErrorCode::E_CANCELLED) m_failure = escape_for_display(taken->error().to_string(), 400);
        return;
    }
    CompatView& built = taken->value();
    m_only_changes = !built.plan.empty();
    m_view = std::make_shared<const CompatView>(std::move(built));
    m_listed_valid = false;
}

void CompatPanel::start(PanelContext& ctx) {
    std::shared_ptr<const Model> model = ctx.doc.model();
    m_job = ctx.jobs.start("compat plan " + ctx.doc.title,
                           [model](JobContext& job) -> Result<CompatView> { return build_compat_view(*model, &job); });
    m_cancelled = false;
    m_failure.clear();
}

void CompatPanel::refresh() {
    if (m_listed_valid && m_listed_only_changes == m_only_changes && m_listed_filter == m_filter) return;
    m_listed_valid = true;
    m_listed_only_changes = m_only_changes;
    m_listed_filter = m_filter;
    for (int side = 0; side < 2; ++side) {
        const CompatSide& s = side ? m_view->clip : m_view->text;
        for (int section = 0; section < 2; ++section) {
            const std::vector<CompatRow>& rows = section ? s.tensors : s.metadata;
            std::vector<size_t>& out = m_listed[side][section];
            out.clear();
            for (size_t i = 0; i < rows.size(); ++i) {
                const CompatRow& r = rows[i];
                if (m_only_changes && !r.changed()) continue;
                if (!m_filter.empty() && !contains_folded(r.left_name, m_filter) && !contains_folded(r.right_name, m_filter) &&
                    !contains_folded(r.rule, m_filter) && !contains_folded(r.note, m_filter))
                    continue;
                out.push_back(i);
            }
        }
    }
}

void CompatPanel::open_export(const Document& doc) {
    if (m_view) m_export.open(doc, *m_view);
}

void CompatPanel::header(PanelContext& ctx) {
    const CompatView& v = *m_view;
    std::string handlers;
    for (const compat::SidePlan* p : {&v.plan.text, &v.plan.clip})
        for (const std::string& h : p->handlers) handlers += (handlers.empty() ? "" : ", ") + h;
    // One short verdict beside the export button; the details wrap on the lines below it.
    if (v.origin.ollama_made())
        ui::text_colored(palette().accent, "Ollama-made file");
    else if (v.plan.empty())
        ui::text_colored(palette().ok, "llama.cpp loads this file as it is");
    else
        ui::text_colored(palette().warning, "No evidence that Ollama made this file");
    const char* label = "Export upstream GGUF\xE2\x80\xA6";
    float width = ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 12, ImGui::GetWindowContentRegionMax().x - width));
    if (ImGui::Button(label)) open_export(ctx.doc);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Write the upstream-shaped GGUF%s that llama.cpp loads after the shim", v.vision_export ? " and its mmproj" : "");
    ImGui::PushTextWrapPos(0);
    if (v.origin.ollama_made()) {
        const size_t more = v.origin.evidence.size() - 1;
        ui::text_dim("evidence: " + escape_for_display(v.origin.evidence.front().marker, 400) +
                     (more ? " (+" + std::to_string(more) + " more; hover for all)" : " (hover for why)"));
        if (ImGui::IsItemHovered()) origin_tooltip(v.origin);
        ui::text(v.plan.empty() ? std::string("The shim changes nothing in it.") : "The shim rewrites it; handlers fired: " + handlers);
    } else if (v.plan.empty()) {
        ui::text("Ollama's compatibility shim changes nothing in it.");
    } else {
        ui::text("The shim's rules would still rewrite it (" + handlers +
                 "), but nothing in it shows Ollama made it: inference loads it as it is.");
    }
    ImGui::PopTextWrapPos();
    ImGui::Checkbox("Only changes", &m_only_changes);
    ImGui::SameLine(0, 16);
    bool focus = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    ui::search_box("compat_filter", "filter keys, tensors, rules (Ctrl+F)", m_filter, 320, focus);
}

bool CompatPanel::accept_link(std::string_view link, Document&) {
    if (link != "compat:export") return false;
    m_open_export = true;
    return true;
}

void CompatPanel::draw(PanelContext& ctx) {
    poll();
    if (!m_view && !m_job && !m_cancelled) start(ctx);
    if (m_view && std::exchange(m_open_export, false)) open_export(ctx.doc);
    if (m_job) {
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(280, 0), "planning compat rewrites\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel")) m_job.cancel();
        return;
    }
    if (!m_view) {
        if (m_failure.empty())
            ui::text_dim("Planning was cancelled.");
        else
            ui::text_colored(palette().error, "Planning failed: " + m_failure);
        ImGui::SameLine();
        if (ImGui::SmallButton("Plan again")) start(ctx);
        return;
    }
    header(ctx);
    refresh();
    if (!ImGui::BeginTabBar("compat_sides")) return;
    const char* titles[2] = {"Text loader###text", "Clip / mmproj###clip"};
    for (int side = 0; side < 2; ++side) {
        if (!ImGui::BeginTabItem(titles[side])) continue;
        side_view(ctx, side);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

void CompatPanel::side_view(PanelContext& ctx, int side) {
    const CompatSide& s = side ? m_view->clip : m_view->text;
    const compat::SidePlan& plan = side ? m_view->plan.clip : m_view->plan.text;
    ui::text_dim("architecture");
    ImGui::SameLine();
    ui::text(s.arch_before.empty() ? "(none)" : s.arch_before);
    if (s.arch_after != s.arch_before) {
        ImGui::SameLine();
        ui::text_colored(kind_color(EditKind::changed), "\xE2\x86\x92 " + s.arch_after);
    }
    if (!plan.handlers.empty()) {
        ImGui::SameLine(0, 16);
        ui::text_dim(s.summary);
    }
    if (plan.no_mmap) {
        ImGui::SameLine(0, 16);
        ui::text_colored(palette().warning, "mmap off (" + plan.no_mmap_rule + ")");
    }
    if (!plan.issues.empty()) {
        ImGui::SameLine(0, 16);
        ui::text_colored(palette().warning, "\xE2\x9A\xA0 " + std::to_string(plan.issues.size()) + " issues (see Detection checks)");
    }
    // The counts, coloured by kind, are the legend of the row colours.
    for (size_t k = 0; k < kEditKinds.size(); ++k) {
        if (k) {
            ImGui::SameLine(0, 4);
            ui::text_dim("\xC2\xB7");
            ImGui::SameLine(0, 4);
        }
        std::string item =
            std::string(edit_kind_glyph(kEditKinds[k])) + " " + std::to_string(s.counts[k]) + " " + plural_kind_name(kEditKinds[k]);
        if (s.counts[k])
            ui::text_colored(kind_color(kEditKinds[k]), item);
        else
            ui::text_dim(item);
    }
    if (plan.handlers.empty()) {
        ImGui::PushTextWrapPos(0);
        ui::text_dim(s.summary);
        ImGui::PopTextWrapPos();
    }

    ImGui::BeginChild("compat_rows_scroll", ImVec2(0, 0), false);
    if (side == 1 && s.empty) {
        ui::text("Nothing for the clip (mmproj) loader: no clip handler fired, so no mmproj comes from this file.");
    } else {
        ImGuiTreeNodeFlags open = ImGuiTreeNodeFlags_DefaultOpen;
        std::string meta =
            "Metadata  (" + std::to_string(m_listed[side][0].size()) + " of " + std::to_string(s.metadata.size()) + " keys)###metadata";
        if (ImGui::CollapsingHeader(meta.c_str(), open)) rows_table(ctx, side, 0);
        std::string tensors =
            "Tensors  (" + std::to_string(m_listed[side][1].size()) + " of " + std::to_string(s.tensors.size()) + ")###tensors";
        if (ImGui::CollapsingHeader(tensors.c_str(), open)) rows_table(ctx, side, 1);
    }
    size_t fired = std::count_if(plan.checks.begin(), plan.checks.end(), [](const compat::DetectionCheck& c) { return c.fired; });
    std::string checks = "Detection checks  (" + std::to_string(plan.checks.size()) + " handlers considered, " + std::to_string(fired) +
        " fired" + (plan.issues.empty() ? "" : ", " + std::to_string(plan.issues.size()) + " issues") + ")###checks";
    if (ImGui::CollapsingHeader(checks.c_str())) checks_view(plan);
    ImGui::EndChild();
}

void CompatPanel::rows_table(PanelContext& ctx, int side, int section) {
    const CompatSide& s = side ? m_view->clip : m_view->text;
    const std::vector<CompatRow>& rows = section ? s.tensors : s.metadata;
    const std::vector<size_t>& listed = m_listed[side][section];
    if (listed.empty()) {
        ui::text_dim(m_filter.empty() ? "   No changes here." : "   Nothing matches the filter.");
        return;
    }
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable;
    // Both sections use one table id, so their columns stay aligned (ImGui syncs same-id tables).
    // Names and rules first: the two name columns get the width of their longest text in the rows
    // either section lists when that fits beside the value columns (each at most 15% of the width)
    // and the rule's operations with the start of a note, else the room left in proportion to
    // what each wants; the rule column takes the rest. Names beyond their width keep their end.
    const float avail = ImGui::GetContentRegionAvail().x;
    const float kind_w = ImGui::GetFontSize() * 2.2f;
    std::string left_widest, right_widest, action_widest, left_value_widest, right_value_widest;
    auto keep_longer = [](std::string& widest, const std::string& text) {
        if (text.size() > widest.size()) widest = text;
    };
    for (int sec = 0; sec < 2; ++sec)
        for (size_t index : m_listed[side][sec]) {
            const CompatRow& row = sec ? s.tensors[index] : s.metadata[index];
            keep_longer(left_widest, row.left_name.empty() ? row.copied_from : row.left_name);
            keep_longer(right_widest, row.right_name);
            keep_longer(action_widest, row.action);
            keep_longer(left_value_widest, row.left_type + " " + row.left_value);
            keep_longer(right_value_widest, row.right_type + " " + row.right_value);
        }
    const char* value_header = section ? "type \xC2\xB7 shape" : "type \xC2\xB7 value";
    const float left_value_w = ui::fitted_width(left_value_widest, value_header, avail * 0.15f);
    const float right_value_w = ui::fitted_width(right_value_widest, value_header, avail * 0.15f);
    float name_w = ui::fitted_width(left_widest, "tensor as stored", avail);
    float upstream_w = ui::fitted_width(right_widest, "upstream view", avail);
    // The rule keeps its operations and the start of a note; the names share what is left.
    const float rule_w = ui::fitted_width(action_widest, "rule", avail) + ImGui::GetFontSize() * 8.0f;
    const float padding = (ImGui::GetStyle().CellPadding.x * 2.0f + 1.0f) * 6.0f;
    const float names_room = avail - padding - kind_w - left_value_w - right_value_w - rule_w;
    if (const float wanted = name_w + upstream_w; wanted > names_room && names_room > 0) {
        name_w *= names_room / wanted;
        upstream_w *= names_room / wanted;
    }
    if (!ImGui::BeginTable("compat_rows", 6, flags)) return;
    ImGui::TableSetupColumn("##kind", ImGuiTableColumnFlags_WidthFixed, kind_w);
    ImGui::TableSetupColumn(section ? "tensor as stored" : "key as stored", ImGuiTableColumnFlags_WidthFixed, name_w);
    ImGui::TableSetupColumn(section ? "type \xC2\xB7 shape##l" : "type \xC2\xB7 value##l", ImGuiTableColumnFlags_WidthFixed, left_value_w);
    ImGui::TableSetupColumn("upstream view", ImGuiTableColumnFlags_WidthFixed, upstream_w);
    ImGui::TableSetupColumn(section ? "type \xC2\xB7 shape##r" : "type \xC2\xB7 value##r", ImGuiTableColumnFlags_WidthFixed, right_value_w);
    ImGui::TableSetupColumn("rule", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    const Palette& pal = palette();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(listed.size()));
    while (clipper.Step()) {
        for (int li = clipper.DisplayStart; li < clipper.DisplayEnd; ++li) {
            const size_t index = listed[static_cast<size_t>(li)];
            const CompatRow& row = rows[index];
            ImGui::TableNextRow();
            if (row.kind) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, row_tint(*row.kind));
            ImGui::PushID(static_cast<int>(index));
            ImGui::TableNextColumn();
            SelectionKind kind = section ? SelectionKind::tensor : SelectionKind::metadata;
            bool selected = row.stored && ctx.doc.selection == Selection{kind, *row.stored};
            if (ImGui::Selectable("##row", selected, ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap) &&
                row.stored)
                ctx.doc.select({kind, *row.stored});
            if (ImGui::IsItemHovered()) row_tooltip(row);
            ui::copy_menu("copy",
                          {{"as stored", row.left_name + "  " + row.left_type + "  " + row.left_value},
                           {"upstream view", row.right_name + "  " + row.right_type + "  " + row.right_value},
                           {"rule", row.rule + (row.note.empty() ? "" : " \xE2\x80\x94 " + row.note)}});
            ImGui::SameLine(0, 0);
            bool first = true;
            for (EditKind k : kEditKinds) {
                if (!row.has(k)) continue;
                if (!first) ImGui::SameLine(0, 2);
                ui::text_colored(kind_color(k), edit_kind_glyph(k));
                first = false;
            }
            if (first) ImGui::NewLine();

            const ImVec4 accent = row.kind ? kind_color(*row.kind) : pal.dim;
            ImGui::TableNextColumn();
            if (row.left_name.empty() && !row.copied_from.empty())
                ui::text_dim(ui::elided_text(row.copied_from, ImGui::GetContentRegionAvail().x, ui::Elide::start));
            else if (row.left_name.empty())
                ui::text_dim("not in the file");
            else if (row.kind == EditKind::removed)
                fitted_colored(accent, row.left_name);
            else
                fitted(row.left_name, ui::Elide::start);
            ImGui::TableNextColumn();
            if (!row.left_name.empty()) type_value(row.left_type, row.left_value, false, ctx.fonts);
            // The right side names only what differs; "=" is "as stored".
            ImGui::TableNextColumn();
            if (row.right_name.empty())
                ui::text_colored(accent, "\xE2\x80\x94 removed");
            else if (row.hidden)
                ui::text_colored(accent, "hidden");
            else if (row.right_name == row.left_name)
                ui::text_dim("=");
            else
                fitted_colored(accent, row.right_name);
            ImGui::TableNextColumn();
            const bool same_value = !row.left_name.empty() && row.right_type == row.left_type && row.right_value == row.left_value;
            if (!row.hidden && !row.right_name.empty()) {
                if (same_value)
                    ui::text_dim("=");
                else
                    type_value(row.right_type, row.right_value, false, ctx.fonts);
            }
            ImGui::TableNextColumn();
            if (row.ambiguous) {
                ui::text_colored(pal.warning, "\xE2\x9A\xA0 AMBIGUOUS");
                ImGui::SameLine();
            }
            // The operations; the handler is in the row's tooltip and above the table.
            if (!row.action.empty()) {
                fitted(row.action);
                if (!row.note.empty() && ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 8) {
                    ImGui::SameLine();
                    ui::text_dim(ui::elided_text("\xE2\x80\x94 " + row.note, ImGui::GetContentRegionAvail().x));
                }
            }
            ImGui::PopID();
        }
    }
    ImGui::EndTable();
}

void CompatPanel::checks_view(const compat::SidePlan& plan) {
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV;
    float avail = ImGui::GetContentRegionAvail().x;
    std::vector<std::string> handlers, arches;
    for (const compat::DetectionCheck& c : plan.checks) {
        handlers.push_back(c.rule);
        arches.push_back(escape_for_display(c.arch, 60));
    }
    // Names sized to content; the reason takes the rest and wraps at word boundaries.
    if (!plan.checks.empty() && ImGui::BeginTable("checks", 4, flags)) {
        ImGui::TableSetupColumn("handler", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(handlers, "handler", avail * 0.3f));
        ImGui::TableSetupColumn("gated on", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(arches, "gated on", avail * 0.2f));
        ImGui::TableSetupColumn("fired", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 3.5f);
        ImGui::TableSetupColumn("why", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableHeadersRow();
        for (const compat::DetectionCheck& c : plan.checks) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            if (c.fired)
                ui::cell_text_colored(palette().accent, c.rule);
            else
                ui::cell_text(c.rule);
            ImGui::TableNextColumn();
            ui::cell_text_dim(escape_for_display(c.arch, 60));
            ImGui::TableNextColumn();
            if (c.fired)
                ui::text_colored(palette().ok, "\xE2\x9C\x93 yes");
            else
                ui::text_dim("no");
            ImGui::TableNextColumn();
            ImGui::PushTextWrapPos(0);
            ui::text(escape_for_display(c.detail, 600));
            ImGui::PopTextWrapPos();
        }
        ImGui::EndTable();
    }
    for (const compat::PlanIssue& i : plan.issues)
        ui::text_colored(palette().warning, "\xE2\x9A\xA0 " + i.rule + ": " + escape_for_display(i.message, 400));
    if (!plan.skip_prefixes.empty()) {
        std::string prefixes;
        for (const compat::SkipPrefix& p : plan.skip_prefixes)
            prefixes += (prefixes.empty() ? "" : ", ") + escape_for_display(p.prefix, 60) + " (" + p.rule + ")";
        ui::text_dim("skip prefixes: " + prefixes);
    }
}

void CompatPanel::draw_windows(PanelContext& ctx) { m_export.draw(ctx, m_view); }

}  // namespace mlens
