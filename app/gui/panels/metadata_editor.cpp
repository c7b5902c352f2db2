#include "panels/metadata_editor.h"

#include <filesystem>
#include <utility>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/infer/dry_run.h"
#include "mlens/infer/worker_session.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "state/output_inputs.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"
#include "widgets/write_job_row.h"

namespace mlens {

namespace {

namespace fs = std::filesystem;

constexpr const char* kChatTemplateKey = "tokenizer.chat_template";

struct TypeChoice {
    const char* label;
    KeyType type;
};

const TypeChoice kTypeChoices[] = {
    {"STRING", {ValueType::string, std::nullopt}},
    {"UINT32", {ValueType::u32, std::nullopt}},
    {"INT32", {ValueType::i32, std::nullopt}},
    {"FLOAT32", {ValueType::f32, std::nullopt}},
    {"BOOL", {ValueType::boolean, std::nullopt}},
    {"UINT64", {ValueType::u64, std::nullopt}},
    {"INT64", {ValueType::i64, std::nullopt}},
    {"FLOAT64", {ValueType::f64, std::nullopt}},
    {"UINT8", {ValueType::u8, std::nullopt}},
    {"INT8", {ValueType::i8, std::nullopt}},
    {"UINT16", {ValueType::u16, std::nullopt}},
    {"INT16", {ValueType::i16, std::nullopt}},
    {"ARRAY[STRING]", {ValueType::array, ValueType::string}},
    {"ARRAY[INT32]", {ValueType::array, ValueType::i32}},
    {"ARRAY[UINT32]", {ValueType::array, ValueType::u32}},
    {"ARRAY[FLOAT32]", {ValueType::array, ValueType::f32}},
};

int choice_of(const KeyType& t) {
    for (size_t i = 0; i < std::size(kTypeChoices); ++i)
        if (kTypeChoices[i].type.type == t.type && kTypeChoices[i].type.element == t.element) return static_cast<int>(i);
    return 0;
}

// The value of an entry as the editor's text: JSON for arrays, the exact text otherwise.
std::string editable_text(const Value& v) {
    if (v.is_string()) return v.string_value();
    if (!v.is_array()) return v.scalar.to_string();
    return value_to_json(v, UINT64_MAX).dump();
}

std::string default_save_path(const std::string& path) {
    const fs::path p(path);
    return (p.parent_path() / (p.stem().string() + ".edited" + p.extension().string())).string();
}

}  // namespace

void MetadataEditor::open_add(std::string key) {
    m_mode = Mode::add;
    m_key = std::move(key);
    m_text.clear();
    m_bool = false;
    m_type = 0;
    m_problem.clear();
}

void MetadataEditor::open_chat_template(const Document& doc, std::optional<std::string> text) {
    m_mode = Mode::chat_template;
    m_key = kChatTemplateKey;
    const MetadataEntry* e = doc.model()->find(kChatTemplateKey);
    m_text = text ? std::move(*text) : e && e->value.is_string() ? e->value.string_value() : std::string();
    m_problem.clear();
}

void MetadataEditor::toolbar(PanelContext& ctx) {
    Document& doc = ctx.doc;
    if (!doc.model() || doc.model()->format == Format::unknown) return;
    if (ImGui::SmallButton("Add key\xE2\x80\xA6")) open_add();
    ImGui::SameLine();
    if (doc.model()->format == Format::gguf && ImGui::SmallButton("Chat template\xE2\x80\xA6")) open_chat_template(doc);
    ImGui::SameLine();
    ImGui::BeginDisabled(!doc.edits.can_undo());
    if (ImGui::SmallButton("Undo")) doc.edits.undo();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!doc.edits.can_redo());
    if (ImGui::SmallButton("Redo")) doc.edits.redo();
    ImGui::EndDisabled();
    ImGui::SameLine();
    auto plan = doc.edits.plan(*doc.model());
    ImGui::BeginDisabled(!plan || !*plan);
    if (ImGui::SmallButton("Save As\xE2\x80\xA6")) {
        m_save_open = true;
        if (m_save_path.empty()) m_save_path = default_save_path(doc.path);
        m_outcome.reset();
    }
    ImGui::EndDisabled();
}

