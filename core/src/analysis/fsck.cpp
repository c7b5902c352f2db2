// fsck: plans every logical tensor (fsck_items.cpp), scans the row items on the caller's
// threads, then turns the merged accumulators into findings and confirms duplicate candidates.
#include "mlens/analysis/fsck.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "fsck_plan.h"
#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "mlens/text/natural_order.h"
#include "mlens/text/plural.h"
#include "mlens/util/name_table.h"
#include "mlens/util/parallel_job.h"

namespace mlens {

using namespace fsck_detail;

namespace {

// Reader diagnostics about where tensor data lies (GGUF and safetensors names).
const std::set<ErrorCode> kRegionCodes = {
    ErrorCode::E_TENSOR_OVERLAP, ErrorCode::E_TENSOR_OUT_OF_BOUNDS, ErrorCode::E_TENSOR_MISALIGNED,     ErrorCode::E_TRUNCATED_DATA,
    ErrorCode::InvalidOffset,    ErrorCode::TensorInvalidInfo,      ErrorCode::MetadataIncompleteBuffer};

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string scale_message(ErrorCode code, const std::string& field, uint64_t n) {
    const char* what = code == ErrorCode::F_SCALE_NAN ? "is NaN"
        : code == ErrorCode::F_SCALE_INF              ? "is infinite"
        : code == ErrorCode::F_SCALE_SUBNORMAL        ? "is subnormal"
                                                      : "is zero while the block's values are not";
    return plural(n, "block", "blocks") + " whose " + field + " " + what;
}

std::string message_of(ErrorCode code, const std::string& field, const Accumulator& a) {
    if (code == ErrorCode::F_NAN) return plural(a.count, "NaN value", "NaN values");
    if (code == ErrorCode::F_INF) return plural(a.count, "infinite value", "infinite values");
    if (code == ErrorCode::F_BEYOND_F16)
        return plural(a.count, "value", "values") + " beyond the F16 range (|x| > 65504), first " + number(a.first_value.value_or(0));
    if (code == ErrorCode::F_READ_FAILED)
        return plural(a.count, "chunk", "chunks") + " could not be read" + (a.first_reason.empty() ? "" : ": " + escape_for_display(a.first_reason, 300));
    return scale_message(code, field, a.count);
}

Finding tensor_finding(const Model& model, const Plan& p, FindingSeverity sev, ErrorCode code, std::string field, uint64_t count,
                       std::vector<FsckLocation> locations, std::string message) {
    Finding f;
    f.severity = sev;
    f.code = code;
    f.field = std::move(field);
    f.tensor = escape_for_display(model.tensors[p.logical->index].name);
    f.tensor_index = p.logical->index;
    f.count = count;
    f.locations = std::move(locations);
    f.message = std::move(message);
    return f;
}

// Zero rows, zero tensors, dead experts and zero columns of one plan; `dead` gets which experts
// are all zero.
void zero_findings(const Model& model, const Plan& p, std::vector<bool>& dead, std::vector<Finding>& out) {
    dead.assign(p.experts, false);
    for (uint64_t e = 0; e < p.experts; ++e) dead[e] = !p.cut && p.rows_per_expert > 0 && p.expert_acc[e].zero_rows == p.rows_per_expert;
    const bool all_zero = std::all_of(dead.begin(), dead.end(), [](bool d) { return d; });
    if (all_zero && !p.expert_number) {
        out.push_back(tensor_finding(model, p, FindingSeverity::warning, ErrorCode::F_ZERO_TENSOR, "", 1, {p.location(0, 0, 0)},
                                     "every value is zero"));
        return;
    }
    Accumulator rows;
    for (uint64_t e = 0; e < p.experts; ++e) {
        if (dead[e]) {
            const uint64_t number = p.expert_number.value_or(e);
            out.push_back(tensor_finding(model, p, FindingSeverity::warning, ErrorCode::F_DEAD_EXPERT, "", 1, {p.location(e, 0, 0)},
                                         "expert " + std::to_string(number) + " is all zero"));
            continue;
        }
        Accumulator one;
        one.count = p.expert_acc[e].zero_rows;
        one.locations = p.expert_acc[e].zero_locations;
        rows.merge(std::move(one));
    }
    if (rows.count)
        out.push_back(tensor_finding(model, p, FindingSeverity::warning, ErrorCode::F_ZERO_ROWS, "", rows.count, rows.locations,
                                     plural(rows.count, "row is", "rows are") + " all zero"));
    if (!p.track_columns || all_zero) return;  // a dead per-expert tensor's columns say nothing more
    const Accumulator& columns = p.zero_columns;
    if (columns.count)
        out.push_back(tensor_finding(model, p, FindingSeverity::warning, ErrorCode::F_ZERO_COLUMNS, "", columns.count, columns.locations,
                                     plural(columns.count, "column is", "columns are") + " zero in every row"));
}

// Whether two views hold the same stored bytes (MLX: the same values), read in bounded chunks.
Result<bool> same_content(const TensorView& a, const TensorView& b) {
    if (a.size() != b.size() || a.type_name() != b.type_name() || a.kind() != b.kind()) return false;
    if (a.kind() == TensorView::Kind::mlx) {
        const uint64_t chunk = a.chunk_length(kItemValues);
        std::vector<float> x(chunk), y(chunk);
        for (uint64_t first = 0; first < a.size(); first += chunk) {
            const uint64_t n = std::min(chunk, a.size() - first);
            if (Status s = a.read(first, n, x.data()); !s) return s.error();
            if (Status s = b.read(first, n, y.data()); !s) return s.error();
            if (std::memcmp(x.data(), y.data(), n * sizeof(float)) != 0) return false;
        }
        return true;
    }
    const uint64_t blocks = (a.size() + a.block_length() - 1) / a.block_length();
    const uint64_t step = std::max<uint64_t>(1, kItemBytes / a.block_bytes());
    std::vector<uint8_t> x(step * a.block_bytes()), y(x.size());
    for (uint64_t first = 0; first < blocks; first += step) {
        const uint64_t n = std::min(step, blocks - first);
        if (Status s = a.read_blocks(first, n, x.data()); !s) return s.error();
        if (Status s = b.read_blocks(first, n, y.data()); !s) return s.error();
        if (std::memcmp(x.data(), y.data(), n * a.block_bytes()) != 0) return false;
    }
    return true;
}

void duplicate_experts(const Model& model, const Plan& p, const std::vector<bool>& dead, std::vector<Finding>& out) {
    if (!p.stacked) return;
    std::map<uint64_t, std::vector<uint64_t>> by_hash;
    for (uint64_t e = 0; e < p.experts; ++e) {
        if (dead[e]) continue;
        std::vector<uint64_t>& earlier = by_hash[p.expert_acc[e].hash];
        auto mine = p.view->slice(e);
        for (uint64_t f : earlier) {
            auto theirs = p.view->slice(f);
            if (!mine || !theirs) break;
            auto same = same_content(*theirs, *mine);
            if (!same || !*same) continue;
            Finding d = tensor_finding(model, p, FindingSeverity::warning, ErrorCode::F_DUPLICATE_EXPERT, "", 1, {p.location(e, 0, 0)},
                                       "expert " + std::to_string(e) + " has the same bytes as expert " + std::to_string(f));
            d.other_expert = f;
            out.push_back(std::move(d));
            break;
        }
        earlier.push_back(e);
    }
}

void duplicate_tensors(const Model& model, const std::vector<Plan>& plans, const std::vector<bool>& all_zero, std::vector<Finding>& out) {
    std::map<std::tuple<std::string, std::vector<uint64_t>, uint64_t>, std::vector<size_t>> by_key;
    for (size_t i = 0; i < plans.size(); ++i) {
        const Plan& p = plans[i];
        if (all_zero[i] || p.cut) continue;
        std::vector<size_t>& earlier = by_key[{p.view->type_name(), p.view->shape(), p.hash}];
        for (size_t j : earlier) {
            const Plan& q = plans[j];
            auto same = same_content(*q.view, *p.view);
            if (!same || !*same) continue;
            const std::string other = escape_for_display(model.tensors[q.logical->index].name);
            const bool experts = p.expert_number && q.expert_number && p.logical->group == q.logical->group;
            Finding d =
                tensor_finding(model, p, FindingSeverity::warning, experts ? ErrorCode::F_DUPLICATE_EXPERT : ErrorCode::F_DUPLICATE_TENSOR,
                               "", 1, {p.location(0, 0, 0)},
                               experts ? "expert " + std::to_string(*p.expert_number) + " has the same bytes as expert " +
                                       std::to_string(*q.expert_number) + " (" + other + ")"
                                       : "same type, shape and bytes as " + other);
            d.other_tensor = other;
            if (experts) d.other_expert = q.expert_number;
            out.push_back(std::move(d));
            break;
        }
        earlier.push_back(i);
    }
}

// An MLX global scale multiplies whole rows (or experts): each value is checked once.
void global_scale_findings(const Model& model, const Plan& p, std::vector<Finding>& out) {
    if (!p.mlx || !model.tensors[p.logical->index].quant->global_scale) return;
    const size_t entry = *model.tensors[p.logical->index].quant->global_scale;
    auto view = TensorView::open(model, entry);
    if (!view || view->size() == 0) return;
    const TensorInfo& g = model.tensors[entry];
    const uint64_t n = view->size(), rows_per_value = std::max<uint64_t>(1, p.rows / n), width = g.n_bytes.value_or(0) / n;
    std::map<ScaleClass, Accumulator> found;
    std::vector<float> values(std::min<uint64_t>(n, kItemValues));
    for (uint64_t first = 0; first < n; first += values.size()) {
        const uint64_t count = std::min<uint64_t>(values.size(), n - first);
        if (Status s = view->read(first, count, values.data()); !s) return;
        for (uint64_t i = 0; i < count; ++i) {
            const ScaleClass c = classify_value(values[i], 0.0f);
            if (c == ScaleClass::normal || c == ScaleClass::subnormal) continue;
            const uint64_t row = (first + i) * rows_per_value;
            FsckLocation at = p.location(row / std::max<uint64_t>(1, p.rows_per_expert), row % std::max<uint64_t>(1, p.rows_per_expert), 0);
            at.file = g.file;
            at.offset = g.data_offset + (first + i) * width;
            found[c].add(at, 1, values[i]);
        }
    }
    for (auto& [c, acc] : found) {
        const ErrorCode code = c == ScaleClass::nan ? ErrorCode::F_SCALE_NAN
            : c == ScaleClass::inf                  ? ErrorCode::F_SCALE_INF
                                                    : ErrorCode::F_SCALE_ZERO;
        out.push_back(tensor_finding(model, p, c == ScaleClass::zero ? FindingSeverity::warning : FindingSeverity::error, code,
                                     "global_scale", acc.count, acc.locations,
                                     plural(acc.count, "global scale value is ", "global scale values are ") +
                                         (c == ScaleClass::nan       ? "NaN"
                                              : c == ScaleClass::inf ? "infinite"
                                                                     : "zero")));
    }
}

// The readers' region diagnostics in listed_diagnostics order: a truncation summary is followed
// by one finding per tensor it cut, and the out-of-bounds rows it explains are not copied.
void region_findings(const Model& model, std::vector<Finding>& out) {
    for (const ListedDiagnostic& listed : listed_diagnostics(model)) {
        const Diagnostic& d = model.diagnostics[listed.diagnostic];
        if (!is_region_diagnostic(d.code)) continue;
        Finding f;
        f.severity = d.severity == Severity::error ? FindingSeverity::error : FindingSeverity::warning;
        f.code = d.code;
        f.field = d.field;
        FsckLocation at;
        at.file = d.file;
        at.offset = d.offset;
        f.locations.push_back(at);
        f.message = d.message;
        out.push_back(std::move(f));
        for (size_t t : listed.cut) {
            Finding cut;
            cut.severity = FindingSeverity::error;
            cut.code = ErrorCode::E_TRUNCATED_DATA;
            cut.tensor = escape_for_display(model.tensors[t].name);
            cut.tensor_index = t;
            FsckLocation from;
            from.file = d.file;
            from.offset = model.tensors[t].data_offset;
            cut.locations.push_back(from);
            cut.message = "cut: " + cut_tensor_text(model, t);
            out.push_back(std::move(cut));
        }
    }
}

// A tensor the end of its file cuts: its rows whose bytes are all there are scanned. Only a tensor
// of one entry and one expert is cut this way (the rows of stacked experts and of MLX companions
// do not end where the file does); false when no whole row is there.
bool limit_to_present_rows(const Model& model, Plan& p) {
    if (p.experts != 1 || p.mlx || p.file >= model.files.size() || !model.files[p.file].source) return false;
    const uint64_t size = model.files[p.file].source->size();
    const uint64_t row_bytes = p.row_len / p.unit_elements * p.unit_bytes;
    if (size <= p.data_offset || row_bytes == 0) return false;
    const uint64_t rows = std::min(p.rows, (size - p.data_offset) / row_bytes);
    if (rows == 0) return false;
    p.rows = p.rows_per_expert = rows;
    p.track_columns = false;
    p.cut = true;
    return true;
}

}  // namespace

bool is_region_diagnostic(ErrorCode code) { return kRegionCodes.count(code) != 0; }

const char* finding_severity_name(FindingSeverity s) {
    static constexpr NameRow<FindingSeverity> kNames[] = {
        {FindingSeverity::info, "info"}, {FindingSeverity::warning, "warning"}, {FindingSeverity::error, "error"}};
    return name_of(kNames, s, "error");
}

bool is_cut_tensor_row(const Finding& f) { return f.code == ErrorCode::E_TRUNCATED_DATA && f.tensor_index.has_value(); }

size_t FsckReport::count(FindingSeverity s) const {
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [s](const Finding& f) { return f.severity == s && !is_cut_tensor_row(f); }));
}

