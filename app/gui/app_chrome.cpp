// The shell's chrome: menu bar (Help opens help_windows.cpp's windows), welcome screen, status bar and About window.
#include <cstdio>

#include <imgui.h>

#include "app_shell.h"
#include "mlens/infer/llama_log.h"
#include "mlens/ollama/store.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/range_cache.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/util/build_info.h"
#include "theme.h"
#include "widgets/load_verdict.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::string ms_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
    return buf;
}

}  // namespace

void AppShell::menu_bar() {
    if (!ImGui::BeginMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open file\xE2\x80\xA6", "Ctrl+O")) m_chooser.open(m_settings.last_folder);
        if (ImGui::MenuItem("Open folder\xE2\x80\xA6")) m_chooser.open(m_settings.last_folder);
        if (ImGui::MenuItem("Open URL\xE2\x80\xA6")) m_open_url.open();
        if (ImGui::BeginMenu("Open Ollama store")) {
            const std::vector<StoreLocation> stores = find_stores();
            for (const StoreLocation& store : stores)
                if (ImGui::MenuItem(escape_for_display(store.path, 160).c_str())) open(store.path);
            if (stores.empty()) {
                std::string looked;
                for (const StoreLocation& loc : default_store_locations())
                    looked += (looked.empty() ? "" : ", ") + escape_for_display(loc.path, 120);
                ImGui::MenuItem(("No store at " + looked).c_str(), nullptr, false, false);
            }
            ImGui::Separator();
            if (ImGui::MenuItem("Choose a store folder\xE2\x80\xA6")) m_chooser.open(m_settings.last_folder);
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Recent files", !m_settings.recent_files.empty())) {
            std::string chosen;
            for (const std::string& path : m_settings.recent_files)
                if (ImGui::MenuItem(escape_for_display(path, 160).c_str())) chosen = path;
            ImGui::Separator();
            if (ImGui::MenuItem("Clear list")) m_settings.recent_files.clear();
            ImGui::EndMenu();
            if (!chosen.empty()) open(chosen);
        }
        if (ImGui::MenuItem("Open demo models", nullptr, false, !m_demo_files.empty())) open_all(m_demo_files);
        ImGui::Separator();
        Document* active = m_workspace.active();
        if (ImGui::MenuItem("Close", "Ctrl+W", false, active != nullptr)) close_document(active->id);
        if (ImGui::MenuItem("Close all", nullptr, false, !m_workspace.documents().empty())) {
            std::vector<uint64_t> ids;
            for (const auto& doc : m_workspace.documents()) ids.push_back(doc->id);
            for (uint64_t id : ids) close_document(id);
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Quit", "Ctrl+Q")) m_quit = true;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        for (const PanelInfo& p : panel_registry()) {
            bool shown = m_settings.panel_shown(p.id);
            if (ImGui::MenuItem(p.title, nullptr, &shown)) m_settings.panel_visible[p.id] = shown;
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Dark theme", nullptr, !m_settings.light_theme)) {
            m_settings.light_theme = false;
            apply_theme(false, m_fonts.scale());
        }
        if (ImGui::MenuItem("Light theme", nullptr, m_settings.light_theme)) {
            m_settings.light_theme = true;
            apply_theme(true, m_fonts.scale());
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Help")) {
        if (ImGui::MenuItem("Keyboard shortcuts")) m_show_shortcuts = true;
        if (ImGui::MenuItem("What each panel shows")) m_show_panel_guide = true;
        ImGui::Separator();
        if (ImGui::MenuItem("About ModelLens")) m_show_about = true;
        ImGui::EndMenu();
    }
    ImGui::EndMenuBar();
}

void AppShell::welcome(float height) {
    ImGui::BeginChild("welcome", ImVec2(0, height), false);
    float width = ImGui::GetContentRegionAvail().x;
    float column = std::min(560.0f, width * 0.8f);
    ImGui::Dummy(ImVec2(0, height * 0.18f));
    ImGui::SetCursorPosX((width - column) * 0.5f);
    ImGui::BeginGroup();
    ImGui::SetWindowFontScale(1.6f);
    ui::text_colored(palette().accent, "ModelLens");
    ImGui::SetWindowFontScale(1.0f);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + column);
    ui::text(
        "Open a GGUF model to see everything in it: header, metadata, tensors, tokenizer and "
        "what the reader found wrong.");
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    if (ImGui::Button("Open file\xE2\x80\xA6", ImVec2(160, 0))) m_chooser.open(m_settings.last_folder);
    if (!m_demo_files.empty()) {
        ImGui::SameLine();
        if (ImGui::Button(("Open " + std::to_string(m_demo_files.size()) + " demo models").c_str())) open_all(m_demo_files);
    }
    ui::text_dim("or drop files onto this window \xC2\xB7 Ctrl+O");
    if (!m_settings.recent_files.empty()) {
        ImGui::Spacing();
        ImGui::Spacing();
        ui::text_dim("Recent files");
        std::string chosen;
        for (const std::string& path : m_settings.recent_files) {
            if (ImGui::Selectable(escape_for_display(path, 120).c_str(), false, 0, ImVec2(column, 0))) chosen = path;
        }
        if (!chosen.empty()) open(chosen);
    }
    ImGui::EndGroup();
    ImGui::EndChild();
}

