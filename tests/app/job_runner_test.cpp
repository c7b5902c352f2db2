#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>
#include <thread>

#include "large_gguf.h"
#include "state/job_runner.h"
#include "test_paths.h"
#include "workspace_harness.h"

using namespace mlens;

TEST_CASE("jobs run off the calling thread, report progress, wake the loop and can be cancelled") {
    std::atomic<int> wakes{0};
    JobRunner runner([&] { ++wakes; });
    std::atomic<bool> started{false};
    const std::thread::id caller = std::this_thread::get_id();
    JobHandle<int> looping = runner.start("loop", [&](JobContext& ctx) -> Result<int> {
        started = true;
        while (!ctx.cancelled()) {
            ctx.report(0.25);
            std::this_thread::yield();
        }
        return cancelled_error();
    });
    JobHandle<bool> quick = runner.start("quick", [&](JobContext&) -> Result<bool> { return std::this_thread::get_id() != caller; });
    while (!started) std::this_thread::yield();
    CHECK(runner.busy());
    CHECK(runner.jobs().size() == 2);
    CHECK_FALSE(looping.done());
    CHECK_FALSE(looping.try_take().has_value());
    CHECK(looping);
    looping.cancel();
    runner.wait_all();
    CHECK(looping.done());
    CHECK(looping.cancelled());
    CHECK(quick.progress() == 1.0);
    CHECK_FALSE(runner.busy());
    CHECK(wakes == 2);

    std::optional<Result<int>> stopped = looping.try_take();
    REQUIRE(stopped.has_value());
    REQUIRE_FALSE(stopped->ok());
    CHECK(stopped->error().code == ErrorCode::E_CANCELLED);
    CHECK_FALSE(looping);

    std::optional<Result<bool>> off_thread = quick.try_take();
    REQUIRE(off_thread.has_value());
    REQUIRE(off_thread->ok());
    CHECK(off_thread->value());
    CHECK_FALSE(quick.try_take().has_value());
}

TEST_CASE("jobs beyond the pool's threads wait their turn and all deliver their results") {
    JobRunner runner;
    REQUIRE(runner.threads() >= 2);
    std::vector<JobHandle<size_t>> handles;
    for (size_t i = 0; i < 3 * runner.threads(); ++i)
        handles.push_back(runner.start("square " + std::to_string(i), [i](JobContext&) -> Result<size_t> { return i * i; }));
    runner.wait_all();
    CHECK(runner.jobs().empty());
    for (size_t i = 0; i < handles.size(); ++i) {
        std::optional<Result<size_t>> r = handles[i].try_take();
        REQUIRE(r.has_value());
        CHECK(r->value() == i * i);
    }
}

TEST_CASE("a job whose work runs out of memory ends with E_NO_MEMORY, the runner going on") {
    JobRunner runner;
    JobHandle<int> starved = runner.start("Health check", [](JobContext&) -> Result<int> { throw std::bad_alloc(); });
    JobHandle<int> next = runner.start("next", [](JobContext&) -> Result<int> { return 7; });
    runner.wait_all();
    std::optional<Result<int>> r = starved.try_take();
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->ok());
    CHECK(r->error().code == ErrorCode::E_NO_MEMORY);
    CHECK(r->error().message.starts_with("out of memory while running Health check"));
    std::optional<Result<int>> after = next.try_take();
    REQUIRE(after.has_value());
    CHECK(after->value() == 7);
}

TEST_CASE("destroying the runner cancels running and queued jobs and finishes them") {
    std::vector<JobHandle<Done>> handles;
    {
        JobRunner runner;
        for (size_t i = 0; i < runner.threads() + 2; ++i)
            handles.push_back(runner.start("forever", [](JobContext& ctx) -> Status {
                while (!ctx.cancelled()) std::this_thread::yield();
                return ok_status();
            }));
    }
    for (JobHandle<Done>& h : handles) {
        CHECK(h.done());
        CHECK(h.cancelled());
        CHECK(h.try_take().has_value());
    }
}

// AddressSanitizer reserves terabytes of shadow address space: no address-space limit there.
#ifndef __SANITIZE_ADDRESS__
namespace {

constexpr const char* kFreshProcess = "MLENS_TEST_FRESH_PROCESS";

// Runs this test binary again on test `name` alone, with kFreshProcess set; its exit status. A
// fresh process has no memory freed by earlier tests that a limit on new address space could not
// stop it from using.
int run_in_fresh_process(const std::string& name) {
    std::string exe(4096, '\0');
    const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
    if (n <= 0) return -1;
    exe.resize(static_cast<size_t>(n));
    const pid_t pid = fork();
    if (pid == 0) {
        setenv(kFreshProcess, "1", 1);
        execl(exe.c_str(), exe.c_str(), name.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a document whose opening runs out of memory fails with E_NO_MEMORY - the workspace goes on") {
    if (!std::getenv(kFreshProcess)) {
        CHECK(run_in_fresh_process("a document whose opening runs out of memory fails with E_NO_MEMORY - the workspace goes on") == 0);
        return;
    }
    test::TempDir dir;
    // A vocabulary of 4M tokens: its open needs far more than the room left below.
    REQUIRE(test::write_large_gguf(dir.file("vocab.gguf"), {4u << 20, false, 0}));
    test::WorkspaceHarness h;
    // The address space this process has, plus 8 MiB, while the open runs.
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    rlimit before{};
    REQUIRE(getrlimit(RLIMIT_AS, &before) == 0);
    rlimit tight = before;
    tight.rlim_cur = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + (8u << 20);
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    Document& starved = h.workspace.open(dir.file("vocab.gguf"));
    h.jobs.wait_all();
    REQUIRE(setrlimit(RLIMIT_AS, &before) == 0);
    h.workspace.poll();
    INFO(starved.error);
    CHECK(starved.state == DocumentState::failed);
    CHECK(starved.error_code == ErrorCode::E_NO_MEMORY);
    CHECK(starved.error.starts_with("out of memory while running open"));
    // With room again, the same document opens.
    Document& again = h.workspace.open(dir.file("vocab.gguf"));
    h.jobs.wait_all();
    h.workspace.poll();
    CHECK(again.ready());
}
#endif