Result<FsckReport> fsck_model(const Model& model, JobContext* job, unsigned threads) {
    const std::vector<LogicalTensor> logical = logical_tensors(model);
    FsckReport report;
    report.tensors = logical.size();
    Scan scan{model, {}, {}, {}, {0}, {0}};
    std::vector<Finding> findings;
    region_findings(model, findings);
    const size_t region_count = findings.size();
    for (const LogicalTensor& lt : logical) {
        // Cut data is reported under the reader's summary (region_findings), and of a cut tensor
        // the whole rows present are scanned; data never located is reported per tensor, by
        // plan_tensor's refusal.
        const DataPresence presence = data_presence(model, lt);
        if (presence == DataPresence::missing) continue;
        auto plan = plan_tensor(model, lt);
        if (presence == DataPresence::partial) {
            if (plan && limit_to_present_rows(model, *plan)) scan.plans.push_back(std::move(*plan));
            continue;
        }
        if (!plan) {
            Finding f;
            f.code = ErrorCode::F_NOT_SCANNED;
            f.tensor = escape_for_display(model.tensors[lt.index].name);
            f.tensor_index = lt.index;
            f.message = "not scanned: " + escape_for_display(plan.error().message);
            findings.push_back(std::move(f));
            continue;
        }
        scan.plans.push_back(std::move(*plan));
    }
    for (size_t i = 0; i < scan.plans.size(); ++i) {
        Plan& p = scan.plans[i];
        for (uint64_t e = 0; e < p.experts; ++e)
            for (uint64_t r = 0; r < p.rows_per_expert; r += p.rows_per_item, ++p.items_left)
                scan.items.push_back({i, e, r, std::min(p.rows_per_expert, r + p.rows_per_item)});
    }
    Status s = parallel_job(scan.items.size(), std::max(1u, threads), job, [&](uint64_t k) { return scan_item(scan, scan.items[k]); });
    if (!s) return s.error();
    report.tensors_scanned = scan.plans.size();
    report.tensors_scanned_in_part =
        static_cast<uint64_t>(std::count_if(scan.plans.begin(), scan.plans.end(), [](const Plan& p) { return p.cut; }));
    report.values_scanned = scan.values.load();
    report.bytes_scanned = scan.bytes.load();

    std::vector<bool> all_zero(scan.plans.size());
    for (size_t i = 0; i < scan.plans.size(); ++i) {
        Plan& p = scan.plans[i];
        for (auto& [key, acc] : p.findings.by_key)
            findings.push_back(tensor_finding(model, p, acc.severity, key.first, key.second, acc.count, acc.locations,
                                              message_of(key.first, key.second, acc)));
        std::vector<bool> dead;
        zero_findings(model, p, dead, findings);
        all_zero[i] = std::all_of(dead.begin(), dead.end(), [](bool d) { return d; });
        duplicate_experts(model, p, dead, findings);
        global_scale_findings(model, p, findings);
    }
    duplicate_tensors(model, scan.plans, all_zero, findings);

    // Region findings stay first, in their listed order; the rest by tensor, severity, code, field.
    std::stable_sort(findings.begin() + static_cast<std::ptrdiff_t>(region_count), findings.end(), [](const Finding& a, const Finding& b) {
        const size_t ta = a.tensor_index ? *a.tensor_index + 1 : 0, tb = b.tensor_index ? *b.tensor_index + 1 : 0;
        if (ta != tb) return ta < tb;
        if (a.severity != b.severity) return a.severity > b.severity;
        if (a.code != b.code) return code_name(a.code) < code_name(b.code);
        return natural_less(a.field, b.field);
    });
    report.findings = std::move(findings);
    return report;
}

std::string finding_line(const Finding& f) {
    std::string line = std::string(finding_severity_name(f.severity)) + " " + std::string(code_name(f.code));
    if (!f.field.empty()) line += " " + f.field;
    if (!f.tensor.empty()) line += " " + f.tensor;
    if (!f.locations.empty()) {
        const FsckLocation& at = f.locations.front();
        if (at.expert) line += " expert " + std::to_string(*at.expert);
        if (at.row && f.tensor_index) line += " row " + std::to_string(*at.row);
        if (at.block && f.tensor_index) line += " block " + std::to_string(*at.block);
        if (at.file) line += " file " + std::to_string(at.file);
        if (at.offset) line += " offset=" + std::to_string(*at.offset);
    }
    return line + ": " + f.message;
}

}  // namespace mlens
