#include "panels/store_panel.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include <imgui.h>

#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/store_summary.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "panels/store_summary_view.h"
#include "panels/store_tensors_view.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/load_verdict.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// A media type with at most this many layers shows them when opened; more start closed.
constexpr size_t kOpenLayerGroup = 8;

std::string date_text(int64_t seconds) {
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    if (!gmtime_r(&t, &tm)) return "?";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

std::string size_text(const std::optional<uint64_t>& size) { return size ? human_bytes(*size) : "?"; }

const StoreListing& listing_of(const Document& doc) { return doc.store()->listing; }

// The verdict cell: a mark and the reason, coloured by severity; the full reason on hover.
void verdict_text(const ModelCheck& c, bool digests_pending) {
    switch (c.verdict()) {
        case Verdict::errors:
            ui::cell_text_colored(palette().error, "\xE2\x9C\x96 " + c.short_reason());
            break;
        case Verdict::warnings:
            ui::cell_text_colored(palette().warning, "\xE2\x9A\xA0 " + c.reason_text());
            break;
        case Verdict::unverified:
            ui::cell_text_dim("\xE2\x80\xA6 not yet verified");
            break;
        default:
            ui::text_colored(palette().ok,
                             c.digests_verified    ? "\xE2\x9C\x93 ok, digests verified"
                                 : digests_pending ? "\xE2\x9C\x93 ok, verifying digests"
                                                   : "\xE2\x9C\x93 ok, digests not verified");
    }
}

constexpr std::string_view kModelScheme = "store-model:";
constexpr std::string_view kExportScheme = "export:";  // the model, with its Export window open

std::string model_link(const StoreListing& l, std::optional<size_t> model) {
    return std::string(kModelScheme) + (model ? l.models[*model].ref.name.full() : std::string());
}

// The model a link names ("store-model:NAME", "export:NAME", or the bare NAME as --select gives
// it; NAME in short or full form); an empty index for "store-model:" (every model); nothing when the link
// names no model of the store.
std::optional<std::optional<size_t>> linked_model(std::string_view link, const StoreListing& l) {
    if (link.starts_with(kExportScheme) && link.size() > kExportScheme.size()) link.remove_prefix(kExportScheme.size());
    bool scheme = link.starts_with(kModelScheme);
    if (scheme) link.remove_prefix(kModelScheme.size());
    if (scheme && link.empty()) return std::optional<size_t>();
    for (size_t i = 0; i < l.models.size(); ++i)
        if (l.models[i].ref.name.display() == link || l.models[i].ref.name.full() == link) return std::optional<size_t>(i);
    return std::nullopt;
}

}  // namespace

bool StoreModelsPanel::accept_link(std::string_view link, Document& doc) {
    std::optional<std::optional<size_t>> model = linked_model(link, listing_of(doc));
    if (model) m_model = *model;
    return model.has_value();
}

bool StorePanel::accept_link(std::string_view link, Document& doc) {
    const bool open_export = link.starts_with(kExportScheme);
    std::optional<std::optional<size_t>> model = linked_model(link, listing_of(doc));
    m_open_export = open_export && model && *model;
    if (model) m_model = *model;
    return model.has_value();
}

std::string StoreModelsPanel::badge(const Document& doc) const {
    return doc.store() ? std::to_string(listing_of(doc).models.size()) : std::string();
}

void StoreModelsPanel::draw(PanelContext& ctx) {
    advance_digest_pass(ctx.doc, ctx.jobs);
    Document& doc = ctx.doc;
    const StoreListing& l = listing_of(doc);
    ui::cell_text_dim(escape_for_display(l.root, 200));
    if (std::string pass = digest_pass_text(*doc.store()); !pass.empty()) ui::text_dim(pass);
    if (ImGui::Selectable("All models", !m_model)) doc.follow(model_link(l, std::nullopt));
    ImGui::Separator();
    for (size_t i = 0; i < l.models.size(); ++i) {
        const ModelListing& m = l.models[i];
        ImGui::PushID(static_cast<int>(i));
        std::string label = escape_for_display(m.ref.name.display(), 80);
        if (ImGui::Selectable(label.c_str(), m_model == i)) doc.follow(model_link(l, i));
        ui::text_dim("   " + size_text(m.size) + " \xC2\xB7 " + (m.format.empty() ? "?" : m.format) +
                     (m.quantization.empty() ? "" : " \xC2\xB7 " + escape_for_display(m.quantization, 30)));
        if (m.check.verdict() == Verdict::errors) {
            ui::cell_text_colored(palette().error, "   \xE2\x9C\x96 " + m.check.reason_text());
        } else if (m.check.verdict() == Verdict::warnings) {
            ui::cell_text_colored(palette().warning, "   \xE2\x9A\xA0 " + m.check.reason_text());
        }
        ImGui::PopID();
    }
    if (l.models.empty()) ui::text_dim("The store has no models.");
}