void MetadataEditor::row_menu(PanelContext& ctx, size_t entry) {
    const MetadataEntry& e = ctx.doc.model()->metadata[entry];
    if (ImGui::MenuItem("Edit value\xE2\x80\xA6")) {
        m_mode = e.key == kChatTemplateKey ? Mode::chat_template : Mode::set;
        m_key = e.key;
        m_text = editable_text(e.value);
        m_bool = !e.value.is_array() && !e.value.is_string() && e.value.scalar.bits != 0;
        m_problem.clear();
    }
    if (ImGui::MenuItem("Rename\xE2\x80\xA6")) {
        m_mode = Mode::rename;
        m_key = e.key;
        m_new_key = e.key;
        m_problem.clear();
    }
    if (ImGui::MenuItem("Delete")) ctx.doc.edits.stage(Edit::remove(e.key));
}

void MetadataEditor::stage_current(PanelContext& ctx) {
    const Model& m = *ctx.doc.model();
    if (m_mode == Mode::rename) {
        ctx.doc.edits.stage(Edit::rename(m_key, m_new_key));
        m_mode = Mode::closed;
        return;
    }
    std::optional<KeyType> type;
    if (m_mode == Mode::add) type = kTypeChoices[m_type].type;
    if (m_mode == Mode::chat_template) type = KeyType{ValueType::string, std::nullopt};
    const MetadataEntry* existing = m.find(m_key);
    KeyType checked = type ? *type : KeyType{ValueType::string, std::nullopt};
    if (!type && existing)
        checked = KeyType{
            existing->value.type,
            existing->value.is_array() && existing->value.array ? std::optional(existing->value.array->element_type) : std::nullopt};
    if (m.format == Format::safetensors) {
        type = KeyType{ValueType::string, std::nullopt};
        checked = *type;
    }
    const std::string text = checked.type == ValueType::boolean ? (m_bool ? "true" : "false") : m_text;
    if (auto v = value_from_text(text, checked); !v) {
        m_problem = std::string(code_name(v.error().code)) + ": " + v.error().message;
        return;
    }
    ctx.doc.edits.stage(Edit::set(m_key, text, type));
    m_mode = Mode::closed;
}

void MetadataEditor::editor_window(PanelContext& ctx) {
    if (m_mode == Mode::closed) return;
    const Model& m = *ctx.doc.model();
    const bool chat = m_mode == Mode::chat_template;
    const char* what = m_mode == Mode::add ? "Add key" : m_mode == Mode::rename ? "Rename key" : chat ? "Chat template" : "Edit value";
    const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(chat ? ImVec2(760, 480) : ImVec2(560, 0), ImGuiCond_Appearing);
    bool open = true;
    std::string title = std::string(what) + " \xE2\x80\x94 " + ctx.doc.title + "###metadata_editor_" + std::to_string(ctx.doc.id);
    if (!ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    const MetadataEntry* existing = m.find(m_key);
    if (m_mode == Mode::add) {
        ImGui::SetNextItemWidth(-80);
        if (ImGui::InputText("key", &m_key))
            if (auto known = known_key_type(m_key)) m_type = choice_of(*known);
        ImGui::SetNextItemWidth(200);
        if (ImGui::BeginCombo("type", kTypeChoices[m_type].label)) {
            for (size_t i = 0; i < std::size(kTypeChoices); ++i)
                if (ImGui::Selectable(kTypeChoices[i].label, m_type == static_cast<int>(i))) m_type = static_cast<int>(i);
            ImGui::EndCombo();
        }
    } else {
        ui::text_dim(escape_for_display(m_key, 200) +
                     (existing ? "   " + format_type(existing->value) : std::string("   STRING (new key)")));
    }
    const ValueType type = m_mode == Mode::add ? kTypeChoices[m_type].type.type : existing ? existing->value.type : ValueType::string;
    if (m_mode == Mode::rename) {
        ImGui::SetNextItemWidth(-80);
        ImGui::InputText("new key", &m_new_key);
    } else if (type == ValueType::boolean) {
        ImGui::Checkbox("true", &m_bool);
    } else if (type == ValueType::string || type == ValueType::array || chat) {
        ImGui::PushFont(ctx.fonts.mono());
        const float chat_height = (ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing() * 3) * 0.55f;
        ImGui::InputTextMultiline("##value", &m_text, ImVec2(-1, chat ? chat_height : 160));
        ImGui::PopFont();
        if (type == ValueType::array) ui::text_dim("a JSON array, e.g. [1, 2, 3] or [\"a\", \"b\"]");
    } else {
        ImGui::SetNextItemWidth(-80);
        ImGui::InputText("value", &m_text);
    }
    if (!m_problem.empty()) ui::text_colored(palette().error, escape_for_display(m_problem, 300));
    if (chat) preview_pane();
    if (ImGui::Button("Stage")) stage_current(ctx);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) m_mode = Mode::closed;
    if (chat) {
        ImGui::SameLine();
        ImGui::BeginDisabled(previewing() || m_text.empty());
        if (ImGui::Button("Preview")) preview_chat_template(ctx);
        ImGui::EndDisabled();
        ImGui::SameLine();
        ui::text_dim(previewing() ? "rendering through llama.cpp\xE2\x80\xA6" : "renders a sample conversation through llama.cpp");
    }
    ImGui::End();
    if (!open) m_mode = Mode::closed;
}

