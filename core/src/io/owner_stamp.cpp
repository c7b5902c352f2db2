#include "mlens/io/owner_stamp.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "mlens/text/digits.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

constexpr std::string_view kWriterMark = ".tmp-";
constexpr std::string_view kPreviousMark = ".prev-";
constexpr std::string_view kExportMark = ".part-";
constexpr std::string_view kLoadPrefix = "mlens-load-";
constexpr size_t kRandomChars = 6;  // what mkstemp and mkdtemp put in place of XXXXXX

// The start time (field 22) of /proc/<pid>/stat. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself, so fields are counted after its last ')'.
std::optional<unsigned long long> start_time_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream rest(line.substr(close + 1));
    std::string field;
    // Fields 3..21, then 22.
    for (int i = 3; i <= 21; ++i)
        if (!(rest >> field)) return std::nullopt;
    unsigned long long start = 0;
    if (!(rest >> start)) return std::nullopt;
    return start;
}

// Which pid space a pid belongs to: this machine (/etc/machine-id) and this process's pid
// namespace (the inode of /proc/self/ns/pid), as one 32-bit FNV-1a number. Two processes that
// share the number read each other's pids in /proc; "0" when neither can be read.
const std::string& pid_space() {
    static const std::string space = [] {
        std::string identity;
        std::ifstream machine("/etc/machine-id");
        std::getline(machine, identity);
        struct stat st {};
        if (::stat("/proc/self/ns/pid", &st) == 0) identity += "/" + std::to_string(st.st_ino);
        if (identity.empty()) return std::string("0");
        uint32_t h = 2166136261u;
        for (unsigned char c : identity) h = (h ^ c) * 16777619u;
        return std::to_string(h);
    }();
    return space;
}

struct ParsedStamp {
    pid_t pid = 0;
    unsigned long long start = 0;
    std::string_view space;  // empty in a stamp of two fields (an older ModelLens's)
};

// "<pid>-<start>-<space>", or "<pid>-<start>" as older versions wrote it.
std::optional<ParsedStamp> parse_stamp(std::string_view stamp) {
    const size_t dash = stamp.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 >= stamp.size()) return std::nullopt;
    ParsedStamp p;
    const size_t second = stamp.find('-', dash + 1);
    const std::string_view start = stamp.substr(dash + 1, second == std::string_view::npos ? std::string_view::npos : second - dash - 1);
    if (second != std::string_view::npos) {
        p.space = stamp.substr(second + 1);
        if (p.space.empty() || !all_decimal_digits(p.space)) return std::nullopt;
    }
    long long pid = 0;
    auto r1 = std::from_chars(stamp.data(), stamp.data() + dash, pid);
    auto r2 = std::from_chars(start.data(), start.data() + start.size(), p.start);
    if (r1.ec != std::errc{} || r1.ptr != stamp.data() + dash || start.empty() || r2.ec != std::errc{} ||
        r2.ptr != start.data() + start.size())
        return std::nullopt;
    if (pid <= 0 || pid > 0x3fffffff) return std::nullopt;
    p.pid = static_cast<pid_t>(pid);
    return p;
}

// "<stamp>-XXXXXX" at the end of `rest`: the stamp, when the shape holds.
std::optional<std::string> stamp_before_random(std::string_view rest) {
    if (rest.size() < kRandomChars + 2 || rest[rest.size() - kRandomChars - 1] != '-') return std::nullopt;
    std::string_view stamp = rest.substr(0, rest.size() - kRandomChars - 1);
    if (!parse_stamp(stamp)) return std::nullopt;
    return std::string(stamp);
}

std::mutex g_sink_mutex;
std::function<void(const std::string&)> g_sink;
std::set<std::string> g_said;  // the notices given: each is given once (two sweeps of one folder find the same files)

std::string kind_text(TempKind kind) {
    static constexpr NameRow<TempKind> kNames[] = {{TempKind::writer_file, "temporary file"},
                                                   {TempKind::previous_file, "previous file"},
                                                   {TempKind::load_folder, "converted copy"},
                                                   {TempKind::export_folder, "export folder"}};
    return name_of(kNames, kind, "temporary");
}

}  // namespace

std::string owner_stamp() { return stamp_of_process(::getpid()).value_or(std::to_string(::getpid()) + "-0-" + pid_space()); }