void StorePanel::models_table(Document& doc) {
    const StoreListing& l = listing_of(doc);
    const BlobFilesSummary blobs = l.blob_summary();
    size_t rejected = 0;
    for (const ModelListing& m : l.models) rejected += !m.ok();
    for (const std::string& w : doc.store()->cache_warnings) ui::text_colored(palette().warning, escape_for_display(w, 300));
    ui::text_dim(std::to_string(l.models.size()) + " models (" + std::to_string(rejected) + " rejected) \xC2\xB7 " +
                 std::to_string(l.blob_files.size()) + " files in blobs/ (" +
                 (blobs.unreferenced ? std::to_string(*blobs.unreferenced) + " unreferenced" : std::string("unreferenced unknown")) + ", " +
                 std::to_string(blobs.partial) + " partial downloads) \xC2\xB7 " + std::to_string(l.diagnostics.size()) +
                 " scan findings \xC2\xB7 " + digest_pass_text(*doc.store()));
    for (const Diagnostic& d : l.diagnostics)
        ui::text_colored(d.severity == Severity::error ? palette().error : palette().warning,
                         escape_for_display(std::string(code_name(d.code)) + " " + d.field + ": " + d.message, 300));
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    // Every column sized to its content; the verdict and its reasons take the rest.
    std::vector<std::string> column_texts[7];
    for (const ModelListing& m : l.models) {
        column_texts[0].push_back(escape_for_display(m.ref.name.display(), 120));
        column_texts[1].push_back(size_text(m.size));
        column_texts[2].push_back(m.format.empty() ? "?" : m.format);
        column_texts[3].push_back(escape_for_display(m.family, 40));
        column_texts[4].push_back(escape_for_display(parameters_text(m.parameters, m.parameter_size), 40));
        column_texts[5].push_back(escape_for_display(m.quantization, 40));
        column_texts[6].push_back(date_text(m.ref.modified));
    }
    const char* headers[7] = {"Model", "Size", "Format", "Family", "Parameters", "Quantization", "Modified (UTC)"};
    float avail = ImGui::GetContentRegionAvail().x;
    if (!ImGui::BeginTable("store_models", 9, flags)) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    for (int c = 0; c < 7; ++c)
        ImGui::TableSetupColumn(headers[c], ImGuiTableColumnFlags_WidthFixed,
                                ui::fitted_width(column_texts[c], headers[c], avail * (c == 0 ? 0.25f : 0.12f)));
    std::vector<std::string> load_labels;
    for (const ModelListing& m : l.models) load_labels.push_back(m.loads ? m.loads->label() : "-");
    ImGui::TableSetupColumn("llama.cpp", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(load_labels, "llama.cpp", avail * 0.12f));
    ImGui::TableSetupColumn("Verdict", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    const bool pending = digest_pass_running(*doc.store());
    for (size_t i = 0; i < l.models.size(); ++i) {
        const ModelListing& m = l.models[i];
        ImGui::TableNextRow();
        ImGui::PushID(static_cast<int>(i));
        ImGui::TableNextColumn();
        if (ImGui::Selectable(("##model" + std::to_string(i)).c_str(), false,
                              ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
            doc.follow(model_link(l, i));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(m.ref.name.full(), 300).c_str());
        ImGui::SameLine(0, 0);
        ui::cell_text(column_texts[0][i]);
        ImGui::TableNextColumn();
        ui::cell_text(column_texts[1][i]);
        ImGui::TableNextColumn();
        ui::cell_text_colored(palette().accent, column_texts[2][i]);
        for (int c = 3; c < 6; ++c) {
            ImGui::TableNextColumn();
            ui::cell_text(column_texts[c][i]);
        }
        ImGui::TableNextColumn();
        ui::cell_text_dim(column_texts[6][i]);
        ImGui::TableNextColumn();
        if (m.loads)
            ui::load_verdict_cell(*m.loads);
        else
            ui::cell_text_dim("-");
        ImGui::TableNextColumn();
        verdict_text(m.check, pending);
        // Every reason: where, under the model's name; what, under its verdict (full on hover).
        for (const Diagnostic& d : m.check.reasons) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::cell_text_colored(d.severity == Severity::error ? palette().error : palette().warning, "   " + m.check.place_text(d));
            for (int column = 0; column < 8; ++column) ImGui::TableNextColumn();
            ui::cell_text_dim(escape_for_display(d.message, 1000));
        }
        ImGui::PopID();
    }
    ImGui::EndTable();
}

void StorePanel::verify(PanelContext& ctx, int layer) {
    if (!detail()) return;
    const ManifestView& v = detail()->view;
    const LayerView& lv = layer < 0 ? v.config_layer : v.layers.at(static_cast<size_t>(layer));
    if (!lv.blob || !lv.layer.blob) return;
    BlobLookup blob = *lv.blob;
    BlobDigest digest = *lv.layer.blob;
    m_verify[lv.layer.digest] = {ctx.jobs.start("verify " + short_digest(lv.layer.digest),
                                                [blob, digest](JobContext& jc) { return verify_blob(blob, digest, &jc); }),
                                 std::nullopt};
}

std::optional<Status> StorePanel::verified(const std::string& digest) {
    auto it = m_verify.find(digest);
    if (it == m_verify.end()) return std::nullopt;
    if (std::optional<Status> taken = it->second.job.try_take()) it->second.outcome = std::move(taken);
    return it->second.outcome;
}

void StorePanel::layer_row(PanelContext& ctx, const LayerView& lv, int index, const ModelCheck& check) {
    const ManifestLayer& layer = lv.layer;
    ImGui::TableNextRow();
    ImGui::PushID(index);
    ImGui::TableNextColumn();
    if (layer.name)
        ui::text(escape_for_display(*layer.name, 120));
    else
        ui::text_colored(palette().accent, layer_kind_name(layer.kind));
    if (layer.from) {
        ImGui::SameLine();
        ui::text_dim("from " + escape_for_display(*layer.from, 80));
    }
    ImGui::TableNextColumn();
    ImGui::PushFont(ctx.fonts.mono());
    ui::text(escape_for_display(short_digest(layer.digest), 40));
    ImGui::PopFont();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(layer.digest, 200).c_str());
    ui::copy_menu("copy", {{"digest", layer.digest}});
    ImGui::TableNextColumn();
    ui::text(human_bytes(layer.size));
    ImGui::TableNextColumn();
    auto failed = check.failed_layers.find(layer.field);
    if (!lv.blob)
        ui::text_colored(palette().error, "invalid digest");
    else if (!lv.blob->found())
        ui::text_colored(palette().error, escape_for_display(lv.blob->error->to_string(), 160));
    else if (failed != check.failed_layers.end())
        ui::text_colored(palette().error, "\xE2\x9C\x96 " + check.place_text(failed->second));
    else
        ui::text_dim("found");  // its file name is the digest again: the path shows on hover
    if (failed != check.failed_layers.end() && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", escape_for_display(failed->second.message, 400).c_str());
    else if (lv.blob && lv.blob->found() && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", escape_for_display(lv.blob->path, 400).c_str());
    ImGui::TableNextColumn();
    auto it = m_verify.find(layer.digest);
    if (it != m_verify.end() && it->second.job && !it->second.job.done()) {
        ImGui::ProgressBar(static_cast<float>(it->second.job.progress()), ImVec2(90, 0));
        ImGui::SameLine();
        if (ImGui::SmallButton("\xE2\x9C\x95")) it->second.job.cancel();
    } else if (std::optional<Status> s = verified(layer.digest)) {
        if (*s)
            ui::text_colored(palette().ok, "\xE2\x9C\x93 sha256 ok");
        else
            ui::text_colored(palette().error, "\xE2\x9C\x96 " + std::string(code_name(s->error().code)));
        if (!*s && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(s->error().message, 400).c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("again")) verify(ctx, index);
    } else if (lv.blob && lv.blob->found() && layer.blob) {
        if (ImGui::SmallButton("verify")) verify(ctx, index);
    }
    ImGui::PopID();
}

void StorePanel::layers_table(PanelContext& ctx, const ManifestView& v, const ModelCheck& check) {
    // One group per media type, in the order the manifest first names each; -1 is the config.
    struct Group {
        const ManifestLayer* first;
        std::vector<int> layers;
        uint64_t bytes = 0;
        size_t failed = 0;
    };
    std::vector<Group> groups;
    auto add = [&](const LayerView& lv, int index) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.first->media_type == lv.layer.media_type; });
        if (it == groups.end()) it = groups.insert(groups.end(), Group{&lv.layer, {}});
        it->layers.push_back(index);
        it->bytes += lv.layer.size;
        it->failed += check.failed_layers.count(lv.layer.field) || (lv.blob && !lv.blob->found());
    };
    add(v.config_layer, -1);
    for (size_t i = 0; i < v.layers.size(); ++i) add(v.layers[i], static_cast<int>(i));
    for (size_t g = 0; g < groups.size(); ++g) {
        const Group& group = groups[g];
        const size_t n = group.layers.size();
        std::string title = std::string(layer_kind_name(group.first->kind)) + "  \xC2\xB7 " + plural(n, "layer") + " \xC2\xB7 " + human_bytes(group.bytes) +
            (group.failed ? " \xC2\xB7 \xE2\x9C\x96 " + std::to_string(group.failed) + " failed" : "") + "###group" + std::to_string(g);
        ImGui::PushID(static_cast<int>(g));
        const bool open = ImGui::TreeNodeEx(title.c_str(), n <= kOpenLayerGroup || group.failed ? ImGuiTreeNodeFlags_DefaultOpen : 0);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(group.first->media_type, 200).c_str());
        if (open) {
            ui::text_dim(escape_for_display(group.first->media_type, 200));
            ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
            if (ImGui::BeginTable("layers", 5, flags)) {
                ImGui::TableSetupColumn("Layer", ImGuiTableColumnFlags_WidthStretch, 2.4f);
                ImGui::TableSetupColumn("Digest", ImGuiTableColumnFlags_WidthStretch, 1.3f);
                ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthStretch, 0.6f);
                ImGui::TableSetupColumn("Blob", ImGuiTableColumnFlags_WidthStretch, 1.4f);
                ImGui::TableSetupColumn("Verify", ImGuiTableColumnFlags_WidthStretch, 1.1f);
                ImGui::TableHeadersRow();
                for (int index : group.layers)
                    layer_row(ctx, index < 0 ? v.config_layer : v.layers[static_cast<size_t>(index)], index, check);
                ImGui::EndTable();
            }
            ImGui::TreePop();
        }
        ImGui::PopID();
    }
}


