// frame_bench
//
// CPU time per frame of the whole app window (AppShell drawn headless at 1600x1000) while
// scrolling big lists, against the goal of 2 ms per frame, and the wall time from an open job
// finishing to the first frame that lays out the panel's rows, against the goal of 100 ms:
//  - the tokenizer panel of a generated 1,000,000-token GGUF (tokens, scores, token types):
//    wheel scrolling, a fling through the whole vocabulary, typing a search query that matches
//    111,111 tokens, the frames while that search runs, and a fling through its matches;
//  - the tensor table of a generated 10,000-tensor GGUF: wheel scrolling and a fling.
// A frame is timed with CLOCK_THREAD_CPUTIME_ID on the main thread from NewFrame to Render
// (the search itself runs on a worker thread and is not counted). Headless ImGui has no GPU, so
// no rendering, texture upload or buffer swap is included. The mouse is over the table while it
// scrolls, so the row under it is hovered as it would be in the window.
// The numbers are informational: the program exits non-zero only when a file cannot be written
// or opened, or a panel never shows its rows.
#include <imgui.h>
#include <imgui_internal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "app_shell.h"
#include "headless.h"
#include "large_gguf.h"
#include "state/array_search.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace mlens;

constexpr int kFrames = 300;
constexpr double kFrameGoalMs = 2.0;
constexpr double kFirstRowsGoalMs = 100.0;
constexpr int kMaxFramesToRows = 60;
constexpr uint64_t kTokens = 1000000, kTensors = 10000;
constexpr const char* kQuery = "tok_1";

double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

void print_header() {
    std::printf("%-44s %6s %7s %7s %7s %7s  %s\n", "case (CPU ms per frame)", "frames", "mean", "p50", "p95", "max", "goal < 2 ms (p95)");
}

void print_stats(const std::string& label, std::vector<double> ms, const std::string& note = {}) {
    if (ms.empty()) {
        std::printf("%-44s did not scroll\n", label.c_str());
        return;
    }
    std::sort(ms.begin(), ms.end());
    double sum = 0;
    for (double v : ms) sum += v;
    auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * static_cast<double>(ms.size())))]; };
    double p95 = pct(0.95);
    std::printf("%-44s %6zu %7.3f %7.3f %7.3f %7.3f  %s%s\n", label.c_str(), ms.size(), sum / static_cast<double>(ms.size()), pct(0.5), p95,
                ms.back(), p95 < kFrameGoalMs ? "ok" : "MISSED", note.c_str());
}

// The child window a scrolling table named `table` drew its rows into this frame, if any.
ImGuiWindow* table_window(const char* table) {
    std::string needle = std::string("/") + table + "_";
    for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
        if (w->Active && std::strstr(w->Name, needle.c_str())) return w;
    return nullptr;
}

float row_height() { return ImGui::GetTextLineHeightWithSpacing(); }

// Rows the table's clipper laid out this frame (its content height over the row height).
uint64_t rows_laid_out(const char* table) {
    ImGuiWindow* w = table_window(table);
    if (!w) return 0;
    double h = static_cast<double>(w->DC.CursorMaxPos.y - w->DC.CursorStartPos.y);
    return static_cast<uint64_t>(std::max(0.0, std::floor(h / row_height())));
}

// Options of an app that shows `panel` when a document opens and saves no settings.
ShellOptions start_in(const std::string& panel) {
    ShellOptions options;
    options.start_panel = panel;
    return options;
}

// One app window, headless, that opens one file with `panel` in front.
class App {
public:
    explicit App(const std::string& panel)
        : m_jobs([this] { m_job_done.store(Clock::now().time_since_epoch().count()); }),
          m_shell(m_settings, m_jobs, m_imgui.fonts(), start_in(panel)) {}

    // Main-thread CPU ms of one frame.
    double frame() {
        double t0 = thread_cpu_ms();
        m_imgui.frame([&] { m_shell.frame(); });
        return thread_cpu_ms() - t0;
    }

