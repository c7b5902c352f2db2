#include "panels/inspector_panel.h"

#include <optional>
#include <span>

#include <imgui.h>

#include "mlens/model/enum_names.h"
#include "mlens/model/metadata_text.h"
#include "mlens/model/shape_text.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "panels/panel_links.h"
#include "state/display_text.h"
#include "theme.h"
#include "widgets/hex_view.h"
#include "widgets/load_verdict.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr size_t kLongValueBytes = 256u << 10;

// A two-column table of fields; values may be long and wrap.
class Fields {
public:
    explicit Fields(ImFont* mono) : m_mono(mono) {
        m_open = ImGui::BeginTable("fields", 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH);
        if (m_open) {
            ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, 105);
            ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
        }
    }
    ~Fields() {
        if (m_open) ImGui::EndTable();
    }
    void row(std::string_view label, std::string_view value, bool mono = false, const ImVec4* color = nullptr) {
        if (!m_open) return;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text_dim(label);
        ImGui::TableNextColumn();
        if (mono) ImGui::PushFont(m_mono);
        if (color) ImGui::PushStyleColor(ImGuiCol_Text, *color);
        // Wrapped before spaces: ImGui's own wrapping would split numbers after a comma or point.
        ui::wrapped_text(value);
        if (color) ImGui::PopStyleColor();
        if (mono) ImGui::PopFont();
    }
    void range(std::string_view label, const ByteRange& r) { row(label, ui::byte_range_text(r.offset, r.length), true); }

private:
    ImFont* m_mono;
    bool m_open = false;
};

void title(std::string_view kind, std::string_view name) {
    ui::text_dim(kind);
    ImGui::SameLine();
    ui::text_colored(palette().accent, name);
    ImGui::Separator();
}

void header_fields(const Document& doc, ImFont* mono) {
    const Model& m = *doc.model();
    const ModelSummary& s = doc.index()->summary;
    title("file", doc.title);
    Fields f(mono);
    f.row("path", escape_for_display(doc.path, 400));
    // What people look for first (model_overview.h), before the layout of the file.
    f.row("architecture",
          s.architecture.empty() ? "-"
                                 : escape_for_display(s.architecture, 80) +
                  (s.architecture_source == "general.architecture" ? "" : " (" + s.architecture_source + ")"));
    f.row("name", s.name.empty() ? "-" : escape_for_display(s.name, 200));
    for (const auto& [label, value] : overview_rows(doc.index()->overview)) f.row(label, escape_for_display(value, 400));
    f.row("format", format_and_version(m.format, s.version));
    if (!m.files.empty()) {
        const SourceFile& sf = m.files[0];
        f.row("endianness", sf.big_endian ? "big-endian (read byte-swapped)" : "little-endian");
        f.row("alignment", std::to_string(sf.alignment), true);
        if (sf.data_start_known()) {
            f.row("header", ui::with_separators(sf.header_bytes) + " bytes", true);
            f.row("data start", ui::hex_offset(sf.data_start) + " (" + ui::with_separators(sf.data_start) + ")", true);
        } else {
            f.row("data start", "not known: the tensor-info list is cut before its end");
        }
    }
    if (m.files.size() > 1) f.row("files", std::to_string(m.files.size()));
    f.row("file size", human_bytes(s.file_bytes) + " (" + ui::with_separators(s.file_bytes) + " bytes)" + s.present_files_text());
    if (s.file_type) f.row("file type", s.file_type_name + " (" + std::to_string(*s.file_type) + ")");
    f.row("keys", std::to_string(m.metadata.size()));
    f.row("tensors", s.tensors_text());
    f.row("parameters", human_count(s.parameters) + " (" + ui::with_separators(s.parameters) + ")" + s.present_files_text());
    f.row("tensor data", human_bytes(s.tensor_bytes) + s.present_files_text());
    if (s.parameters) f.row("bits/weight", bits_per_weight_text(s.bits_per_weight));
    if (m.partial) f.row("parsing", "stopped early (see diagnostics)", false, &palette().error);
    const Loadability& loads = doc.index()->loads;
    f.row("llama.cpp", escape_for_display(loads.summary(), 1000), false, &ui::load_verdict_color(loads.verdict));
}

