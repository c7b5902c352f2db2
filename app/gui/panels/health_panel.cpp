#include "panels/health_panel.h"

#include <algorithm>
#include <utility>
#include <string>
#include <vector>

#include <imgui.h>

#include "mlens/analysis/fsck_json.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "panels/panel_links.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// The tensor (or field) a finding is about, with its field when it names both.
std::string finding_subject(const Finding& f) {
    if (f.tensor.empty()) return f.field;
    return f.field.empty() ? f.tensor : f.tensor + " " + f.field;
}

// A finding about one whole tensor offers its values in Weights; a cut tensor's are not all there.
bool has_weights_button(const Finding& f, const Document& doc) {
    return f.tensor_index && !is_cut_tensor_row(f) && *f.tensor_index < doc.model()->tensors.size();
}

std::string where_text(const Finding& f) {
    if (f.locations.empty()) return "-";
    const FsckLocation& at = f.locations.front();
    std::string s;
    auto add = [&](const std::string& part) { s += (s.empty() ? "" : " \xC2\xB7 ") + part; };
    if (at.expert) add("expert " + std::to_string(*at.expert));
    if (f.tensor_index && at.row) add("row " + std::to_string(*at.row));
    if (f.tensor_index && at.block) add("block " + std::to_string(*at.block));
    if (at.offset) add("@" + ui::hex_offset(*at.offset));
    return s.empty() ? "-" : s;
}

const ImVec4& severity_color(FindingSeverity s) {
    return s == FindingSeverity::error ? palette().error : s == FindingSeverity::warning ? palette().warning : palette().dim;
}

const char* severity_label(FindingSeverity s) {
    return s == FindingSeverity::error ? "\xE2\x9C\x96 error" : s == FindingSeverity::warning ? "\xE2\x9A\xA0 warning" : "\xC2\xB7 note";
}

}  // namespace

std::string finding_weights_link(const Finding& f, const std::string& tensor) {
    if (f.locations.empty()) return weights_link(tensor);
    const FsckLocation& at = f.locations.front();
    return weights_link(tensor, at.expert, at.row, at.row ? at.block : std::nullopt);
}

std::string HealthPanel::badge(const Document&) const {
    const size_t problems = m_blobs.failed() +
        (m_report ? m_report->count(FindingSeverity::error) + m_report->count(FindingSeverity::warning) : 0);
    return problems ? std::to_string(problems) : std::string();
}

void HealthPanel::start(PanelContext& ctx, CachedScan mode) {
    if (m_job) m_job.cancel();
    m_started_once = true;
    m_status.clear();
    m_selected.reset();
    m_started = ImGui::GetTime();
    std::shared_ptr<const Model> model = ctx.doc.model();
    m_job = ctx.jobs.start("Health check",
                           [model, mode](JobContext& job) { return fsck_model_cached(*model, CacheDatabase::shared().get(), &job, 2, mode); });
}

void HealthPanel::collect(Document& doc) {
    std::optional<Result<FsckReport>> taken = m_job.try_take();
    if (!taken) return;
    m_seconds = ImGui::GetTime() - m_started;
    Result<FsckReport>& r = *taken;
    if (r) {
        m_report = std::make_shared<const FsckReport>(std::move(*r));
        doc.value_scan = ValueScanCounts{m_report->count(FindingSeverity::error),
                                         m_report->count(FindingSeverity::warning),
                                         m_report->count(FindingSeverity::info),
                                         m_report->tensors_scanned,
                                         m_report->tensors,
                                         doc.index()->summary.present_files_text()};
    } else {
        m_status =
            r.error().code == ErrorCode::E_CANCELLED ? "Scan cancelled." : "Scan failed: " + escape_for_display(r.error().to_string());
    }
}

bool HealthPanel::accept_link(std::string_view link, Document& doc) {
    if (link != kVerifyBlobsLink || !RegistryBlobsView::shows(doc)) return false;
    m_verify_linked = true;
    return true;
}

