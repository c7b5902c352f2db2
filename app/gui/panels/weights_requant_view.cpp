#include "panels/weights_requant_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include <imgui.h>

#include "mlens/formats/ggml_types.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "panels/weights_tables.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

enum Column { kType, kBits, kRmse, kNmse, kMaxAbs, kCosine, kSnr, kColumns };

// The types llama.cpp's quantize offers most, the common ones checked. Those that need an
// importance matrix stay in the list so the table says so instead of hiding them.
struct Offer {
    const char* family;
    const char* name;
    bool checked;
};
constexpr Offer kOffers[] = {
    {"legacy", "Q4_0", true},      {"legacy", "Q4_1", false},      {"legacy", "Q5_0", false},    {"legacy", "Q5_1", false},
    {"legacy", "Q8_0", true},      {"k-quants", "Q2_K", true},     {"k-quants", "Q3_K", true},   {"k-quants", "Q4_K", true},
    {"k-quants", "Q5_K", true},    {"k-quants", "Q6_K", true},     {"i-quants", "IQ1_S", false}, {"i-quants", "IQ2_XXS", true},
    {"i-quants", "IQ2_XS", false}, {"i-quants", "IQ3_XXS", false}, {"i-quants", "IQ3_S", false}, {"i-quants", "IQ4_NL", true},
    {"i-quants", "IQ4_XS", true},  {"float", "F16", false},        {"float", "BF16", false},
};

struct Header {
    const char* label;
    const char* meaning;
};
constexpr Header kHeaders[kColumns] = {
    {"type", "the ggml type the tensor is quantized to"},       {"bpw", "bits per weight of that type"},
    {"RMSE", "root mean square error against the reference"},   {"NMSE", "mean square error divided by the reference's mean square"},
    {"max |a-b|", "largest absolute difference of one weight"}, {"cosine", "cosine similarity of the quantized weights with the reference"},
    {"SNR", "signal-to-noise ratio in dB (higher is better)"},
};

// A column's content width: its widest text, or its header with the room ImGui's TableHeader
// keeps beside it for the sort arrow (ImGui adds the cell padding around it).
float column_width(const std::vector<std::string>& texts, const char* header) {
    float width = ImGui::CalcTextSize(header).x + std::floor(ImGui::GetFontSize() * 0.65f + ImGui::GetStyle().FramePadding.x);
    for (const std::string& t : texts) width = std::max(width, ImGui::CalcTextSize(t.c_str()).x);
    return width;
}

// A row equal to the reference has no error to show: its note says so instead of RMSE 0, SNR +inf.
bool has_numbers(const RequantRow& r) { return !r.needs_imatrix && r.skipped.empty() && !r.equals_reference(); }

double column_value(const RequantRow& r, int column) {
    if (column == kBits) return r.bits_per_weight;
    if (!has_numbers(r)) return std::nan("");
    switch (column) {
        case kRmse:
            return r.error.rmse;
        case kNmse:
            return r.error.nmse;
        case kMaxAbs:
            return r.error.max_abs;
        case kCosine:
            return r.error.cosine;
        case kSnr:
            return r.error.snr_db;
        default:
            return std::nan("");
    }
}

// Three significant digits keep the columns narrow (hovering a cell gives six); the cosine needs
// more, as it sits near 1.
std::string metric_text(double v, int column) {
    if (!std::isfinite(v) || column == kCosine) return number_text(v);
    char buf[32];
    std::snprintf(buf, sizeof buf, column == kSnr ? "%.2f" : "%.3g", v);
    return buf;
}

std::string note_of(const RequantRow& r) {
    if (r.needs_imatrix) return "needs an importance matrix (open one and pick it above)";
    if (!r.skipped.empty()) return "skipped: " + escape_for_display(r.skipped, 200);
    if (r.equals_reference()) return "same values as the reference: this type holds it exactly";
    return {};
}