void StorePanel::model_view(PanelContext& ctx, size_t index) {
    Document& doc = ctx.doc;
    const ModelListing& m = listing_of(doc).models[index];
    ui::text_colored(palette().accent, escape_for_display(m.ref.name.display(), 120));
    ImGui::SameLine();
    ui::text_dim(escape_for_display(m.ref.name.host + "/" + m.ref.name.name_space, 120) + "  " + size_text(m.size) + "  " +
                 (m.format.empty() ? "?" : m.format) + "  " + escape_for_display(m.quantization, 40));
    ImGui::SameLine(0, 20);
    if (ImGui::SmallButton("Open model") && ctx.workspace) ctx.workspace->open(doc.store()->store.root() + "/" + m.ref.path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Open the model's weights as a document of its own");
    ImGui::SameLine();
    const std::vector<ExportFormat> formats = m.ok() ? export_formats_of(m.format) : std::vector<ExportFormat>{};
    ImGui::BeginDisabled(formats.empty() || m_export.busy());
    if (ImGui::SmallButton("Export\xE2\x80\xA6") || std::exchange(m_open_export, false))
        if (!formats.empty()) m_export.open(ctx, doc.store()->store, m.ref.name, formats);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(formats.empty() ? "Only a model the check accepts can be exported"
                                          : "Write the model as a GGUF bundle, or a Hugging Face or MLX folder, verified");
    ImGui::SameLine();
    if (ImGui::SmallButton("All models")) doc.follow(model_link(listing_of(doc), std::nullopt));
    if (m_job) {
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(240, 0), "reading manifest\xE2\x80\xA6");
        return;
    }
    if (!m_detail) return;
    if (!*m_detail) {
        ui::text_colored(palette().error, escape_for_display(m_detail->error().to_string(), 400));
        return;
    }
    const Partial<StoreModelDetail>& loaded = m_detail->value();
    const ManifestView& v = loaded->view;
    // The same verdict as the model list: the listing's check of this manifest.
    ImGui::TextUnformatted("Verdict:");
    ImGui::SameLine();
    verdict_text(m.check, digest_pass_running(*doc.store()));
    for (const Diagnostic& d : m.check.reasons)
        ui::text_colored(d.severity == Severity::error ? palette().error : palette().warning,
                         m.check.place_text(d) + ": " + escape_for_display(d.message, 300));
    const std::vector<FailedTensorLayer> failed = failed_tensor_layers(v.stored.manifest, m.check);
    ImGui::BeginChild("store_model_sections", ImVec2(0, 0), false);
    // The summary first, the layers (one row per blob) last and closed: the facts a reader looks
    // for stay above the fold.
    ImGuiTreeNodeFlags open = ImGuiTreeNodeFlags_DefaultOpen;
    if (ImGui::CollapsingHeader("Summary", open)) store_summary_view(loaded->summary, m.size, ctx.fonts);
    if (loaded->model) {
        const Model& model = *loaded->model;
        std::string tensors = "Tensors (" + std::to_string(model.tensors.size()) + " entries" +
            (failed.empty() ? "" : ", " + std::to_string(failed.size()) + " blobs not read") + ")###tensors";
        if (ImGui::CollapsingHeader(tensors.c_str(), open)) store_tensors_view(model, failed, ctx.fonts);
        if (!model.groups.empty()) {
            std::string groups = "Expert groups (" + std::to_string(model.groups.size()) + ")###groups";
            if (ImGui::CollapsingHeader(groups.c_str(), open)) store_groups_view(model);
        }
    } else if (ImGui::CollapsingHeader("Tensors###tensors", open)) {
        ui::text_colored(palette().error, escape_for_display(loaded.stopped_by->to_string(), 400));
    }
    if (ImGui::CollapsingHeader("Config", open)) store_config_view(v);
    if (ImGui::CollapsingHeader("Text layers", open)) store_text_layers_view(v, ctx.fonts);
    std::string layers = "Layers (" + std::to_string(v.layers.size()) + " + config, by media type)###layers";
    if (m_open_layers) ImGui::SetNextItemOpen(true);
    m_open_layers = false;
    if (ImGui::CollapsingHeader(layers.c_str())) layers_table(ctx, v, m.check);
    ImGui::EndChild();
}

void StorePanel::draw(PanelContext& ctx) {
    advance_digest_pass(ctx.doc, ctx.jobs);
    Document& doc = ctx.doc;
    if (std::optional<Result<Partial<StoreModelDetail>>> taken = m_job.try_take()) m_detail = std::move(taken);
    const StoreListing& l = listing_of(doc);
    std::optional<size_t> want = m_model;
    if (want && *want >= l.models.size()) want.reset();
    if (!want) {
        models_table(doc);
        return;
    }
    if (m_loaded != want) {
        m_job.cancel();
        m_detail.reset();
        std::shared_ptr<const StoreDocument> store = doc.store();
        ModelName name = l.models[*want].ref.name;
        m_job = ctx.jobs.start("manifest " + escape_for_display(name.display(), 60),
                               [store, name](JobContext& jc) { return load_store_model_detail(store->store, name, &jc); });
        m_loaded = want;
    }
    model_view(ctx, *want);
}

}  // namespace mlens