void HealthPanel::draw(PanelContext& ctx) {
    if (std::exchange(m_verify_linked, false)) m_blobs.start(ctx);
    m_blobs.draw(ctx);
    if (!m_started_once) start(ctx, CachedScan::reuse);
    collect(ctx.doc);
    if (m_job) {
        if (ImGui::Button("Cancel")) m_job.cancel();
        ImGui::SameLine();
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(260, 0));
        ImGui::SameLine();
        ui::text_dim("scanning every tensor once, on two threads");
    } else if (ImGui::Button("Scan again")) {
        start(ctx, CachedScan::refresh);
    }
    if (!m_status.empty()) {
        ImGui::SameLine();
        ui::text_dim(m_status);
    }
    if (!m_report) return;
    const FsckReport& r = *m_report;
    // " in the 2 of 3 files present" while parts of a split model are missing.
    const std::string present = ctx.doc.index()->summary.present_files_text();
    if (!m_job) {
        ImGui::SameLine();
        ui::text_dim(std::to_string(r.tensors_scanned) + " of " + std::to_string(r.tensors) + " tensors" + present + ", " +
                     ui::with_separators(r.values_scanned) + " values, " + ui::with_separators(r.bytes_scanned) + " bytes scanned");
    }
    if (r.findings.empty() && !present.empty()) {
        ImGui::Spacing();
        ui::text_colored(palette().warning, "No findings" + present + ": the tensors of the missing files were not scanned.");
        return;
    }
    if (r.findings.empty()) {
        ImGui::Spacing();
        ui::text_colored(palette().ok, "\xE2\x9C\x93 No findings: every tensor is healthy.");
        ImGui::PushStyleColor(ImGuiCol_Text, palette().dim);
        ImGui::TextWrapped(
            "Checked: NaN and Inf values, values beyond F16 in F32/BF16, zero rows and columns, block scales "
            "(zero, subnormal, NaN, Inf), dead and duplicated experts, duplicated tensors, tensor regions.");
        ImGui::PopStyleColor();
        return;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
    // The cut tensors are rows under their truncation summary, shown and hidden with the errors.
    const auto cut_rows = std::count_if(r.findings.begin(), r.findings.end(), is_cut_tensor_row);
    ImGui::Checkbox(
        ("Errors (" + std::to_string(r.count(FindingSeverity::error)) +
         (cut_rows ? ", " + counted_as(std::to_string(cut_rows), static_cast<uint64_t>(cut_rows), "cut tensor") : std::string()) +
         ")###errors")
            .c_str(),
        &m_show_errors);
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, palette().warning);
    ImGui::Checkbox(("Warnings (" + std::to_string(r.count(FindingSeverity::warning)) + ")").c_str(), &m_show_warnings);
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::Checkbox(("Notes (" + std::to_string(r.count(FindingSeverity::info)) + ")").c_str(), &m_show_info);
    draw_table(ctx);
}