// The note of a row without numbers, written from the current cell across the empty ones to its
// right: the clip rectangle keeps the cell's top and bottom (rows under a frozen header stay
// hidden) and reaches to the table's visible right edge.
void row_note(const RequantRow& row) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 cell_min = draw->GetClipRectMin(), cell_max = draw->GetClipRectMax();
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - ImGui::GetStyle().ScrollbarSize;
    ImGui::PushClipRect(cell_min, ImVec2(std::max(cell_max.x, right), cell_max.y), false);
    // Cut at a word boundary to the visible width; hovering shows the whole note.
    const std::string note = note_of(row);
    const std::string shown = ui::elided_text(note, right - ImGui::GetCursorScreenPos().x);
    if (row.needs_imatrix)
        ui::text_colored(palette().warning, shown);
    else
        ui::text_dim(shown);
    ImGui::PopClipRect();
    if (shown != note && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note.c_str());
}

}  // namespace

WeightsRequantView::WeightsRequantView() {
    for (const Offer& o : kOffers)
        if (std::optional<uint32_t> id = ggml_type_from_name(o.name)) m_offered.push_back({o.family, o.name, *id, o.checked});
}

void WeightsRequantView::check_only(const std::vector<std::string>& names) {
    m_user_checked = true;
    for (OfferedType& t : m_offered) t.checked = std::find(names.begin(), names.end(), t.name) != names.end();
}

void WeightsRequantView::clear() {
    m_job.cancel();
    m_job.reset();
    m_result.reset();
    m_error.clear();
    m_result_label.clear();
    m_status.clear();
    m_order.clear();
    m_drawn_rows.clear();
    m_refold = true;
}

void WeightsRequantView::poll() {
    std::optional<Result<RequantResult>> taken = m_job.try_take();
    if (!taken) return;
    m_error.clear();
    if (!*taken) {
        if (is_cancelled(taken->error())) {
            m_status = "cancelled";
            return;
        }
        m_result.reset();
        m_error = escape_for_display(taken->error().to_string(), 400);
        m_result_label = m_label;
        m_status.clear();
        return;
    }
    m_result = std::make_shared<RequantResult>(std::move(*taken).value());
    m_result_label = m_label;
    m_status.clear();
    m_resort = true;
    m_refold = true;
}

void WeightsRequantView::follow(size_t tensor, std::optional<uint64_t> expert, std::string label, uint64_t row_length,
                                uint64_t compared_document, const Workspace* workspace, bool picked) {
    pick_imatrix(workspace);
    Subject subject{tensor, expert, compared_document, m_imatrix_doc, picked};
    if (!(subject == m_subject)) clear();
    m_subject = subject;
    m_label = std::move(label);
    m_row_length = row_length;
    apply_default_checks();
    poll();
}

void WeightsRequantView::apply_default_checks() {
    const std::pair<uint64_t, bool> wanted{m_row_length, m_imatrix_doc != 0};
    if (m_user_checked || wanted == m_defaults_for) return;
    m_defaults_for = wanted;
    const std::vector<uint32_t> defaults = default_requant_types(wanted.first, wanted.second);
    for (OfferedType& t : m_offered) t.checked = std::find(defaults.begin(), defaults.end(), t.ggml_type) != defaults.end();
}

void WeightsRequantView::pick_imatrix(const Workspace* workspace) {
    // The first imatrix document opened is used until the picker is touched; a closed one is dropped.
    const Document* chosen = nullptr;
    const Document* first = nullptr;
    if (workspace)
        for (const auto& d : workspace->documents()) {
            if (!d->ready() || !d->is_imatrix()) continue;
            if (!first) first = d.get();
            if (d->id == m_imatrix_doc) chosen = d.get();
        }
    if (!chosen && !m_imatrix_chosen) chosen = first;
    m_imatrix_doc = chosen ? chosen->id : 0;
}

void WeightsRequantView::imatrix_picker(PanelContext& ctx) {
    pick_imatrix(ctx.workspace);
    const Document* chosen = ctx.workspace ? ctx.workspace->find(m_imatrix_doc) : nullptr;
    ImGui::SetNextItemWidth(260);
    if (ctx.workspace && ImGui::BeginCombo("importance matrix", chosen ? chosen->title.c_str() : "none")) {
        if (ImGui::Selectable("none", !chosen)) use_imatrix(0);
        bool any = false;
        for (const auto& d : ctx.workspace->documents()) {
            if (!d->ready() || !d->is_imatrix()) continue;
            any = true;
            ImGui::PushID(static_cast<int>(d->id));
            if (ImGui::Selectable(d->title.c_str(), d.get() == chosen)) use_imatrix(d->id);
            ImGui::PopID();
        }
        if (!any) ui::text_dim("  (open a llama-imatrix file to use one)");
        ImGui::EndCombo();
    }
}