std::optional<std::string> stamp_of_process(pid_t pid) {
    auto start = start_time_of(pid);
    if (!start) return std::nullopt;
    return std::to_string(pid) + "-" + std::to_string(*start) + "-" + pid_space();
}

bool owner_gone(std::string_view stamp) {
    auto parsed = parse_stamp(stamp);
    // A pid of another machine or pid namespace (a container, a host sharing the folder), or of
    // a stamp that does not say, names no process here: nothing can be proved about it.
    if (!parsed || parsed->space != pid_space()) return false;
    struct stat st {};
    const std::string proc = "/proc/" + std::to_string(parsed->pid);
    if (::stat(proc.c_str(), &st) != 0) return errno == ENOENT;
    auto start = start_time_of(parsed->pid);
    return start && *start != parsed->start;
}

std::optional<TempName> parse_temp_name(std::string_view name) {
    if (name.starts_with(kLoadPrefix)) {
        auto stamp = stamp_before_random(name.substr(kLoadPrefix.size()));
        if (!stamp) return std::nullopt;
        return TempName{TempKind::load_folder, "", *stamp};
    }
    if (!name.starts_with('.')) return std::nullopt;
    for (auto [mark, kind] : {std::pair{kWriterMark, TempKind::writer_file}, std::pair{kPreviousMark, TempKind::previous_file},
                              std::pair{kExportMark, TempKind::export_folder}}) {
        const size_t at = name.rfind(mark);
        if (at == std::string_view::npos || at < 1) continue;
        auto stamp = stamp_before_random(name.substr(at + mark.size()));
        if (!stamp) continue;
        return TempName{kind, std::string(name.substr(1, at - 1)), *stamp};
    }
    return std::nullopt;
}

std::vector<StaleTemporary> stale_temporaries(const std::string& folder) {
    std::vector<StaleTemporary> out;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return out;
    while (dirent* e = ::readdir(dir)) {
        std::optional<TempName> parsed = parse_temp_name(e->d_name);
        if (!parsed) continue;
        struct stat st {};
        if (::lstat((folder + "/" + e->d_name).c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
        const bool is_folder_kind = parsed->kind == TempKind::load_folder || parsed->kind == TempKind::export_folder;
        if (is_folder_kind ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) continue;
        if (!owner_gone(parsed->stamp)) continue;
        out.push_back({e->d_name, std::move(*parsed), S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0});
    }
    ::closedir(dir);
    return out;
}

size_t sweep_stale_temporaries(const std::string& folder) {
    size_t removed = 0;
    for (const StaleTemporary& stale : stale_temporaries(folder)) {
        const TempName& temp = stale.temp;
        const std::string path = folder + "/" + stale.name;
        const std::string owner = "process " + temp.stamp.substr(0, temp.stamp.find('-'));
        if (temp.kind == TempKind::previous_file) {
            temp_notice("kept " + escape_for_display(path) + ": the previous content of " + escape_for_display(temp.target) + ", left by " +
                        owner + " (no longer running) when it was stopped while replacing it; rename it back to restore it");
            continue;
        }
        std::error_code ec;
        if (temp.kind == TempKind::load_folder || temp.kind == TempKind::export_folder)
            std::filesystem::remove_all(path, ec);
        else if (::unlink(path.c_str()) != 0)
            continue;
        if (ec) continue;
        ++removed;
        temp_notice("removed " + escape_for_display(path) + ", a " + kind_text(temp.kind) + " left by " + owner + " (no longer running)");
    }
    return removed;
}

std::string system_temp_folder() {
    std::error_code ec;
    std::string temp = std::filesystem::temp_directory_path(ec).string();
    return ec || temp.empty() ? "/tmp" : temp;
}

void set_temp_notice_sink(std::function<void(const std::string&)> sink) {
    std::lock_guard lock(g_sink_mutex);
    g_sink = std::move(sink);
}

void print_temp_notices(std::string program) {
    set_temp_notice_sink([program = std::move(program)](const std::string& message) {
        std::fprintf(stderr, "%s: note: %s\n", program.c_str(), message.c_str());
    });
}

void temp_notice(const std::string& message) {
    std::lock_guard lock(g_sink_mutex);
    if (g_sink && g_said.insert(message).second) g_sink(message);
}

}  // namespace mlens
