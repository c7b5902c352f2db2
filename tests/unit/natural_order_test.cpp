// Names in the order people count them: digit runs compare by value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "mlens/text/natural_order.h"

using namespace mlens;

TEST_CASE("natural_less orders digit runs by value and the rest byte by byte", "[text][natural_order]") {
    std::vector<std::string> fields = {"tensors[10]", "tensors[1]", "tensors[2]", "tensors[0]", "tensors[11]"};
    std::sort(fields.begin(), fields.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    CHECK(fields == std::vector<std::string>{"tensors[0]", "tensors[1]", "tensors[2]", "tensors[10]", "tensors[11]"});
    CHECK(natural_less("blk.9.attn_q.weight", "blk.10.attn_k.weight"));
    CHECK(!natural_less("blk.10.attn_k.weight", "blk.9.attn_q.weight"));
    CHECK(natural_less("blk.2.attn_k.weight", "blk.2.attn_q.weight"));
    CHECK(natural_less("blk.2", "blk.2.a"));
    CHECK(natural_less("x1", "x01"));  // equal values: fewer leading zeros first
    CHECK(!natural_less("x01", "x1"));
    CHECK(!natural_less("same", "same"));
    CHECK(natural_less("", "a"));
    CHECK(natural_less("a9", "aa"));  // '9' < 'a' byte by byte when one run is digits
}