void metadata_fields(Document& doc, size_t i, ImFont* mono) {
    const MetadataEntry& e = doc.model()->metadata[i];
    title("key", escape_for_display(e.key, 200));
    {
        Fields f(mono);
        f.row("type", format_type(e.value) + " (" + std::to_string(static_cast<uint32_t>(e.value.type)) + ")");
        if (e.value.is_array() && e.value.array) f.row("elements", ui::with_separators(e.value.array->count));
        if (e.value.is_string()) f.row("length", ui::with_separators(e.value.string_length()) + " bytes");
        if (!e.value.is_string()) f.row("value", metadata_value_text(e, 16, 400), true);
        f.range("key bytes", e.key_range);
        f.range("type bytes", e.type_range);
        f.range("value bytes", e.value_range);
        if (doc.model()->files.size() > 1) f.row("file", std::to_string(e.file));
    }
    if (e.value.is_array() && ImGui::Button("Open value viewer")) doc.follow(metadata_array_link(i));
    if (e.value.is_string()) {
        std::string text = escape_multiline(e.value.string_value(kLongValueBytes), kLongValueBytes);
        float h = std::min(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y * 0.4f);
        ImGui::PushFont(mono);
        ImGui::InputTextMultiline("##value", text.data(), text.size() + 1, ImVec2(-1, std::max(h, 60.0f)), ImGuiInputTextFlags_ReadOnly);
        ImGui::PopFont();
    }
    ui::copy_menu("copy_value", {{"value", metadata_copy_text(e)}, {"key", e.key}});
}

// Rows shared by a logical tensor and a companion entry: where it sits.
void placement_fields(Fields& f, const Document& doc, const TensorInfo& t, std::string_view data_label = "data") {
    if (auto layer = layer_of(t.name)) f.row("layer", std::to_string(*layer));
    f.row("rel. offset", ui::hex_offset(t.relative_offset) + " (" + ui::with_separators(t.relative_offset) + ")", true);
    f.range(data_label, t.data_range());
    f.range("info record", t.info_range);
    if (doc.model()->files.size() > 1 && t.file < doc.model()->files.size())
        f.row("file", escape_for_display(doc.model()->files[t.file].path, 300));
}

void storage_type_fields(Fields& f, const Document& doc, const TensorInfo& t) {
    // GGUF stores a ggml type id, shown with its name; safetensors stores only the dtype's name.
    if (doc.model()->format == Format::gguf)
        f.row("type", t.type.name + " (id " + std::to_string(t.type.id) + ")", false, t.type.known ? nullptr : &palette().error);
    else
        f.row("dtype", t.type.name, false, t.type.known ? nullptr : &palette().error);
}

// GGUF's `ne` under that name; a safetensors shape slowest first, as "shape (slowest first)".
void shape_row(Fields& f, const Document& doc, std::span<const uint64_t> ne) {
    const ShapeOrder order = shape_order(doc.model()->format);
    f.row(order == ShapeOrder::fastest_first ? "ne" : shape_header("shape", order), shape_text(ne, ShapeStyle::bracketed, order), true);
}

// One stored entry by itself: a scale, bias or global scale of a quantized tensor.
void companion_fields(const Document& doc, size_t i, ImFont* mono) {
    const TensorInfo& t = doc.model()->tensors[i];
    title("stored entry", escape_for_display(t.name, 200));
    Fields f(mono);
    storage_type_fields(f, doc, t);
    shape_row(f, doc, t.ne);
    if (t.n_bytes) f.row("bytes", ui::with_separators(*t.n_bytes) + " (" + human_bytes(*t.n_bytes) + ")", true);
    if (t.part_of && *t.part_of < doc.model()->tensors.size()) f.row("part of", escape_for_display(doc.model()->tensors[*t.part_of].name, 200));
    placement_fields(f, doc, t);
}

