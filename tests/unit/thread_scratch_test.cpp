// thread_scratch: one object per place of use and thread, kept across calls, destroyed as its
// thread ends; no C++ thread_local destructor anywhere in the core's passes.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "thread_scratch.h"

using namespace mlens;

namespace {

std::atomic<int> g_alive{0};

struct Counted {
    Counted() { ++g_alive; }
    ~Counted() { --g_alive; }
    int uses = 0;
};

Counted& first_place() { return thread_scratch<Counted>([] {}); }
Counted& second_place() { return thread_scratch<Counted>([] {}); }

}  // namespace

TEST_CASE("thread_scratch keeps one object per place of use and thread until the thread ends", "[parallel]") {
    Counted& a = first_place();
    ++a.uses;
    CHECK(&first_place() == &a);
    CHECK(first_place().uses == 1);
    CHECK(&second_place() != &a);  // another place, another object
    const int before = g_alive;
    Counted* theirs = nullptr;
    std::thread t([&] {
        theirs = &first_place();
        CHECK(theirs->uses == 0);  // another thread, another object
        second_place();
        CHECK(g_alive == before + 2);
    });
    t.join();
    CHECK(theirs != &a);
    CHECK(g_alive == before);  // both destroyed as that thread ended
    CHECK(&first_place() == &a);
}

TEST_CASE("the core keeps no thread_local object with a destructor", "[parallel]") {
    // glibc registers such an object's destructor at its first use in a thread with an allocation
    // whose failure ends the program: only trivially destructible thread_locals (pointers) remain.
    const std::filesystem::path core = MLENS_CORE_SOURCE_DIR;
    int found = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(core)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path());
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            const size_t at = line.find("thread_local ");
            if (at == std::string::npos || line.find("//") < at) continue;
            ++found;
            INFO(entry.path().string() << ":" << number << ": " << line);
            CHECK(line.find('*') != std::string::npos);  // a pointer
        }
    }
    CHECK(found >= 3);
}