    // Opens `path` and waits for the open job as an idle window loop would; then draws frames
    // until `table` lays out `rows` rows. Prints the wall time from the job finishing to the end
    // of that frame. False when the rows never appear.
    bool open(const std::string& label, const std::string& path, const char* table, uint64_t rows) {
        frame();
        auto start = Clock::now();
        m_shell.open(path);
        m_jobs.wait_all();
        Clock::time_point done{Clock::duration(m_job_done.load())};
        std::string frame_ms;
        int frames = 0;
        bool shown = false;
        while (!shown && frames < kMaxFramesToRows) {
            auto t0 = Clock::now();
            frame();
            ++frames;
            shown = rows_laid_out(table) >= rows;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s%.1f", frame_ms.empty() ? "" : " + ", ms_between(t0, Clock::now()));
            frame_ms += buf;
        }
        double latency = ms_between(done, Clock::now());
        Document* doc = m_shell.workspace().active();
        if (!shown || !doc || !doc->ready()) {
            std::printf("%-44s rows never shown after %d frames\n", label.c_str(), frames);
            return false;
        }
        std::printf(
            "%-44s first rows %6.1f ms after the open job (%d frames: %s ms)  goal < %.0f ms: %s"
            "   [open job %.0f ms, parse %.0f ms]\n",
            label.c_str(), latency, frames, frame_ms.c_str(), kFirstRowsGoalMs, latency < kFirstRowsGoalMs ? "ok" : "MISSED",
            ms_between(start, done), doc->parse_ms);
        return true;
    }

    // Frames with the mouse over `table` and the wheel turned `notches` per frame (negative:
    // down). Returns the CPU ms of each.
    std::vector<double> wheel(const char* table, float notches, int frames) {
        point_at(table);
        std::vector<double> out;
        for (int i = 0; i < frames; ++i) {
            ImGui::GetIO().MouseWheel = notches;
            out.push_back(frame());
        }
        return out;
    }

    // Frames that scroll `table` from where it is to its end in `frames` even steps (after one
    // frame that measures how far a wheel notch scrolls). Empty when the table does not scroll.
    std::vector<double> fling(const char* table, int frames) {
        frame();  // a table's scroll range follows the rows it laid out in the frame before
        float before = table_window(table)->Scroll.y;
        wheel(table, -1.0f, 1);
        const ImGuiWindow* w = table_window(table);
        float step = w->Scroll.y - before;
        if (step <= 0) return {};
        return wheel(table, -(w->ScrollMax.y - w->Scroll.y) / (step * static_cast<float>(frames)), frames);
    }

    // Where a fling through `rows` rows of `table` ended: the first row in view.
    std::string position(const char* table, uint64_t rows) {
        uint64_t first = static_cast<uint64_t>(table_window(table)->Scroll.y / row_height());
        return "  [ended at row " + std::to_string(first) + " of " + std::to_string(rows) + "]";
    }

    Document& document() { return *m_shell.workspace().active(); }

    // Clicks into `table` (which selects the row under the mouse), presses Ctrl+F and types
    // `query` one character per frame. Returns the CPU ms of the typing frames.
    std::vector<double> type_search(const char* table, const std::string& query) {
        ImGuiIO& io = ImGui::GetIO();
        point_at(table);
        io.MouseDown[0] = true;
        frame();
        io.MouseDown[0] = false;
        frame();
        io.KeyCtrl = true;
        io.KeysDown['F'] = true;
        frame();
        io.KeyCtrl = false;
        io.KeysDown['F'] = false;
        frame();
        return type(query);
    }

    // Types `text` into the focused box, one character per frame.
    std::vector<double> type(const std::string& text) {
        std::vector<double> out;
        for (char c : text) {
            ImGui::GetIO().AddInputCharacter(static_cast<unsigned char>(c));
            out.push_back(frame());
        }
        return out;
    }

    // Frames until no job runs, plus the one that publishes the result; after_frame (if given)
    // runs after each but that last one.
    std::vector<double> until_idle(const std::function<void()>& after_frame = {}) {
        std::vector<double> out;
        while (m_shell.busy()) {
            out.push_back(frame());
            if (after_frame) after_frame();
        }
        out.push_back(frame());
        return out;
    }

private:
    void point_at(const char* table) { ImGui::GetIO().MousePos = table_window(table)->InnerRect.GetCenter(); }

