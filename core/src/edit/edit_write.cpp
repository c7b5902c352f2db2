#include "mlens/edit/edit_write.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "edit_steps.h"
#include "mlens/analysis/fsck.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/io/unique_fd.h"
#include "mlens/model/model_inputs.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

constexpr uint64_t kChunk = 4u << 20;

constexpr NameRow<DataPath> kDataPathNames[] = {
    {DataPath::reflink, "reflink"}, {DataPath::copy_file_range, "copy_file_range"}, {DataPath::stream, "stream"}};

Error io_failure(const std::string& what, const std::string& path) {
    const int reason = errno;
    return Error{ErrorCode::E_IO, "output", std::nullopt, what + " " + escape_for_display(path) + ": " + std::strerror(reason)};
}

struct Extent {
    uint64_t offset = 0;
    uint64_t length = 0;
};

// The data extents of [from, to) of `fd` (holes skipped); the whole range when the filesystem
// cannot tell.
std::vector<Extent> data_extents(int fd, uint64_t from, uint64_t to) {
    std::vector<Extent> out;
    uint64_t at = from;
    while (at < to) {
        const off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // only a hole up to the end of the file
            return {{from, to - from}};
        }
        if (static_cast<uint64_t>(data) >= to) break;
        const off_t hole = ::lseek(fd, data, SEEK_HOLE);
        const uint64_t end = hole < 0 ? to : std::min<uint64_t>(static_cast<uint64_t>(hole), to);
        out.push_back({static_cast<uint64_t>(data), end - static_cast<uint64_t>(data)});
        at = end;
    }
    return out;
}

class DataCopy {
public:
    DataCopy(int src, int dst, const std::string& shown, uint64_t total, JobContext* job)
        : m_src(src), m_dst(dst), m_shown(shown), m_total(total), m_job(job) {}

    // False (and nothing copied) when the kernel refuses copy_file_range between these files.
    Result<bool> in_kernel(const Extent& e, int64_t shift) {
        loff_t in = static_cast<loff_t>(e.offset);
        loff_t out = static_cast<loff_t>(static_cast<int64_t>(e.offset) + shift);
        uint64_t left = e.length;
        while (left > 0) {
            if (job_cancelled(m_job)) return cancelled_error("edit");
            const ssize_t n = ::copy_file_range(m_src, &in, m_dst, &out, std::min(left, kChunk), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && m_copied == 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) return false;
            if (n < 0) return io_failure("cannot copy data into", m_shown);
            if (n == 0) return Error{ErrorCode::E_CHANGED, "input", std::nullopt, "the input became shorter while it was copied"};
            left -= static_cast<uint64_t>(n);
            advance(static_cast<uint64_t>(n));
        }
        return true;
    }

    Status streamed(const Extent& e, int64_t shift) {
        m_buffer.resize(static_cast<size_t>(std::min(kChunk, e.length)));
        for (uint64_t done = 0; done < e.length;) {
            if (job_cancelled(m_job)) return cancelled_error("edit");
            const uint64_t n = std::min<uint64_t>(m_buffer.size(), e.length - done);
            const ssize_t got = ::pread(m_src, m_buffer.data(), n, static_cast<off_t>(e.offset + done));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return io_failure("cannot read", "the input");
            if (got == 0) return Error{ErrorCode::E_CHANGED, "input", std::nullopt, "the input became shorter while it was copied"};
            const uint64_t to = static_cast<uint64_t>(static_cast<int64_t>(e.offset + done) + shift);
            if (Status s = write_at(m_dst, m_buffer.data(), static_cast<uint64_t>(got), to, m_shown); !s) return s;
            done += static_cast<uint64_t>(got);
            advance(static_cast<uint64_t>(got));
        }
        return ok_status();
    }

    uint64_t copied() const { return m_copied; }

private:
    void advance(uint64_t n) {
        m_copied += n;
        job_report(m_job, m_total ? static_cast<double>(m_copied) / static_cast<double>(m_total) : 1.0);
    }