void WeightsRequantView::run(PanelContext& ctx) {
    m_job.cancel();
    RequantRequest rq;
    rq.model = ctx.doc.model();
    rq.tensor = m_subject.tensor;
    rq.expert = m_subject.expert;
    for (const OfferedType& t : m_offered)
        if (t.checked) rq.ggml_types.push_back(t.ggml_type);
    if (ctx.workspace) {
        if (Document* d = ctx.workspace->find(m_subject.compared); d && d->ready() && d->is_model()) rq.other = d->model();
        if (Document* d = ctx.workspace->find(m_imatrix_doc); d && d->ready()) rq.imatrix = d->imatrix();
    }
    m_job = ctx.jobs.start("requantize " + m_label, [rq](JobContext& job) { return requantize_weights(rq, &job); });
    m_status.clear();
}

void WeightsRequantView::type_checkboxes() {
    // One line per family, wrapped where the region ends.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const float boxes_x = ImGui::GetCursorPosX() + ImGui::CalcTextSize("k-quants").x + style.ItemSpacing.x * 2;
    const char* family = nullptr;
    for (OfferedType& t : m_offered) {
        if (!family || std::strcmp(family, t.family) != 0) {
            ui::text_dim(t.family);
            ImGui::SameLine(boxes_x);
            family = t.family;
        } else {
            float width = ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(t.name).x;
            if (ImGui::GetItemRectMax().x + style.ItemSpacing.x + width <= right)
                ImGui::SameLine();
            else
                ImGui::SetCursorPosX(boxes_x);
        }
        if (ImGui::Checkbox(t.name, &t.checked)) m_user_checked = true;
    }
}

std::string WeightsRequantView::checked_summary() const {
    constexpr size_t kShownNames = 4;
    std::string names;
    size_t checked = 0;
    for (const OfferedType& t : m_offered) {
        if (!t.checked) continue;
        if (++checked > kShownNames) continue;
        if (!names.empty()) names += ", ";
        names += t.name;
    }
    if (checked == 0) return "none checked";
    if (checked > kShownNames) names += ", \xE2\x80\xA6";
    return names + " (" + std::to_string(checked) + (checked == 1 ? " type)" : " types)");
}

void WeightsRequantView::sort_rows(const RequantResult& r, int column, bool ascending) {
    m_order.resize(r.rows.size());
    std::iota(m_order.begin(), m_order.end(), size_t{0});
    if (column < 0) return;
    auto before = [&](size_t a, size_t b) {
        const RequantRow& x = r.rows[a];
        const RequantRow& y = r.rows[b];
        if (column == kType) return ascending ? x.type_name < y.type_name : y.type_name < x.type_name;
        double p = column_value(x, column), q = column_value(y, column);
        if (std::isnan(p) || std::isnan(q)) return !std::isnan(p) && std::isnan(q);
        return ascending ? p < q : q < p;
    };
    std::stable_sort(m_order.begin(), m_order.end(), before);
}