void tensor_fields(const Document& doc, size_t i, ImFont* mono) {
    const LogicalTensor* lt = find_logical_tensor(doc.index()->tensors, i);
    if (!lt) return companion_fields(doc, i, mono);
    const Model& m = *doc.model();
    const TensorInfo& t = m.tensors[i];
    title("tensor", escape_for_display(t.name, 200));
    Fields f(mono);
    if (lt->folded()) {
        const QuantLayout& q = *t.quant;
        f.row("type", escape_for_display(lt->type, 60) + " (" + q.mode + ", " + std::to_string(q.bits) + " bits a value)");
    } else {
        storage_type_fields(f, doc, t);
    }
    shape_row(f, doc, lt->ne);
    f.row("dims", std::to_string(lt->ne.size()));
    f.row("elements", ui::with_separators(lt->elements) + " (" + human_count(lt->elements) + ")", true);
    if (lt->bytes)
        f.row("bytes", ui::with_separators(*lt->bytes) + " (" + human_bytes(*lt->bytes) + ")", true);
    else
        f.row("bytes", "unknown (type not known to the pinned ggml)", false, &palette().warning);
    if (double bpw = lt->bits_per_weight(); bpw > 0) f.row("bits/weight", bits_per_weight_text(bpw), true);
    if (lt->folded()) {
        f.row("stored as", escape_for_display(stored_as_text(m, *lt), 400), true);
        f.row("found by", escape_for_display(t.quant->origin, 200));
    } else if (t.type.known && t.type.block_size > 1) {
        f.row("block", std::to_string(t.type.block_size) + " elements in " + std::to_string(t.type.block_bytes) + " bytes");
    } else if (t.type.known) {
        f.row("element", std::to_string(t.type.block_bytes) + (t.type.block_bytes == 1 ? " byte" : " bytes"));
    }
    if (lt->group && *lt->group < m.groups.size()) {
        const TensorGroup& g = m.groups[*lt->group];
        f.row("experts", expert_text(m, *lt) + " in " + escape_for_display(g.name, 200));
        f.row("layout", escape_for_display(g.layout, 200));
    }
    placement_fields(f, doc, t, lt->folded() ? "packed data" : "data");
    for (const StoredPart& p : lt->parts)
        if (p.entry != i)
            f.range(std::string(p.role == std::string_view("global_scale") ? "global scale" : p.role) + " data",
                    m.tensors[p.entry].data_range());
}

void token_fields(const Document& doc, size_t id, ImFont* mono) {
    const TokenizerInfo& t = doc.index()->tokenizer;
    std::string raw = t.tokens->string_at(id, 4096);
    title("token", std::to_string(id));
    const PieceEncoding encoding = t.piece_encoding_of(id);
    // In the UI font, as the tokenizer table draws it: the UI font holds every piece's characters.
    ui::piece(visible_piece(raw, 400, encoding));
    std::vector<std::string> hints = ui::missing_glyph_hints(raw);
    Fields f(mono);
    for (const std::string& hint : hints) f.row("font", hint, false, &palette().warning);
    if (std::optional<std::string> text = encoding == PieceEncoding::byte_level ? byte_level_decode(raw) : std::nullopt) {
        f.row("stored", visible_piece_text(raw, 400) + "  (byte-level BPE)", true);
        f.row("text bytes", hex_bytes(std::string_view(*text).substr(0, 256)) + (text->size() > 256 ? " \xE2\x80\xA6" : ""), true);
    }
    f.row("length", ui::with_separators(t.tokens->string_length_at(id)) + " bytes");
    f.row("bytes", hex_bytes(std::string_view(raw).substr(0, 256)) + (raw.size() > 256 ? " \xE2\x80\xA6" : ""), true);
    const std::string points = code_points_text(raw, 64);
    f.row("code points", points, true);
    if (t.types && id < t.types->count) {
        int64_t type = t.types->scalar_at(id).as_int();
        const char* name = token_type_name(type);
        f.row("type", (name ? std::string(name) + " (" + std::to_string(type) + ")" : std::to_string(type)));
    }
    if (t.scores && id < t.scores->count) f.row("score", t.scores->scalar_at(id).to_string(), true);
    for (const SpecialToken& s : t.special)
        if (s.id >= 0 && static_cast<uint64_t>(s.id) == id) f.row("special", s.role);
}