void MetadataEditor::staged_view(PanelContext& ctx) {
    Document& doc = ctx.doc;
    auto plan = doc.edits.plan(*doc.model());
    if (!plan) return;
    const size_t staged = doc.edits.edits().edits.size();
    const std::string label = std::to_string(staged) + (staged == 1 ? " staged edit" : " staged edits") + " (not saved)###staged_edits";
    ImGui::SetNextItemOpen(true, ImGuiCond_Once);
    if (!ImGui::CollapsingHeader(label.c_str())) return;
    if (!*plan) {
        ui::text_colored(palette().error, escape_for_display(plan->error().to_string(), 400));
    } else {
        const EditPlan& p = **plan;
        ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable;
        const float avail = ImGui::GetContentRegionAvail().x;
        if (ImGui::BeginTable("staged", 4, flags)) {
            ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width("renamed", "change", avail));
            ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, avail * 0.3f);
            ImGui::TableSetupColumn("before \xE2\x86\x92 after", ImGuiTableColumnFlags_WidthStretch);
            ImGui::TableSetupColumn("entry bytes", ImGuiTableColumnFlags_WidthFixed,
                                    ui::fitted_width("725113 \xE2\x86\x92 725241", "entry bytes", avail));
            ImGui::TableHeadersRow();
            for (const KeyChange& c : p.changes) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ui::cell_text(key_change_kind_name(c.kind));
                ImGui::TableNextColumn();
                ui::cell_text(escape_for_display(c.key, 80) +
                              (c.kind == KeyChangeKind::renamed ? " \xE2\x86\x92 " + escape_for_display(c.new_key, 80) : ""));
                ImGui::TableNextColumn();
                ui::cell_text(c.kind == KeyChangeKind::added         ? c.value_after
                                  : c.kind == KeyChangeKind::removed ? c.value_before
                                                                     : c.value_before + " \xE2\x86\x92 " + c.value_after);
                ImGui::TableNextColumn();
                ui::cell_text(std::to_string(c.bytes_before) + " \xE2\x86\x92 " + std::to_string(c.bytes_after));
            }
            ImGui::EndTable();
        }
        ui::text_dim("header " + std::to_string(p.old_header_bytes) + " \xE2\x86\x92 " + std::to_string(p.new_header_bytes) +
                     " bytes; tensors " +
                     (p.data_shift() == 0 ? std::string("stay where they are") : "move by " + std::to_string(p.data_shift()) + " bytes") +
                     "; tensor data copied as is, never re-encoded");
    }
    for (size_t i = 0; i < doc.edits.edits().edits.size(); ++i) {
        const Edit& e = doc.edits.edits().edits[i];
        ImGui::PushID(static_cast<int>(i));
        if (ImGui::SmallButton("\xE2\x9C\x95")) doc.edits.unstage(i);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drop this edit");
        ImGui::SameLine();
        ui::text_dim(std::string(metadata_edit_kind_name(e.kind)) + " " + escape_for_display(e.key, 80));
        ImGui::PopID();
        if (i + 1 < doc.edits.edits().edits.size()) ImGui::SameLine(0, 16);
    }
}

void MetadataEditor::preview_chat_template(PanelContext& ctx) {
    if (m_preview_job || m_text.empty()) return;
    m_preview_text = m_text;
    m_preview.reset();
    m_preview_job = ctx.jobs.start("preview chat template", [path = ctx.doc.path, text = m_text](JobContext& job) -> Result<ChatRender> {
        SessionOptions options;
        options.vocab_only = true;
        auto session = WorkerSession::load(path, options, &job);
        if (!session) return session.error();
        return (*session)->run<ChatTemplateOp>({sample_conversation(), true, text});
    });
}

