#include "panels/inference_template_view.h"

#include <algorithm>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::vector<Document*> against_candidates(PanelContext& ctx) {
    std::vector<Document*> out;
    if (ctx.workspace)
        for (const auto& d : ctx.workspace->documents())
            if (d->id != ctx.doc.id && d->ready() && d->is_model()) out.push_back(d.get());
    return out;
}

Document* find_document(PanelContext& ctx, uint64_t id) {
    for (Document* d : against_candidates(ctx))
        if (d->id == id) return d;
    return nullptr;
}

std::string label(const TemplateLabResult& lab, size_t i) {
    const TemplateRendering& r = lab.renderings[i];
    return "[" + std::to_string(i + 1) + "] " + (r.side == "against" ? "against " : "") + r.tmpl.source;
}

// The prompt as lines, each newline shown as ↵ at the end of its line.
std::string shown_prompt(const std::string& prompt) {
    std::string out;
    size_t start = 0;
    while (true) {
        const size_t end = prompt.find('\n', start);
        out += escape_for_display(prompt.substr(start, end == std::string::npos ? std::string::npos : end - start), 4000);
        if (end == std::string::npos) break;
        out += "\xE2\x86\xB5\n";
        start = end + 1;
    }
    return out;
}

}  // namespace

bool InferenceTemplateView::run(PanelContext& ctx) {
    TemplateLabRequest request;
    request.model = ctx.doc.path;
    if (Document* other = find_document(ctx, against_document)) request.against = other->path;
    m_conversation_error.clear();
    if (!messages_path.empty()) {
        auto conversation = read_conversation(messages_path);
        if (!conversation) {
            m_conversation_error = conversation.error().message;
            return false;
        }
        request.conversation = std::move(conversation).value();
    }
    m_job.cancel();
    m_job = ctx.jobs.start("template lab", [request](JobContext& job) { return run_template_lab(request, &job); });
    return true;
}

