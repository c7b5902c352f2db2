#include "panels/weights_panel.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <utility>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "capture.h"
#include "mlens/analysis/tensor_listing.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/model/shape_text.h"
#include "mlens/text/escape.h"
#include "panels/weights_tables.h"
#include "state/output_inputs.h"
#include "state/paired_document.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr int kMinBins = 8, kMaxBins = 1024;
constexpr std::string_view kRequantScheme = "requant:";

// A file name from a tensor name: letters, digits, '.', '-', '_' kept, the rest '_'.
std::string file_stem(const std::string& name) {
    std::string out;
    for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
    return out.empty() ? "tensor" : out;
}

// The types offered as "requantized as": the common ones that need no importance matrix.
constexpr const char* kRequantTargets[] = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",   "Q2_K",
                                           "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"};

std::string requantized_title(uint32_t ggml_type) { return "requantized as " + escape_for_display(describe_ggml_type(ggml_type).name, 40); }

HistogramSeries series_of(const Histogram& h, std::string label) {
    HistogramSeries s;
    s.label = std::move(label);
    s.lo = h.lo;
    s.hi = h.hi;
    s.counts = h.counts;
    s.total = h.total();
    s.below = h.below;
    s.above = h.above;
    return s;
}

constexpr std::pair<HistogramRangeMode, const char*> kRangeModes[] = {
    {HistogramRangeMode::automatic, "auto"},
    {HistogramRangeMode::full, "min-max"},
    {HistogramRangeMode::central, "p0.1-p99.9"},
    {HistogramRangeMode::symmetric, "symmetric around 0"},
};

}  // namespace

void WeightsPanel::poll() {
    std::optional<Result<std::shared_ptr<WeightsResult>>> taken = m_job.try_take();
    if (!taken) return;
    m_running.reset();
    if (!*taken) {
        // Cancelled, or the job itself failed (out of memory): that is shown in the result's place.
        if (taken->error().code == ErrorCode::E_CANCELLED) return;
        m_result = std::make_shared<WeightsResult>();
        m_result->error = escape_for_display(taken->error().to_string(), 400);
        return;
    }
    std::shared_ptr<WeightsResult> done = std::move(*taken).value();
    // A histogram-only result keeps the statistics it was asked to reuse.
    if (!done->stats && m_result && m_result->stats) {
        done->stats = m_result->stats;
        done->stats_route = m_result->stats_route;
    }
    if (!done->scales && m_result && m_result->scales) done->scales = m_result->scales;
    m_result = std::move(done);
}

void WeightsPanel::start(PanelContext& ctx, const Request& rq, bool want_stats, bool want_scales) {
    m_job.cancel();
    WeightsRequest w;
    w.model = ctx.doc.model();
    w.tensor = rq.tensor;
    w.expert = rq.expert;
    w.want_stats = want_stats;
    w.want_scales = want_scales;
    w.bins = rq.bins;
    w.range = rq.range;
    w.range_mode = rq.range_mode;
    if (!want_stats && m_result) w.known_stats = m_result->stats;
    m_compare_title.clear();
    if (ctx.workspace && rq.compare_doc)
        if (Document* other = ctx.workspace->find(rq.compare_doc); other && other->ready()) {
            w.other = other->model();
            m_compare_title = other->title;
        }
    if (rq.compare_type) {
        w.requant_type = rq.compare_type;
        m_compare_title = requantized_title(*rq.compare_type);
    }
    auto result = std::make_shared<WeightsResult>();
    std::string name = "weights " + escape_for_display(ctx.doc.model()->tensors[rq.tensor].name, 60);
    m_job = ctx.jobs.start(name, [w, result](JobContext& job) -> Result<std::shared_ptr<WeightsResult>> {
        analyze_weights(w, *result, &job);
        if (result->cancelled) return cancelled_error();
        return result;
    });
    m_running = std::move(result);
    m_applied = rq;
}

