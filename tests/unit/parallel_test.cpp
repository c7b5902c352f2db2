// parallel_for: every item once, stopping after a failure, nested and concurrent calls.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mlens/util/parallel.h"

using namespace mlens;

TEST_CASE("parallel_for calls every item exactly once", "[parallel]") {
    for (unsigned threads : {0u, 1u, 2u, 8u})
        for (uint64_t count : {0u, 1u, 3u, 1000u}) {
            std::vector<std::atomic<int>> calls(count);
            CHECK(parallel_for(count, threads, [&](uint64_t i) {
                ++calls[i];
                return true;
            }));
            for (auto& c : calls) CHECK(c == 1);
        }
}

TEST_CASE("parallel_for stops starting items after one fails", "[parallel]") {
    std::vector<int> seen;
    CHECK_FALSE(parallel_for(100, 1, [&](uint64_t i) {
        seen.push_back(static_cast<int>(i));
        return i != 5;
    }));
    CHECK(seen == std::vector<int>{0, 1, 2, 3, 4, 5});  // items go in increasing order
    std::atomic<uint64_t> started{0};
    CHECK_FALSE(parallel_for(100000, 4, [&](uint64_t i) {
        ++started;
        return i < 10;
    }));
    CHECK(started < 100000);
}

TEST_CASE("an exception thrown by an item reaches the caller, from a helper thread too", "[parallel]") {
    SECTION("thrown on a helper thread while the caller works on its own item") {
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<bool> helper_threw{false};
        std::atomic<uint64_t> after{0};
        CHECK_THROWS_AS(parallel_for(1000, 2,
                                     [&](uint64_t i) {
                                         if (std::this_thread::get_id() != caller) {
                                             if (!helper_threw.exchange(true)) throw std::bad_alloc();
                                             ++after;
                                             return true;
                                         }
                                         // The caller's first item waits until a helper has thrown.
                                         for (int wait = 0; i == 0 && !helper_threw && wait < 5000; ++wait)
                                             std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                         return true;
                                     }),
                        std::bad_alloc);
        CHECK(helper_threw);
        CHECK(after < 999);  // the items stopped
    }
    SECTION("thrown on the calling thread") {
        CHECK_THROWS_AS(parallel_for(10, 1, [](uint64_t i) -> bool { throw std::runtime_error("item " + std::to_string(i)); }),
                        std::runtime_error);
    }
    // The pool still serves calls afterwards.
    std::atomic<uint64_t> calls{0};
    CHECK(parallel_for(100, 4, [&](uint64_t) {
        ++calls;
        return true;
    }));
    CHECK(calls == 100);
}

TEST_CASE("parallel_for nests and serves concurrent callers", "[parallel]") {
    std::atomic<uint64_t> inner{0};
    CHECK(parallel_for(16, 4, [&](uint64_t) {
        return parallel_for(100, 4, [&](uint64_t) {
            ++inner;
            return true;
        });
    }));
    CHECK(inner == 1600);
    std::atomic<uint64_t> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c)
        callers.emplace_back([&] {
            for (int round = 0; round < 20; ++round)
                parallel_for(500, 3, [&](uint64_t) {
                    ++total;
                    return true;
                });
        });
    for (auto& t : callers) t.join();
    CHECK(total == 4u * 20 * 500);
}