void MetadataEditor::preview_pane() {
    if (std::optional<Result<ChatRender>> taken = m_preview_job.try_take())
        m_preview = std::make_shared<const Result<ChatRender>>(std::move(*taken));
    const float height =
        std::max(ImGui::GetTextLineHeightWithSpacing() * 3, ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing() * 2);
    if (!m_preview) {
        ui::text_dim("Preview: the sample conversation (system, user, assistant, user) rendered with this template.");
        return;
    }
    if (m_preview_text != m_text) ui::text_colored(palette().warning, "This preview is of an earlier text: Preview again.");
    if (!*m_preview) {
        ui::text_colored(palette().error, "llama.cpp: " + escape_for_display(m_preview->error().message, 400));
        return;
    }
    ui::text_dim("rendered by llama.cpp: " + plural((*m_preview)->tokens.size(), "token"));
    std::string shown = (*m_preview)->prompt;
    ImGui::InputTextMultiline("##preview", &shown, ImVec2(-1, height), ImGuiInputTextFlags_ReadOnly);
}

void MetadataEditor::save_as(PanelContext& ctx, std::string path) {
    m_save_path = std::move(path);
    auto plan = ctx.doc.edits.plan(*ctx.doc.model());
    if (!plan || !*plan || m_job) return;
    std::shared_ptr<const Model> model = ctx.doc.model();
    WriteEditOptions options;
    options.guard = gui_output_guard(&ctx.doc, ctx.workspace);
    m_outcome.reset();
    m_saved_path.clear();
    m_job = ctx.jobs.start(
        "save " + escape_for_display(fs::path(m_save_path).filename().string(), 60),
        [model, plan, path = m_save_path, options](JobContext& job) mutable {
            options.dry_run = dry_run_checker(&job);
            return write_edit(*model, **plan, path, &job, options);
        });
}

void MetadataEditor::save_window(PanelContext& ctx) {
    if (std::optional<Result<EditOutcome>> taken = m_job.try_take()) {
        if (*taken) {
            m_saved_path = (*taken)->path;
            ctx.doc.edits.saved();
        }
        m_outcome = std::make_shared<const Result<EditOutcome>>(std::move(*taken));
    }
    if (!m_save_open) return;
    const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(640, 0), ImVec2(FLT_MAX, FLT_MAX));
    std::string title = "Save As \xE2\x80\x94 " + ctx.doc.title + "###metadata_save_" + std::to_string(ctx.doc.id);
    if (!ImGui::Begin(title.c_str(), &m_save_open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    ui::text_dim("Writes a new file with the staged edits; the tensor data is copied as is and checked byte for byte.");
    ImGui::BeginDisabled(static_cast<bool>(m_job));
    ImGui::SetNextItemWidth(560);
    ImGui::InputText("file", &m_save_path);
    ImGui::EndDisabled();
    auto plan = ctx.doc.edits.plan(*ctx.doc.model());
    if (ui::write_job_row(plan && *plan && !m_save_path.empty() && !m_job, m_job, m_save_open, "Save")) save_as(ctx, m_save_path);
    if (m_outcome && !ui::write_failure_text(*m_outcome)) {
        const EditOutcome& o = **m_outcome;
        const EditVerification& v = o.verification;
        ui::text_colored(palette().ok, "\xE2\x9C\x93 Saved and verified: " + escape_for_display(o.path, 200));
        ui::text_dim("re-opened, keys as planned, " + std::to_string(v.tensors_equal) + " of " + plural(v.tensors, "tensor") +
                     " byte-identical to the original, fsck " + plural(v.fsck_errors, "error") + ", " +
                     plural(v.fsck_warnings, "warning") + "; data by " + data_path_name(o.data_path));
        if (const std::string loads = v.load_summary(); !loads.empty()) ui::text_dim("the output " + escape_for_display(loads, 400));
        ImGui::BeginDisabled(!ctx.workspace);
        if (ImGui::SmallButton("Open the saved file") && ctx.workspace) ctx.workspace->open(m_saved_path);
        ImGui::EndDisabled();
    }
    ImGui::End();
}

void MetadataEditor::draw_windows(PanelContext& ctx) {
    editor_window(ctx);
    save_window(ctx);
}

}  // namespace mlens