void WeightsPanel::compare_picker(PanelContext& ctx) {
    std::string current = "nothing";
    if (ctx.workspace)
        if (Document* other = ctx.workspace->find(m_want.compare_doc); other && other->ready()) current = other->title;
    if (current == "nothing") m_want.compare_doc = 0;
    if (m_want.compare_type) current = requantized_title(*m_want.compare_type);
    ImGui::SetNextItemWidth(220);
    if (!ImGui::BeginCombo("compare with", current.c_str(), ImGuiComboFlags_HeightLarge)) return;
    if (ImGui::Selectable("nothing", m_want.compare_doc == 0 && !m_want.compare_type)) compare_with(0);
    ui::text_dim("another file's tensor");
    bool any_document = false;
    if (ctx.workspace)
        for (const auto& d : ctx.workspace->documents()) {
            if (d->id == ctx.doc.id || !d->ready() || !d->is_model()) continue;
            any_document = true;
            ImGui::PushID(static_cast<int>(d->id));
            if (ImGui::Selectable(d->title.c_str(), m_want.compare_doc == d->id)) compare_with(d->id);
            ImGui::PopID();
        }
    if (!any_document) ui::text_dim("  (no other file open)");
    ImGui::Separator();
    ui::text_dim("this tensor");
    for (const char* name : kRequantTargets) {
        std::optional<uint32_t> type = ggml_type_from_name(name);
        if (!type) continue;
        ImGui::PushID(name);
        if (ImGui::Selectable(requantized_title(*type).c_str(), m_want.compare_type == type)) compare_with_requantized(*type);
        ImGui::PopID();
    }
    ImGui::EndCombo();
}

void WeightsPanel::range_mode_picker() {
    const char* current = "auto";
    for (const auto& [mode, name] : kRangeModes)
        if (mode == m_want.range_mode) current = name;
    ImGui::SetNextItemWidth(150);
    if (ImGui::BeginCombo("range", m_want.range ? "zoomed" : current)) {
        for (const auto& [mode, name] : kRangeModes)
            if (ImGui::Selectable(name, !m_want.range && mode == m_want.range_mode)) set_range_mode(mode);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "auto: p0.1-p99.9 (a little wider) when max |x| is over %.0fx that, else min-max.\n"
            "Values outside the range are counted in the end bins.",
            kOutlierRatio);
}

void WeightsPanel::toolbar(PanelContext& ctx, const TensorInfo& t) {
    ui::text_colored(palette().accent, escape_for_display(t.name, 120));
    ImGui::SameLine();
    const ShapeOrder order = shape_order(ctx.doc.model()->format);
    const std::string order_note = std::string("  (") + shape_order_label(order) + ")";
    if (t.quant)
        ui::text_dim(t.quant->type + " g" + std::to_string(t.quant->group_size) + "  " + shape_text(t.quant->logical_ne, ShapeStyle::times, order) +
                     "  (stored " + t.type.name + " " + shape_text(t.ne, ShapeStyle::times, order) + ")" + order_note);
    else
        ui::text_dim(t.type.name + "  " + shape_text(t.ne, ShapeStyle::times, order) + order_note);
    if (std::optional<uint64_t> experts = expert_count(*ctx.doc.model(), m_want.tensor)) {
        ImGui::SameLine(0, 20);
        int value = m_want.expert ? static_cast<int>(*m_want.expert) : -1;
        ImGui::SetNextItemWidth(180);
        std::string format = value < 0 ? "all experts" : "expert %d";
        if (ImGui::SliderInt("##expert", &value, -1, static_cast<int>(*experts) - 1, format.c_str()))
            m_want.expert = value < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(value));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("One expert of the %llu stacked ones (leftmost: all)", static_cast<unsigned long long>(*experts));
    }
    ImGui::SetNextItemWidth(160);
    ImGui::SliderInt("bins", &m_bins_input, kMinBins, kMaxBins, "%d", ImGuiSliderFlags_Logarithmic);
    if (!ImGui::IsItemActive()) m_want.bins = static_cast<uint32_t>(std::clamp(m_bins_input, kMinBins, kMaxBins));
    ImGui::SameLine();
    ImGui::Checkbox("log counts", &m_plot.log_scale);
    ImGui::SameLine();
    range_mode_picker();
    ImGui::SameLine();
    ImGui::BeginDisabled(!m_want.range);
    if (ImGui::Button("Reset zoom")) {
        m_want.range.reset();
        m_plot.set_view(std::nullopt);
    }
    ImGui::EndDisabled();
    ImGui::SameLine(0, 20);
    ImGui::BeginDisabled(!m_result || m_result->histogram.counts.empty());
    if (ImGui::Button("Export\xE2\x80\xA6")) {
        std::error_code ec;
        m_export_path = (std::filesystem::current_path(ec) / (file_stem(t.name) + ".hist.csv")).string();
        m_export_status.clear();
        m_export_open = true;
    }
    ImGui::EndDisabled();
    compare_picker(ctx);
    if (m_result && m_result->compared) {
        ImGui::SameLine();
        if (ImGui::Checkbox("error histogram", &m_error_view)) {
            // The two views have their own ranges; each starts unzoomed.
            m_plot.set_view(std::nullopt);
            m_want.range.reset();
        }
    }
}