    test::HeadlessImGui m_imgui{1600, 1000};
    Settings m_settings;
    std::atomic<Clock::rep> m_job_done{0};
    JobRunner m_jobs;
    AppShell m_shell;
};

bool tokenizer_cases(const std::string& path) {
    App app("tokenizer");
    if (!app.open("tokenizer, 1,000,000 tokens", path, "vocabulary", kTokens)) return false;
    print_header();
    app.wheel("vocabulary", -1.0f, 10);  // warm-up
    print_stats("tokenizer: wheel, 1 notch per frame", app.wheel("vocabulary", -1.0f, kFrames));
    std::vector<double> fling = app.fling("vocabulary", kFrames);
    print_stats("tokenizer: fling through 1,000,000 rows", fling, app.position("vocabulary", kTokens));
    print_stats(std::string("tokenizer: typing \"") + kQuery + "\" (1 char per frame)", app.type_search("vocabulary", kQuery));
    app.until_idle();
    // One more character narrows the search; the previous query's rows stay until the new search
    // hands over its first matches.
    const std::string narrower = std::string(kQuery) + "1";
    const TokenizerInfo& t = app.document().index()->tokenizer;
    const uint64_t matches = search_array(*t.tokens, "tokenizer.ggml.tokens", narrower, t.encoding).size();
    auto search_start = Clock::now();
    std::vector<double> searching = app.type("1");
    double first_rows_ms = -1;
    auto watch = [&] {
        if (first_rows_ms < 0 && rows_laid_out("vocabulary") <= matches + 1) first_rows_ms = ms_between(search_start, Clock::now());
    };
    watch();
    for (double ms : app.until_idle(watch)) searching.push_back(ms);
    char search_note[96];
    std::snprintf(search_note, sizeof search_note, "  [its first rows after %.1f ms; %.0f ms on a worker]", first_rows_ms,
                  ms_between(search_start, Clock::now()));
    print_stats("tokenizer: frames while \"" + narrower + "\" is searched", searching, search_note);
    if (rows_laid_out("vocabulary") > matches + 1) {
        std::printf("the search did not filter the vocabulary\n");
        return false;
    }
    fling = app.fling("vocabulary", kFrames);
    print_stats("tokenizer: fling through " + std::to_string(matches) + " matches", fling, app.position("vocabulary", matches));
    return true;
}

bool tensor_cases(const std::string& path) {
    App app("tensors");
    if (!app.open("tensors, 10,000 tensors", path, "tensors", kTensors)) return false;
    print_header();
    app.wheel("tensors", -1.0f, 10);  // warm-up
    print_stats("tensors: wheel, 1 notch per frame", app.wheel("tensors", -1.0f, kFrames));
    std::vector<double> fling = app.fling("tensors", kFrames);
    print_stats("tensors: fling through 10,000 rows", fling, app.position("tensors", kTensors));
    return true;
}

}  // namespace

int main() {
    test::TempDir dir;
    std::string tokens = dir.file("1m-tokens.gguf"), tensors = dir.file("10k-tensors.gguf");
    if (!test::write_large_gguf(tokens, {.tokens = kTokens, .token_types = true}) ||
        !test::write_large_gguf(tensors, {.tensors = kTensors})) {
        std::fprintf(stderr, "frame_bench: cannot write the GGUF files in %s\n", dir.path().c_str());
        return 1;
    }
    std::printf(
        "frame_bench: main-thread CPU time per frame (NewFrame to Render), headless ImGui at 1600x1000;\n"
        "no GPU work is included (headless has none). Goals: < %.0f ms per frame, first rows < %.0f ms.\n",
        kFrameGoalMs, kFirstRowsGoalMs);
    bool ok = tokenizer_cases(tokens);
    ok = tensor_cases(tensors) && ok;
    return ok ? 0 : 1;
}