    int m_src, m_dst;
    const std::string& m_shown;
    uint64_t m_total;
    JobContext* m_job;
    uint64_t m_copied = 0;
    std::vector<uint8_t> m_buffer;
};

bool try_reflink(int src, int dst) {
    struct file_clone_range range {};
    range.src_fd = src;
    range.src_offset = 0;
    range.src_length = 0;  // to the end of the file
    range.dest_offset = 0;
    return ::ioctl(dst, FICLONERANGE, &range) == 0;
}

// Copies the data section as the plan places it; returns the path taken and the bytes copied.
Result<DataPath> copy_data(const EditPlan& plan, int src, int dst, const std::string& shown, const WriteEditOptions& options,
                           JobContext* job, uint64_t& copied) {
    const bool same_start = plan.fits_in_place;
    const std::optional<DataPath> force = options.force_path;
    if (same_start && (!force || force == DataPath::reflink) && try_reflink(src, dst)) return DataPath::reflink;
    const auto extents = data_extents(src, plan.old_data_start, plan.old_file_bytes);
    uint64_t total = 0;
    for (const Extent& e : extents) total += e.length;
    DataCopy copy(src, dst, shown, total, job);
    const int64_t shift = plan.data_shift();
    DataPath path = same_start && force != DataPath::stream ? DataPath::copy_file_range : DataPath::stream;
    for (const Extent& e : extents) {
        if (path == DataPath::copy_file_range) {
            auto done = copy.in_kernel(e, shift);
            if (!done) return done.error();
            if (*done) continue;
            path = DataPath::stream;
        }
        if (Status s = copy.streamed(e, shift); !s) return s.error();
    }
    copied = copy.copied();
    return path;
}

Result<UniqueFd> open_input(const Model& model) {
    const SourceFile& f = model.files[0];
    const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int reason = errno;
        return Error{open_error_code(reason), "input", std::nullopt,
                     "cannot open " + escape_for_display(f.path) + ": " + open_error_text(reason)};
    }
    UniqueFd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != f.source->size())
        return Error{ErrorCode::E_FILE_CHANGED, "input", std::nullopt, escape_for_display(f.path) + " changed since it was opened"};
    return owned;
}

// The bytes of each tensor: its size, or for a tensor of unknown size up to the next tensor (by
// offset) or the end of the data.
std::vector<uint64_t> tensor_spans(const Model& model, uint64_t file_end) {
    std::vector<uint64_t> offsets;
    for (const TensorInfo& t : model.tensors) offsets.push_back(t.data_offset);
    std::sort(offsets.begin(), offsets.end());
    std::vector<uint64_t> spans;
    for (const TensorInfo& t : model.tensors) {
        if (t.n_bytes) {
            spans.push_back(*t.n_bytes);
            continue;
        }
        auto next = std::upper_bound(offsets.begin(), offsets.end(), t.data_offset);
        spans.push_back((next == offsets.end() ? file_end : *next) - t.data_offset);
    }
    return spans;
}

bool same_bytes(const ByteSource& a, uint64_t a_at, const ByteSource& b, uint64_t b_at, uint64_t length, JobContext* job) {
    std::vector<uint8_t> x(static_cast<size_t>(std::min(length, kChunk))), y(x.size());
    for (uint64_t done = 0; done < length;) {
        if (job_cancelled(job)) return false;
        const uint64_t n = std::min<uint64_t>(x.size(), length - done);
        if (!a.read(a_at + done, n, x.data()) || !b.read(b_at + done, n, y.data())) return false;
        if (std::memcmp(x.data(), y.data(), n) != 0) return false;
        done += n;
    }
    return true;
}