void WeightsPanel::histogram_view(const Document& doc) {
    const WeightsResult& r = *m_result;
    std::vector<HistogramSeries> series;
    if (m_error_view && r.compared) {
        series.push_back(series_of(r.error_histogram, "difference (this \xE2\x88\x92 " + m_compare_title + ")"));
    } else {
        series.push_back(series_of(r.histogram, doc.title));
        if (r.compared) series.push_back(series_of(r.other_histogram, m_compare_title));
    }
    m_legend.clear();
    for (const HistogramSeries& s : series) m_legend.push_back(s.label);
    m_plot.x_title = m_error_view && r.compared ? "difference (this \xE2\x88\x92 other)" : "value";
    // The histogram takes its share of the height until the splitter under it is dragged.
    const float avail_y = ImGui::GetContentRegionAvail().y;
    if (m_plot_height <= 0) m_plot_height = avail_y * 0.55f;
    m_plot_height = std::clamp(m_plot_height, 120.0f, std::max(120.0f, avail_y - 120.0f));
    HistogramPlot::Event e = m_plot.draw("##histogram", series, ImVec2(0, m_plot_height));
    if (!m_png_pending.empty()) {
        request_capture({m_png_pending, m_plot.frame_min(), m_plot.frame_max(), std::move(m_png_guard)});
        m_png_pending.clear();
        m_png_guard = OutputGuard{};
    }
    if (m_error_view) return;  // the error histogram keeps its own range
    if (e == HistogramPlot::Event::zoomed && m_plot.view()) m_want.range = std::make_pair(m_plot.view()->lo, m_plot.view()->hi);
    if (e == HistogramPlot::Event::reset) m_want.range.reset();
}

bool WeightsPanel::accept_link(std::string_view link, Document& doc) {
    if (link.starts_with(kRequantScheme)) {
        link.remove_prefix(kRequantScheme.size());
        const std::vector<TensorInfo>& tensors = doc.model()->tensors;
        for (size_t i = 0; i < tensors.size(); ++i)
            if (tensors[i].name == link) {
                doc.select({SelectionKind::tensor, i});
                m_linked_requant = true;
                return true;
            }
        return false;
    }
    m_linked = parse_weights_link(link, *doc.model());
    if (m_linked) doc.select({SelectionKind::tensor, m_linked->tensor});
    return m_linked.has_value();
}

void WeightsPanel::follow_link(const Model& m) {
    const WeightsLink link = *std::exchange(m_linked, std::nullopt);
    m_want.tensor = link.tensor;
    if (expert_count(m, link.tensor).value_or(0) > link.expert.value_or(UINT64_MAX)) m_want.expert = link.expert;
    m_location.reset();
    if (link.row) {
        m_location = link;
        m_location->expert = m_want.expert;
        m_select_location = true;
    }
}

void WeightsPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const Model& m = *doc.model();
    poll();
    if (doc.selection.kind == SelectionKind::tensor && doc.selection.index < m.tensors.size() &&
        (!m_applied || doc.selection.index != m_want.tensor)) {
        m_want.tensor = doc.selection.index;
        m_want.expert.reset();
        m_want.range.reset();
        m_plot.set_view(std::nullopt);
    }
    if (std::exchange(m_linked_requant, false)) m_select_requant = m_run_requant = true;
    if (m_linked) follow_link(m);
    // The place a link named belongs to the tensor and expert it named.
    if (m_location && (m_location->tensor != m_want.tensor || m_location->expert != m_want.expert)) m_location.reset();
    if (!m_applied && doc.selection.kind != SelectionKind::tensor) {
        ui::text_dim("Select a tensor (Tensors table or navigator) to see its values here.");
        return;
    }
    if (m_want.tensor >= m.tensors.size()) return;
    bool changed = !m_applied || !(*m_applied == m_want);
    if (changed) {
        bool same_values = m_applied && m_applied->tensor == m_want.tensor && m_applied->expert == m_want.expert &&
            m_applied->compare_doc == m_want.compare_doc && m_applied->compare_type == m_want.compare_type && m_result && m_result->stats;
        bool same_scales = same_values && m_result->scales && m_result->scales->bins == m_want.bins;
        start(ctx, m_want, !same_values, !same_scales);
    }

    toolbar(ctx, m.tensors[m_want.tensor]);
    std::string requant_label = escape_for_display(m.tensors[m_want.tensor].name, 120);
    if (m_want.expert) requant_label += " expert " + std::to_string(*m_want.expert);
    const TensorInfo& shown = m.tensors[m_want.tensor];
    const std::vector<uint64_t>& shape = shown.quant ? shown.quant->logical_ne : shown.ne;
    // Requantize measures against the compared document, else against an open float twin.
    const uint64_t twin = m_want.compare_doc || !ctx.workspace ? 0 : float_twin_document(*ctx.workspace, ctx.doc, m_want.tensor);
    m_requant.follow(m_want.tensor, m_want.expert, std::move(requant_label), shape.empty() ? 1 : shape[0], twin ? twin : m_want.compare_doc,
                     ctx.workspace, twin != 0);
    if (m_job) {
        double p = (m_running->stage.load() + m_job.progress()) / kWeightsStages;
        ImGui::ProgressBar(static_cast<float>(std::min(1.0, p)), ImVec2(240, 0), "decoding\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel")) m_job.cancel();
    }
    if (!capture_message().empty()) {
        ImGui::SameLine();
        ui::text_dim(escape_for_display(capture_message(), 200));
    }
    if (!m_result) return;
    const WeightsResult& r = *m_result;
    if (!r.error.empty()) {
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().error, r.error);
        ImGui::PopTextWrapPos();
        return;
    }
    // Wide enough for two label-value pairs of 9-character numbers a row, and for a readable
    // block-scale histogram under the statistics.
    const float avail = ImGui::GetContentRegionAvail().x;
    const float pair_width =
        ImGui::CalcTextSize("mean |a-b|").x + 8 + ImGui::CalcTextSize("-0.00199918").x + 4 * ImGui::GetStyle().CellPadding.x;
    if (m_stats_width <= 0) m_stats_width = std::min({std::max(2 * pair_width + ImGui::GetStyle().ScrollbarSize, avail * 0.36f), 460.0f, avail * 0.5f});
    m_stats_width = std::clamp(m_stats_width, std::min(pair_width, avail * 0.3f), std::max(avail * 0.7f, 1.0f));
    ImGui::BeginChild("weights_stats", ImVec2(m_stats_width, 0), false);
    if (r.stats) weights_stats_table(*r.stats, r.stats_route);
    if (r.compared || !r.compare_error.empty()) {
        ImGui::Spacing();
        weights_compare_table(r, m_compare_title);
    }
    if (r.scales) {
        ImGui::Spacing();
        m_scales.draw(*r.scales);
    }
    ImGui::EndChild();
    ImGui::SameLine(0, 0);
    ui::splitter("##stats_split", m_stats_width, 1.0f, std::min(pair_width, avail * 0.3f), avail * 0.7f, ImGui::GetContentRegionAvail().y);
    ImGui::SameLine(0, 0);
    ImGui::BeginChild("weights_plot", ImVec2(0, 0), false);
    histogram_view(doc);
    if (!m_error_view || !r.compared) {
        std::string line = "range " + range_mode_caption(r.range_used);
        if (r.histogram.below || r.histogram.above)
            line += ": " + ui::with_separators(r.histogram.below) + " below and " + ui::with_separators(r.histogram.above) + " above it";
        ImGui::PushTextWrapPos(0.0f);
        ui::text_dim(line);
        ImGui::PopTextWrapPos();
    }
    ui::row_splitter("##plot_split", m_plot_height, 120.0f, m_plot_height + ImGui::GetContentRegionAvail().y - 120.0f);
    lower_tabs(ctx, r);
    ImGui::EndChild();
}