void WeightsRequantView::results_table(const RequantResult& r) {
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate | ImGuiTableFlags_SizingFixedFit;
    m_drawn_rows.clear();
    // Every column as wide as its widest text or its header (with the sort arrow), so the seven
    // fit the panel's lower half at 1366 pixels; a note written across the metric cells widens none.
    std::vector<std::string> texts[kColumns];
    for (const RequantRow& row : r.rows) {
        texts[kType].push_back(escape_for_display(row.type_name, 40));
        texts[kBits].push_back(bits_per_weight_text(row.bits_per_weight));
        if (has_numbers(row))
            for (int c = kRmse; c <= kSnr; ++c) texts[c].push_back(metric_text(column_value(row, c), c));
    }
    ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(2, ImGui::GetStyle().CellPadding.y));
    bool open = ImGui::BeginTable("requant", kColumns, flags, ImVec2(0, 0));
    if (open) {
        ImGui::TableSetupScrollFreeze(1, 1);
        const float padding = ImGui::GetStyle().CellPadding.x * 2.0f;
        m_columns_width = 0.0f;
        for (int c = 0; c < kColumns; ++c) {
            const float width = column_width(texts[c], kHeaders[c].label);
            ImGui::TableSetupColumn(kHeaders[c].label, ImGuiTableColumnFlags_WidthFixed, width);
            m_columns_width += width + padding;
        }
    }
    ImGui::PopStyleVar();
    if (!open) return;
    // The headers are short; hovering one says what it measures.
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int c = 0; c < kColumns; ++c) {
        if (!ImGui::TableSetColumnIndex(c)) continue;
        ImGui::TableHeader(kHeaders[c].label);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kHeaders[c].meaning);
    }
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && (specs->SpecsDirty || m_resort)) {
        bool sorted = specs->SpecsCount > 0;
        sort_rows(r, sorted ? specs->Specs[0].ColumnIndex : -1, !sorted || specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
        specs->SpecsDirty = false;
        m_resort = false;
    }
    if (m_order.size() != r.rows.size()) sort_rows(r, -1, true);
    for (size_t i : m_order) {
        const RequantRow& row = r.rows[i];
        m_drawn_rows.push_back(row.type_name);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(escape_for_display(row.type_name, 40));
        ImGui::TableNextColumn();
        ui::text(bits_per_weight_text(row.bits_per_weight));
        if (!has_numbers(row)) {
            ImGui::TableNextColumn();
            row_note(row);
            continue;
        }
        for (int c = kRmse; c <= kSnr; ++c) {
            ImGui::TableNextColumn();
            ui::text(metric_text(column_value(row, c), c));
            if (ImGui::IsItemHovered()) {
                std::string tip = std::string(kHeaders[c].label) + " " + number_text(column_value(row, c));
                if (!row.error.worst_rows.empty()) {
                    const RowError& w = row.error.worst_rows.front();
                    char more[160];
                    std::snprintf(more, sizeof more, "\nmean |a-b| %.4g; worst row %llu: rmse %.4g, max |a-b| %.4g", row.error.mean_abs,
                                  static_cast<unsigned long long>(w.row), w.rmse, w.max_abs);
                    tip += more;
                }
                ImGui::SetTooltip("%s", tip.c_str());
            }
        }
    }
    ImGui::EndTable();
}

void WeightsRequantView::draw(PanelContext& ctx) {
    // The type grid is open until there are results, then folds to one line so that the table
    // gets the height; it can be opened again.
    if (m_refold) ImGui::SetNextItemOpen(!m_result);
    m_refold = false;
    imatrix_picker(ctx);
    if (ImGui::TreeNodeEx("types", ImGuiTreeNodeFlags_NoTreePushOnOpen, "target types: %s", checked_summary().c_str())) type_checkboxes();
    bool any = std::any_of(m_offered.begin(), m_offered.end(), [](const OfferedType& t) { return t.checked; });
    ImGui::BeginDisabled(!any);
    if (ImGui::Button("Run")) run(ctx);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Quantize the reference of %s with ggml to each checked type (%s) and measure the error", m_label.c_str(),
                          m_imatrix_doc ? "with the importance matrix" : "no importance matrix");
    ImGui::SameLine();
    if (m_job) {
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(240, 0), "requantizing\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel##requant")) m_job.cancel();
        ImGui::SameLine();
    }
    if (!m_status.empty()) {
        ui::text_dim(m_status);
        ImGui::SameLine();
    }
    if (!m_error.empty()) {
        ImGui::NewLine();
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().error, m_error);
        ImGui::PopTextWrapPos();
        m_drawn_rows.clear();
        return;
    }
    if (!m_result) {
        if (!m_job) ui::text_dim("Check the target types and press Run.");
        m_drawn_rows.clear();
        return;
    }
    const RequantResult& r = *m_result;
    const Document* twin = m_subject.picked && ctx.workspace ? ctx.workspace->find(m_subject.compared) : nullptr;
    const std::string importance = r.imatrix_entry.empty() ? "" : ", importance " + r.imatrix_entry;
    ImGui::PushTextWrapPos(0);
    if (twin)
        ui::text_colored(palette().accent, m_result_label + ": reference picked: " + r.reference_type + " in " + twin->title +
                                               " (open, same tensor name and shape)" + importance);
    else
        ui::text_dim(m_result_label + ": reference " + r.reference + importance);
    ImGui::PopTextWrapPos();
    if (!r.note.empty()) {
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().warning, r.note);
        ImGui::PopTextWrapPos();
    }
    results_table(r);
}

}  // namespace mlens