namespace {

// The Health scan's counts once one ran: "values: 2 errors, 1 warning (19 of 21 tensors)", or
// "values ok (21 of 21 tensors)" in the ok colour, unless parts of a split model are missing
// ("(16 of 16 tensors in the 2 of 3 files present)"); nothing before a scan, so that "structure
// ok" is not read as a verdict on the values.
void value_scan_status(const std::optional<ValueScanCounts>& scan) {
    if (!scan) return;
    ImGui::SameLine();
    const std::string scanned =
        "(" + std::to_string(scan->tensors_scanned) + " of " + plural(scan->tensors, "tensor") + scan->present_files + ")";
    if (scan->errors == 0 && scan->warnings == 0 && !scan->present_files.empty()) {
        ui::text_colored(palette().warning, "\xC2\xB7 values: no findings " + scanned);
        return;
    }
    if (scan->errors == 0 && scan->warnings == 0) {
        ui::text_colored(palette().ok, "\xC2\xB7 values ok " + scanned);
        return;
    }
    ui::text_dim("\xC2\xB7 values:");
    if (scan->errors) {
        ImGui::SameLine();
        ui::text_colored(palette().error, plural(scan->errors, "error"));
    }
    if (scan->warnings) {
        ImGui::SameLine();
        ui::text_colored(palette().warning, plural(scan->warnings, "warning"));
    }
    ImGui::SameLine();
    ui::text_dim(scanned);
}

}  // namespace