void WeightsPanel::lower_tabs(PanelContext& ctx, const WeightsResult& r) {
    if (!ImGui::BeginTabBar("weights_lower")) return;
    if (ImGui::BeginTabItem("First values")) {
        weights_values_table(r, r.row_length ? r.elements / r.row_length : 0, ctx.fonts);
        ImGui::EndTabItem();
    }
    ImGuiTabItemFlags flags = m_select_requant ? ImGuiTabItemFlags_SetSelected : 0;
    m_select_requant = false;
    if (ImGui::BeginTabItem("Requantize", nullptr, flags)) {
        m_requant.draw(ctx);
        if (m_run_requant) m_requant.run(ctx);
        m_run_requant = false;
        ImGui::EndTabItem();
    }
    if (m_location) {
        m_location_view.follow(ctx.jobs, {ctx.doc.model(), m_location->tensor, m_location->expert, *m_location->row, m_location->block});
        std::string label = "Row " + std::to_string(*m_location->row);
        if (m_location->block) label += " \xC2\xB7 block " + std::to_string(*m_location->block);
        flags = std::exchange(m_select_location, false) ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem((label + "###location").c_str(), nullptr, flags)) {
            m_location_view.draw(ctx.fonts);
            ImGui::EndTabItem();
        }
    }
    ImGui::EndTabBar();
}

void WeightsPanel::export_csv(const std::string& path, OutputGuard guard) {
    const WeightsResult& r = *m_result;
    std::vector<NamedHistogram> series = {{"values", &r.histogram}};
    if (r.compared) {
        series.push_back({"other", &r.other_histogram});
        series.push_back({"difference", &r.error_histogram});
    }
    std::string csv = histogram_csv(series);
    Status written = write_files_safely(guard, {{path, csv.data(), csv.size()}});
    m_export_status = written ? "wrote " + escape_for_display(path, 200) : "not written: " + written.error().to_string();
}

std::string WeightsPanel::png_path() const {
    std::string p = m_export_path;
    if (p.ends_with(".csv")) p.resize(p.size() - 4);
    return p + ".png";
}

void WeightsPanel::draw_windows(PanelContext& ctx) {
    if (!m_export_open) return;
    ImGui::SetNextWindowSize(ImVec2(560, 0), ImGuiCond_Appearing);
    if (!ImGui::Begin("Export histogram###weights_export", &m_export_open, ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    ui::text_dim("CSV: series, bin, lo, hi, count (values; with a comparison also the other tensor and the difference).");
    ui::text_dim("PNG: the plot as shown, written next to it with the extension .png.");
    ImGui::SetNextItemWidth(-1);
    ImGui::InputText("##path", &m_export_path);
    if (ImGui::Button("Save CSV") && m_result) export_csv(m_export_path, gui_output_guard(&ctx.doc, ctx.workspace));
    ImGui::SameLine();
    if (ImGui::Button("Save PNG of the plot")) {
        m_png_pending = png_path();
        m_png_guard = gui_output_guard(&ctx.doc, ctx.workspace);
        m_export_open = false;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(png_path(), 300).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Close")) m_export_open = false;
    if (!m_export_status.empty()) ui::text(m_export_status);
    ImGui::End();
}

}  // namespace mlens
