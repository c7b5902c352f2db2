// StringOffsets: 4-byte offsets that stay exact past 4 GiB from the array's start, filled one at
// a time or in bulk, truncated in a copy without touching the original.
#include <catch2/catch.hpp>

#include <vector>

#include "mlens/model/string_offsets.h"

using namespace mlens;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Writes `offsets` (full, from one buffer) through the bulk interface.
void commit_bulk(StringOffsets& table, const std::vector<uint64_t>& offsets) {
    uint32_t* slots = table.next_slots();
    for (size_t i = 0; i < offsets.size(); ++i) slots[i] = static_cast<uint32_t>(offsets[i] - table.base());
    table.commit(offsets.size(), offsets.front(), offsets.back());
}

}  // namespace

TEST_CASE("offsets appended one at a time read back exactly, below and past 4 GiB") {
    const uint64_t base = 1000;
    const std::vector<uint64_t> offsets = {base, base + 9, base + 4 * kGiB - 1, base + 4 * kGiB, base + 4 * kGiB + 7,
                                           base + 9 * kGiB + 3, base + 13 * kGiB};
    StringOffsets table(base, offsets.size());
    for (uint64_t o : offsets) table.append(o);
    REQUIRE(table.size() == offsets.size());
    for (size_t i = 0; i < offsets.size(); ++i) CHECK(table[i] == offsets[i]);
}

TEST_CASE("a bulk write that crosses 4 GiB is exact on both sides, and between bulk writes") {
    const uint64_t base = 64;
    StringOffsets table(base, 10);
    commit_bulk(table, {base, base + 100, base + 200});
    commit_bulk(table, {base + 4 * kGiB - 20, base + 4 * kGiB - 8, base + 4 * kGiB + 4, base + 4 * kGiB + 30});
    commit_bulk(table, {base + 8 * kGiB + 1, base + 8 * kGiB + 2});
    table.append(base + 12 * kGiB);
    const std::vector<uint64_t> expected = {base,
                                            base + 100,
                                            base + 200,
                                            base + 4 * kGiB - 20,
                                            base + 4 * kGiB - 8,
                                            base + 4 * kGiB + 4,
                                            base + 4 * kGiB + 30,
                                            base + 8 * kGiB + 1,
                                            base + 8 * kGiB + 2,
                                            base + 12 * kGiB};
    REQUIRE(table.size() == expected.size());
    CHECK(table.free_slots() == 0);
    for (size_t i = 0; i < expected.size(); ++i) CHECK(table[i] == expected[i]);
}

TEST_CASE("a truncated copy keeps its first offsets and leaves the original whole") {
    StringOffsets table(0, 4);
    for (uint64_t o : std::vector<uint64_t>{0, 5, 4 * kGiB + 1, 4 * kGiB + 9}) table.append(o);
    StringOffsets copy = table;
    copy.truncate(3);
    REQUIRE(copy.size() == 3);
    CHECK(copy[2] == 4 * kGiB + 1);
    copy.truncate(2);
    CHECK(copy.size() == 2);
    CHECK(copy[1] == 5);
    REQUIRE(table.size() == 4);
    CHECK(table[3] == 4 * kGiB + 9);
    copy.truncate(10);
    CHECK(copy.size() == 2);
}

TEST_CASE("an empty table has no offsets") {
    StringOffsets table;
    CHECK(table.size() == 0);
    CHECK(table.free_slots() == 0);
    StringOffsets sized(7, 0);
    CHECK(sized.size() == 0);
    CHECK(sized.base() == 7);
}
