// Counts with their noun: one helper for every "1 tensor" / "2 tensors" the tools print.
#include <catch2/catch.hpp>

#include "mlens/text/plural.h"

using namespace mlens;

TEST_CASE("plural puts the noun in the number of its count", "[text][plural]") {
    CHECK(plural(0, "tensor") == "0 tensors");
    CHECK(plural(1, "tensor") == "1 tensor");
    CHECK(plural(2, "tensor") == "2 tensors");
    CHECK(plural(21, "file") == "21 files");
    CHECK(plural(1, "entry", "entries") == "1 entry");
    CHECK(plural(3, "entry", "entries") == "3 entries");
    CHECK(plural(1, "row is", "rows are") == "1 row is");
    CHECK(plural(4, "row is", "rows are") == "4 rows are");
}

TEST_CASE("noun_for and counted_as keep the caller's text of the number", "[text][plural]") {
    CHECK(noun_for(1, "key") == "key");
    CHECK(noun_for(0, "key") == "keys");
    CHECK(noun_for(1, "data op", "data ops") == "data op");
    CHECK(counted_as("12,345", 12345, "value") == "12,345 values");
    CHECK(counted_as("1", 1, "value") == "1 value");
}