void InferenceTemplateView::picker(PanelContext& ctx) {
    Document* other = find_document(ctx, against_document);
    ImGui::SetNextItemWidth(260);
    if (ImGui::BeginCombo("against", other ? other->title.c_str() : "no other model")) {
        if (ImGui::Selectable("no other model", !other)) against_document = 0;
        for (Document* d : against_candidates(ctx)) {
            ImGui::PushID(static_cast<int>(d->id));
            if (ImGui::Selectable(d->title.c_str(), d->id == against_document)) against_document = d->id;
            ImGui::PopID();
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Another open model whose templates are rendered and compared too (a GGUF, an Ollama model, a safetensors folder)");
}

void InferenceTemplateView::rendering(const TemplateLabResult& lab, size_t i) {
    const TemplateRendering& r = lab.renderings[i];
    const std::string engine = r.tmpl.engine == TemplateEngine::llama_jinja ? "llama.cpp chat layer" : "Go text/template";
    const std::string header = label(lab, i) + "  \xC2\xB7  " + escape_for_display(r.tmpl.where, 80) + "  \xC2\xB7  " + engine + "##r" + std::to_string(i);
    if (!ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
    ImGui::PushTextWrapPos(0.0f);
    if (!r.rendered) {
        ui::text_colored(palette().error, "did not render: " + escape_for_display(r.failure->message, 1000));
        ImGui::PopTextWrapPos();
        return;
    }
    if (r.chat) {
        std::string caps;
        for (const auto& [name, value] : r.chat->capabilities)
            if (value) caps += (caps.empty() ? "" : ", ") + name.substr(name.starts_with("supports_") ? 9 : 0);
        ui::text_dim("format " + r.chat->format + " \xC2\xB7 supports " + (caps.empty() ? "nothing more" : caps) + " \xC2\xB7 thinking " +
                     (r.chat->supports_thinking ? "yes" : "no") + " \xC2\xB7 generation prompt \"" +
                     escape_for_display(r.chat->generation_prompt) + "\"");
    }
    ui::text_dim(std::to_string(r.prompt.size()) + " bytes \xC2\xB7 " + std::to_string(r.tokens.size()) + " tokens by " +
                 escape_for_display(r.tokenized_by, 120));
    ImGui::PopTextWrapPos();
    std::string text = shown_prompt(r.prompt);
    const float lines = static_cast<float>(std::count(text.begin(), text.end(), '\n') + 1);
    const float height = std::min(lines, 10.0f) * ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().FramePadding.y + 2;
    ImGui::InputTextMultiline(("##prompt" + std::to_string(i)).c_str(), &text, ImVec2(-1, height), ImGuiInputTextFlags_ReadOnly);
    std::string ids = "ids:";
    for (const TokenPiece& t : r.tokens) ids += " " + std::to_string(t.id);
    ImGui::PushTextWrapPos(0.0f);
    ui::text_dim(ids);
    ImGui::PopTextWrapPos();
}

void InferenceTemplateView::differences(const TemplateLabResult& lab) {
    if (lab.differences.empty()) return;
    ImGui::Separator();
    ui::text("Differences against " + label(lab, lab.differences.front().reference));
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("template_differences", 5, flags)) return;
    ImGui::TableSetupColumn("rendering", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("first byte", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("reference has");
    ImGui::TableSetupColumn("this has");
    ImGui::TableSetupColumn("token ids", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const TemplateDifference& d : lab.differences) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(label(lab, d.rendering));
        ImGui::TableNextColumn();
        if (d.same_text) {
            ui::text_colored(palette().ok, "same text");
        } else {
            ui::text(std::to_string(d.first_byte));
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("after \"%s\"", escape_for_display(d.common_before).c_str());
        }
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TableNextColumn();
        if (!d.same_text) ui::text_colored(palette().warning, "\"" + escape_for_display(d.reference_part) + "\"");
        ImGui::TableNextColumn();
        if (!d.same_text) ui::text_colored(palette().warning, "\"" + escape_for_display(d.rendering_part) + "\"");
        ImGui::PopTextWrapPos();
        ImGui::TableNextColumn();
        if (!d.compared_tokens)
            ui::text_dim("-");
        else if (d.same_ids)
            ui::text_colored(palette().ok, "same");
        else
            ui::text_colored(palette().warning, "differ from token " + std::to_string(d.first_token));
    }
    ImGui::EndTable();
}

void InferenceTemplateView::warnings(const TemplateLabResult& lab) {
    if (lab.warnings.empty()) {
        ui::text_colored(palette().ok, "no warnings");
        return;
    }
    ImGui::Separator();
    ui::text("Warnings");
    ImGui::PushTextWrapPos(0.0f);
    for (const TemplateWarning& w : lab.warnings)
        ui::text_colored(w.code == "W_TEMPLATE_FAILED" ? palette().error : palette().warning, w.code + "  " + label(lab, w.rendering) + ": " + w.message);
    ImGui::PopTextWrapPos();
}

void InferenceTemplateView::draw(PanelContext& ctx) {
    if (auto taken = m_job.try_take())
        if (taken->ok() || !is_cancelled(taken->error())) m_result = std::move(*taken);
    picker(ctx);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(260);
    ImGui::InputTextWithHint("messages", "default: a system and a user turn", &messages_path);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("A JSON file of OpenAI chat messages (role, content, reasoning_content, tool_calls, tool_call_id, name),\n"
                          "or {\"messages\": [...], \"tools\": [...], \"add_generation_prompt\": true}");
    ImGui::SameLine();
    ImGui::BeginDisabled(running());
    if (ImGui::Button("Render")) run(ctx);
    ImGui::EndDisabled();
    if (running()) {
        ImGui::SameLine();
        ui::text_dim("rendering\xE2\x80\xA6");
    }
    if (!m_conversation_error.empty()) ui::text_colored(palette().error, escape_for_display(m_conversation_error, 600));
    if (!m_result) {
        ui::text_dim("Render shows the conversation through every chat template of this model, each by its runtime's engine.");
        return;
    }
    if (!m_result->ok()) {
        ui::job_error_text(m_result->error());
        return;
    }
    const TemplateLabResult& lab = m_result->value();
    ImGui::BeginChild("template_lab");
    if (lab.renderings.empty()) ui::text_dim("no chat template found");
    warnings(lab);
    differences(lab);
    for (size_t i = 0; i < lab.renderings.size(); ++i) rendering(lab, i);
    ImGui::EndChild();
}

}  // namespace mlens