void diagnostic_fields(const Document& doc, size_t i, ImFont* mono) {
    const Diagnostic& d = doc.model()->diagnostics[i];
    bool error = d.severity == Severity::error;
    title(error ? "error" : "warning", std::string(code_name(d.code)));
    Fields f(mono);
    f.row("severity", error ? "error" : "warning", false, error ? &palette().error : &palette().warning);
    f.row("format", escape_for_display(d.format, 40));
    f.row("field", d.field.empty() ? "-" : escape_for_display(d.field, 200), true);
    f.row("offset", d.offset ? ui::hex_offset(*d.offset) + " (" + ui::with_separators(*d.offset) + ")" : "-", true);
    f.row("message", d.message);
    if (doc.model()->files.size() > 1) f.row("file", std::to_string(d.file));
}

}  // namespace

void InspectorPanel::draw_bytes(PanelContext& ctx) {
    Document& doc = ctx.doc;
    auto target = doc.byte_target();
    if (!target) return;
    if (m_bytes_doc != doc.id || !(m_bytes_for == doc.selection)) {
        m_hex.show(target->offset);
        m_bytes_for = doc.selection;
        m_bytes_doc = doc.id;
    }
    ImGui::Spacing();
    ImGui::Spacing();
    ui::text_colored(palette().accent, "Bytes");
    ImGui::SameLine();
    ui::cell_text_dim(target->label);
    ImGui::Separator();
    if (target->highlight.length > 0)
        ui::cell_text_dim("selected " + ui::byte_range_text(target->highlight.offset, target->highlight.length));
    const Model& m = *doc.model();
    ByteSourcePtr source = target->file < m.files.size() ? m.files[target->file].source : nullptr;
    const uint64_t file_size = source ? source->size() : 0;
    if (target->offset >= file_size) {
        ui::text_colored(palette().warning, "nothing to show: the offset is at or beyond the end of the file");
        return;
    }
    ui::text_dim("from " + ui::hex_offset(target->offset) + " of " + ui::with_separators(file_size) + " bytes");
    auto read = [source](uint64_t offset, uint64_t length, uint8_t* out) -> uint64_t {
        return source->read(offset, length, out) ? length : 0;
    };
    hex_view("hex", m_hex, file_size, read, target->highlight, ctx.fonts.mono());
}

void InspectorPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    ImFont* mono = ctx.fonts.mono();
    ImGui::BeginChild("inspector", ImVec2(0, 0), false);
    const Model& m = *doc.model();
    const Selection& s = doc.selection;
    switch (s.kind) {
        case SelectionKind::header:
            header_fields(doc, mono);
            break;
        case SelectionKind::metadata:
            if (s.index < m.metadata.size()) metadata_fields(doc, s.index, mono);
            break;
        case SelectionKind::tensor:
            if (s.index < m.tensors.size()) {
                tensor_fields(doc, s.index, mono);
                if (ImGui::SmallButton("Values & histogram")) doc.follow(weights_link(m.tensors[s.index].name));
            }
            break;
        case SelectionKind::diagnostic:
            if (s.index < m.diagnostics.size()) diagnostic_fields(doc, s.index, mono);
            break;
        case SelectionKind::token:
            if (doc.index()->tokenizer.tokens && s.index < doc.index()->tokenizer.count()) token_fields(doc, s.index, mono);
            break;
        case SelectionKind::finding:
            if (doc.finding_bytes) ui::label_value("health finding", doc.finding_bytes->label);
            break;
        case SelectionKind::none:
            ui::text_dim("Select a key, tensor or diagnostic to inspect it.");
            break;
    }
    draw_bytes(ctx);
    ImGui::EndChild();
}

}  // namespace mlens