void HealthPanel::draw_table(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const FsckReport& r = *m_report;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    // Names first: Code, Tensor and Where are sized to their widest entry (Tensor up to a third of
    // the width, elided at its start beyond it; Where up to a quarter); Message wraps in the rest,
    // which keeps at least 12 em.
    const float avail = ImGui::GetContentRegionAvail().x;
    std::vector<std::string> codes, names, wheres, counts;
    for (const Finding& f : r.findings) {
        codes.emplace_back(code_name(f.code));
        names.push_back((is_cut_tensor_row(f) ? "\xE2\x94\x94 " : "") + finding_subject(f));
        wheres.push_back(where_text(f));
        counts.push_back(ui::with_separators(f.count));
    }
    const float code_w = ui::fitted_width(codes, "Code", avail * 0.2f);
    ImGui::PushFont(ctx.fonts.mono());
    const float fitted_tensor_w = ui::fitted_width(names, "Tensor", avail * 0.33f);
    const float where_w = ui::fitted_width(wheres, "Where (first)", avail * 0.25f);
    ImGui::PopFont();
    const float em = ImGui::GetFontSize();
    const float severity_w = ui::fitted_width("warning", "Severity", avail);
    const float count_w = ui::fitted_width(counts, "Count", avail);
    // The Weights button column is there only when a row has the button.
    const bool any_button = std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return has_weights_button(f, doc); });
    const int columns = any_button ? 7 : 6;
    const float button_w = any_button ? ImGui::CalcTextSize("Weights").x + em : 0.0f;
    // The message keeps 12 em (it wraps): the tensor name gives up width first (it keeps its end), to 10 em.
    const float others = severity_w + code_w + where_w + count_w + button_w + (ImGui::GetStyle().CellPadding.x * 2.0f + 1.0f) * static_cast<float>(columns);
    const float tensor_w = std::max(std::min(fitted_tensor_w, avail - others - em * 12.0f), em * 10.0f);
    if (!ImGui::BeginTable("findings", columns, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, severity_w);
    ImGui::TableSetupColumn("Code", ImGuiTableColumnFlags_WidthFixed, code_w);
    ImGui::TableSetupColumn("Tensor", ImGuiTableColumnFlags_WidthFixed, tensor_w);
    ImGui::TableSetupColumn("Where (first)", ImGuiTableColumnFlags_WidthFixed, where_w);
    ImGui::TableSetupColumn("Count", ImGuiTableColumnFlags_WidthFixed, count_w);
    ImGui::TableSetupColumn("Message", ImGuiTableColumnFlags_WidthStretch);
    if (any_button) ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, button_w);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < r.findings.size(); ++i) {
        const Finding& f = r.findings[i];
        if (f.severity == FindingSeverity::error         ? !m_show_errors
                : f.severity == FindingSeverity::warning ? !m_show_warnings
                                                         : !m_show_info)
            continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(i));
        ImGui::PushStyleColor(ImGuiCol_Text, severity_color(f.severity));
        const bool selected = m_selected == i && doc.selection.kind == SelectionKind::finding;
        if (ImGui::Selectable(severity_label(f.severity), selected,
                              ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
            m_selected = i;
            const FsckLocation* at = f.locations.empty() ? nullptr : &f.locations.front();
            if (at && at->offset) {
                const uint64_t start = *at->offset >= 32 ? (*at->offset - 32) & ~uint64_t{15} : 0;
                doc.finding_bytes = ByteTarget{
                    at->file, start, {*at->offset, 2}, std::string(code_name(f.code)) + " " + (f.tensor.empty() ? f.field : f.tensor)};
            } else {
                doc.finding_bytes.reset();
            }
            doc.select({SelectionKind::finding, i});
        }
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(em * 40.0f);
            ui::text(finding_line(f));
            if (f.locations.size() > 1) ui::text_dim("first " + std::to_string(f.locations.size()) + " locations in mlens fsck --json");
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
        ui::copy_menu("copy", {{"line", finding_line(f)}, {"message", f.message}});
        ImGui::TableNextColumn();
        ui::text(code_name(f.code));
        ImGui::TableNextColumn();
        ImGui::PushFont(ctx.fonts.mono());
        // A tensor a truncation cut sits under the summary row above it.
        ui::cell_text(names[i], ui::Elide::start);
        ImGui::TableNextColumn();
        ui::cell_text_dim(where_text(f));
        ImGui::PopFont();
        ImGui::TableNextColumn();
        ui::text(ui::with_separators(f.count));
        ImGui::TableNextColumn();
        ui::wrapped_text(f.message);
        if (any_button && ImGui::TableNextColumn() && has_weights_button(f, doc) && ImGui::SmallButton("Weights"))
            doc.follow(finding_weights_link(f, doc.model()->tensors[*f.tensor_index].name));
        ImGui::PopID();
    }
    ImGui::EndTable();
}

}  // namespace mlens