std::string keys_problem(const EditPlan& plan, const Model& output) {
    if (output.metadata.size() != plan.key_count_after)
        return std::to_string(output.metadata.size()) + " keys read back, " + std::to_string(plan.key_count_after) + " planned";
    for (const KeyChange& c : plan.changes) {
        const MetadataEntry* before = output.find(c.key);
        const std::string& key = c.kind == KeyChangeKind::renamed ? c.new_key : c.key;
        const MetadataEntry* after = output.find(key);
        if (c.kind == KeyChangeKind::removed || c.kind == KeyChangeKind::renamed)
            if (before) return escape_for_display(c.key, 80) + " is still there";
        if (c.kind == KeyChangeKind::removed) continue;
        if (!after) return escape_for_display(key, 80) + " is missing";
        if (format_type(after->value) != c.type_after || format_value(after->value) != c.value_after)
            return escape_for_display(key, 80) + " reads back as " + format_type(after->value) + " " + format_value(after->value);
    }
    return "";
}

bool is_value_finding(ErrorCode code) { return code_name(code).substr(0, 2) == "F_" && code != ErrorCode::F_READ_FAILED; }

}  // namespace

Status write_at(int fd, const uint8_t* p, uint64_t length, uint64_t offset, const std::string& path) {
    while (length > 0) {
        const ssize_t n = ::pwrite(fd, p, length, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ENOSPC;
        if (n <= 0) {
            const int reason = errno;
            const ErrorCode code = reason == EACCES || reason == EROFS || reason == EPERM ? ErrorCode::E_PERMISSION : ErrorCode::E_IO;
            return Error{code, "output", std::nullopt, "cannot write " + escape_for_display(path) + ": " + std::strerror(reason)};
        }
        p += n;
        length -= static_cast<uint64_t>(n);
        offset += static_cast<uint64_t>(n);
    }
    return ok_status();
}

const char* data_path_name(DataPath p) { return name_of(kDataPathNames, p); }
std::optional<DataPath> data_path_from_name(std::string_view name) { return value_of(kDataPathNames, name); }

Model read_edited(const EditPlan& plan, ByteSourcePtr source) {
    return plan.format == Format::safetensors ? read_safetensors(std::move(source)) : read_gguf(std::move(source));
}

bool EditVerification::passed() const { return first_problem().empty(); }

std::string EditVerification::first_problem() const {
    if (!reopened) return "the output does not read back: " + reopen_problem;
    if (!keys_as_planned) return "the keys are not as planned: " + key_problem;
    if (tensors_equal != tensors)
        return std::to_string(tensors - tensors_equal) + " tensors differ from the input" +
            (tensors_differing.empty() ? "" : " (first: " + escape_for_display(tensors_differing[0], 80) + ")");
    if (!fsck_ran) return "fsck did not run";
    if (input_loads && output_loads && input_loads->verdict != LoadVerdict::does_not_load &&
        output_loads->verdict == LoadVerdict::does_not_load)
        return "the input loads in llama.cpp and the output would not: " + output_loads->summary();
    if (llama_output && !llama_output->loaded && llama_input && llama_input->loaded)
        return "the input loads in llama.cpp and llama.cpp refuses the output: " + llama_output->said;
    if (!fsck_region_findings.empty()) return "fsck: " + fsck_region_findings[0];
    return "";
}

std::string EditVerification::load_summary() const {
    const std::string verdict = output_loads ? output_loads->summary() : std::string();
    if (split_part && !verdict.empty()) return verdict + " (as a part of its split model)";
    if (!llama_output) return verdict;
    return llama_output->loaded ? verdict + "; llama.cpp's own dry run loaded it" : "is refused by llama.cpp's own dry run: " + llama_output->said;
}

void EditVerification::ask_llama(const DryRunChecker& check, const std::string& output_path, const std::string& input_path) {
    if (!check || split_part || !input_loads || input_loads->verdict != LoadVerdict::loads) return;
    auto out = check(output_path);
    if (!out) return;  // no load could be tried: the static verdict stands
    llama_output = *out;
    if (llama_output->loaded) return;
    if (auto in = check(input_path)) llama_input = *in;
}

EditVerification verify_edit(const Model& input, const EditPlan& plan, const Model& output, JobContext* job, unsigned fsck_threads) {
    EditVerification v;
    if (output.format != input.format || output.partial || output.error_count() > 0 || output.files.size() != 1) {
        v.reopen_problem =
            output.diagnostics.empty() ? std::string("not a ") + format_name(input.format) + " file" : output.diagnostics.front().message;
        for (const Diagnostic& d : output.diagnostics)
            if (d.severity == Severity::error) {
                v.reopen_problem = d.message;
                break;
            }
        return v;
    }
    v.reopened = true;
    if (input.format == Format::gguf) {
        const std::string& part_path = input.files[0].path;
        std::optional<Model> whole_in = read_split_model_with_part(input.files[0].source, part_path, {}, job);
        std::optional<Model> whole_out = read_split_model_with_part(output.files[0].source, part_path, {}, job);
        v.split_part = whole_in && whole_out;
        v.input_loads = assess_loadability(v.split_part ? *whole_in : input);
        v.output_loads = assess_loadability(v.split_part ? *whole_out : output);
    }
    v.key_problem = keys_problem(plan, output);
    v.keys_as_planned = v.key_problem.empty();
    v.tensors = input.tensors.size();
    const auto spans = tensor_spans(input, input.files[0].source->size());
    for (size_t i = 0; i < input.tensors.size(); ++i) {
        const TensorInfo& t = input.tensors[i];
        const TensorInfo* o = i < output.tensors.size() ? &output.tensors[i] : nullptr;
        const bool equal = o && o->name == t.name && o->type.name == t.type.name && o->ne == t.ne &&
            o->data_offset == plan.tensors[i].new_offset &&
            same_bytes(*input.files[0].source, t.data_offset, *output.files[0].source, o->data_offset, spans[i], job);
        if (equal)
            ++v.tensors_equal;
        else if (v.tensors_differing.size() < EditVerification::kMaxListed)
            v.tensors_differing.push_back(t.name);
    }
    auto report = fsck_model(output, job, fsck_threads);
    if (!report) {
        v.fsck_region_findings.push_back(std::string(code_name(report.error().code)) + ": " + report.error().message);
        return v;
    }
    v.fsck_ran = true;
    v.fsck_errors = report->count(FindingSeverity::error);
    v.fsck_warnings = report->count(FindingSeverity::warning);
    for (const Finding& f : report->findings)
        if (!is_value_finding(f.code) && f.severity != FindingSeverity::info &&
            v.fsck_region_findings.size() < EditVerification::kMaxListed)
            v.fsck_region_findings.push_back(finding_line(f));
    return v;
}

Result<EditOutcome> write_edit(const Model& model, const EditPlan& plan, const std::string& out, JobContext* job,
                               const WriteEditOptions& options) {
    auto src = open_input(model);
    if (!src) return src.error();
    OutputGuard guard = options.guard ? *options.guard : output_guard_for(model);
    auto writer = SafeFileWriter::create(out, guard);
    if (!writer) return writer.error();
    const int dst = writer->descriptor();
    EditOutcome outcome;
    outcome.path = writer->target_path();
    auto path = copy_data(plan, src->get(), dst, out, options, job, outcome.data_bytes_copied);
    if (!path) return path.error();
    outcome.data_path = *path;
    if (::ftruncate(dst, static_cast<off_t>(plan.new_file_bytes())) != 0) return io_failure("cannot size", out);
    if (Status s = write_at(dst, plan.header.data(), plan.header.size(), 0, out); !s) return s.error();
    outcome.bytes = plan.new_file_bytes();

    auto reopened = open_file(writer->temp_path());
    if (!reopened)
        outcome.verification.reopen_problem = reopened.error().message;
    else
        outcome.verification = verify_edit(model, plan, read_edited(plan, *reopened), job, options.fsck_threads);
    if (outcome.verification.passed()) outcome.verification.ask_llama(options.dry_run, writer->temp_path(), model.files[0].path);
    if (job_cancelled(job)) return cancelled_error("edit");
    if (!outcome.verification.passed())
        return Error{ErrorCode::E_EDIT_VERIFY, "output", std::nullopt, outcome.verification.first_problem() + "; nothing was written"};
    if (Status s = writer->commit(); !s) return s.error();
    return outcome;
}

}  // namespace mlens