void AppShell::status_bar() {
    ImGui::Separator();
    Document* doc = m_workspace.active();
    if (doc && doc->ready() && doc->is_store()) {
        const StoreListing& l = doc->store()->listing;
        ui::text("Ollama store \xC2\xB7 " + std::to_string(l.models.size()) + " models \xC2\xB7 " + std::to_string(l.blob_files.size()) +
                 " blob files \xC2\xB7 listed in " + ms_text(doc->parse_ms));
    } else if (doc && doc->ready() && doc->is_imatrix()) {
        const Imatrix& m = *doc->imatrix();
        ui::text(std::string("importance matrix (") + imatrix_format_name(m.format) + ") \xC2\xB7 " + human_bytes(m.source->size()) +
                 " \xC2\xB7 " + std::to_string(m.entries.size()) + " entries \xC2\xB7 read in " + ms_text(doc->parse_ms));
    } else if (doc && doc->ready()) {
        const ModelSummary& s = doc->index()->summary;
        std::string text = format_and_version(s.format, s.version);
        if (!doc->model()->files.empty() && doc->model()->files[0].big_endian) text += " (big-endian)";
        text += " \xC2\xB7 " + human_bytes(s.file_bytes) + " \xC2\xB7 parsed in " + ms_text(doc->parse_ms);
        if (!s.architecture.empty()) text += " \xC2\xB7 " + escape_for_display(s.architecture, 40);
        if (s.file_type) text += " " + s.file_type_name;
        text += " \xC2\xB7 " + ui::with_separators(s.tensor_count) + " tensors \xC2\xB7 " + human_count(s.parameters) + " parameters";
        ui::text(text);
        ImGui::SameLine();
        if (s.errors == 0 && s.warnings == 0) {
            ui::text_colored(palette().ok, "\xC2\xB7 structure ok");
        } else {
            ui::text_dim("\xC2\xB7");
            if (s.warnings) {
                ImGui::SameLine();
                ui::text_colored(palette().warning, std::to_string(s.warnings) + (s.warnings == 1 ? " warning" : " warnings"));
            }
            if (s.errors) {
                ImGui::SameLine();
                ui::text_colored(palette().error, std::to_string(s.errors) + (s.errors == 1 ? " error" : " errors"));
            }
        }
        value_scan_status(doc->value_scan);
        const Loadability& loads = doc->index()->loads;
        ImGui::SameLine();
        ui::text_dim("\xC2\xB7");
        ImGui::SameLine();
        ui::text_colored(ui::load_verdict_color(loads.verdict), loads.verdict == LoadVerdict::loads ? "loads in llama.cpp"
                                                                : loads.verdict == LoadVerdict::loads_after_compat
                                                                    ? "loads in llama.cpp after the compat rewrite"
                                                                    : "does not load in llama.cpp");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(loads.summary(), 1000).c_str());
    } else if (doc && doc->state == DocumentState::opening) {
        ui::text_dim("opening " + doc->title + " \xE2\x80\xA6");
    } else {
        ui::text_dim("ModelLens " MLENS_VERSION);
    }

    for (std::string& w : take_range_cache_warnings()) m_cache_warnings.push_back(escape_for_display(w, 600));
    if (!m_cache_warnings.empty()) {
        ImGui::SameLine();
        ui::text_colored(palette().warning, "\xC2\xB7 remote cache off");
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            for (const std::string& w : m_cache_warnings) ui::text(w);
            ImGui::EndTooltip();
        }
    }

    std::vector<JobPtr> running;
    for (const JobPtr& job : m_jobs.jobs())
        if (!job->done()) running.push_back(job);
    if (running.empty()) return;
    const JobPtr& job = running.front();
    float bar_w = 140.0f;
    std::string label = "job: " + job->name();
    if (running.size() > 1) label += "  (+" + std::to_string(running.size() - 1) + ")";
    // Remote models: what this session has downloaded so far, growing while a job fetches.
    if (const HttpTotals http = http_totals(); http.requests > 0)
        label += "  \xC2\xB7 " + std::to_string(http.requests) + (http.requests == 1 ? " request \xC2\xB7 " : " requests \xC2\xB7 ") +
                 human_bytes(http.bytes);
    float label_w = ImGui::CalcTextSize(label.c_str()).x;
    float cancel_w = ImGui::CalcTextSize("Cancel").x + ImGui::GetStyle().FramePadding.x * 2;
    float spacing = ImGui::GetStyle().ItemSpacing.x;
    ImGui::SameLine(
        std::max(ImGui::GetCursorPosX() + spacing, ImGui::GetWindowContentRegionMax().x - label_w - bar_w - cancel_w - 3 * spacing));
    ui::text_dim(label);
    ImGui::SameLine();
    ImGui::ProgressBar(static_cast<float>(job->progress()), ImVec2(bar_w, ImGui::GetTextLineHeight()));
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) job->cancel();
}

void AppShell::about_window() {
    if (!m_show_about) return;
    ImGui::SetNextWindowSize(ImVec2(520, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("About ModelLens", &m_show_about, ImGuiWindowFlags_NoCollapse)) {
        ui::text_colored(palette().accent, std::string("ModelLens " MLENS_VERSION " (git ") + modellens_revision() + ")");
        ui::text("An inspector and debugger for LLM model files.");
        ImGui::Separator();
        ui::label_value("Dear ImGui", ImGui::GetVersion());
        ui::text(llama_cpp_version());
        if (!m_platform_info.empty()) ui::text(m_platform_info);
        ImGui::Separator();
        ui::text_dim("Fonts (" + std::to_string(m_fonts.glyph_count()) + " glyphs)");
        for (const FontFile& f : m_fonts.files())
            ui::text(escape_for_display(f.path, 200) + (f.index ? " #" + std::to_string(f.index) : ""));
        ImGui::Separator();
        ui::text_dim("Settings");
        ui::text(m_options.settings_path.empty() ? "(not saved in this mode)" : escape_for_display(m_options.settings_path, 200));
        ImGui::Separator();
        ui::text_dim("Keys: Ctrl+O open \xC2\xB7 Ctrl+W close \xC2\xB7 Ctrl+F filter the focused table \xC2\xB7 Ctrl+Q quit");
    }
    ImGui::End();
}

}  // namespace mlens
