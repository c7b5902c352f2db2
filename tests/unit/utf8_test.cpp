// utf8_valid (an automaton for short texts, a vector pass for long ones) accepts exactly the texts
// that utf8_decode reads to their end, wherever a sequence falls relative to the vector pass's
// 32-byte (AVX2) or 64-byte (AVX-512) blocks, and follows Unicode's table of well-formed sequences.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mlens/text/utf8.h"

using namespace mlens;

namespace {

bool valid(const std::string& s) { return utf8_valid(s); }

// The reference: utf8_decode, one sequence at a time, to the end.
bool decodes_to_end(const uint8_t* data, size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    while (!rest.empty()) {
        uint32_t cp = 0;
        const size_t length = utf8_decode(rest, cp);
        if (length == 0) return false;
        rest.remove_prefix(length);
    }
    return true;
}

std::string long_text(const std::string& inner, size_t at) { return std::string(at, 'a') + inner + std::string(70, 'b'); }

// utf8_valid and the reference agree on `bytes` placed at `at` in a text long enough for the
// vector pass; returns the verdict.
bool agreed_verdict(const std::vector<uint8_t>& bytes, size_t at) {
    std::vector<uint8_t> text(at, 'x');
    text.insert(text.end(), bytes.begin(), bytes.end());
    text.resize(text.size() + 40, 'y');
    const bool verdict = utf8_valid(text.data(), text.size());
    REQUIRE(verdict == decodes_to_end(text.data(), text.size()));
    return verdict;
}

}  // namespace

TEST_CASE("utf8_valid follows the table of well-formed byte sequences at every block position", "[text][utf8]") {
    const std::pair<std::string, bool> cases[] = {
        {"h\xC3\xA9llo", true},         {"\xE2\x96\x81the", true},     {"\xF0\x9F\x98\x80", true}, {"\xF4\x8F\xBF\xBF", true},
        {"\xED\x9F\xBF", true},         {"\xEE\x80\x80", true},        {"\xC2\x80", true},         {"\xDF\xBF", true},
        {"\xC0\x80", false},            {"\xC1\xBF", false},           {"\xE0\x9F\xBF", false},    {"\xED\xA0\x80", false},
        {"\xF0\x8F\xBF\xBF", false},    {"\xF4\x90\x80\x80", false},   {"\xF5\x80\x80\x80", false}, {"\xFF", false},
        {"\x80", false},                {"\xC3", false},               {"\xE2\x96", false},        {"\xF0\x9F\x98", false},
        {"\xE2\x96\x81\x81", false},    {"\xC3\xA9\xA9", false},       {"\xC3" "a", false},       {"\xE2\x96" "a", false},
    };
    for (const auto& [text, expected] : cases) {
        CHECK(valid(text) == expected);  // short: the automaton alone
        for (size_t at = 0; at < 70; ++at) {
            INFO("at " << at);
            CHECK(valid(long_text(text, at)) == expected);
            CHECK(decodes_to_end(reinterpret_cast<const uint8_t*>(long_text(text, at).data()), long_text(text, at).size()) == expected);
        }
    }
}

TEST_CASE("utf8_valid rejects a sequence left open at the very end of a long text", "[text][utf8]") {
    for (size_t length = 64; length < 130; ++length) {
        INFO("length " << length);
        CHECK_FALSE(valid(std::string(length - 1, 'a') + "\xC3"));
        CHECK_FALSE(valid(std::string(length - 2, 'a') + "\xE2\x96"));
        CHECK_FALSE(valid(std::string(length - 3, 'a') + "\xF0\x9F\x98"));
        CHECK(valid(std::string(length - 3, 'a') + "\xE2\x96\x81"));
    }
}

TEST_CASE("utf8_valid agrees with utf8_decode on every pair and on 4-byte runs of edge bytes", "[text][utf8]") {
    for (size_t at : {0, 29, 30, 31, 32, 33, 61, 62, 63, 64}) {
        size_t accepted = 0;
        for (unsigned a = 0; a < 256; ++a)
            for (unsigned b = 0; b < 256; ++b) accepted += agreed_verdict({uint8_t(a), uint8_t(b)}, at);
        // 128 × 128 pairs of ASCII and 30 × 64 two-byte sequences (leads C2..DF, continuations 80..BF)
        CHECK(accepted == 128 * 128 + 30 * 64);
    }
    const uint8_t edges[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                             0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    for (size_t at : {0, 30, 31, 61, 62}) {
        size_t accepted = 0;
        for (uint8_t a : edges)
            for (uint8_t b : edges)
                for (uint8_t c : edges)
                    for (uint8_t d : edges) accepted += agreed_verdict({a, b, c, d}, at);
        CHECK(accepted == 1672);  // as Python's strict UTF-8 decoder counts them
    }
}

TEST_CASE("utf8_valid agrees with utf8_decode on random mixed text", "[text][utf8]") {
    std::mt19937 rng(35);
    const std::string pieces[] = {"a", " ", "\xC3\xA9", "\xE2\x96\x81", "\xF0\x9F\x98\x80", "\xED\x9F\xBF", "\xF4\x8F\xBF\xBF"};
    const uint8_t breakers[] = {0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
    for (int round = 0; round < 4000; ++round) {
        std::string text;
        const size_t n = rng() % 120;
        for (size_t i = 0; i < n; ++i) text += pieces[rng() % std::size(pieces)];
        const bool intact = rng() % 2 == 0;
        if (!intact && !text.empty()) text[rng() % text.size()] = static_cast<char>(breakers[rng() % std::size(breakers)]);
        const auto* p = reinterpret_cast<const uint8_t*>(text.data());
        REQUIRE(utf8_valid(p, text.size()) == decodes_to_end(p, text.size()));
        if (intact) CHECK(utf8_valid(p, text.size()));
    }
}

TEST_CASE("utf8_first_invalid names the first byte utf8_decode refuses, past ASCII runs and valid sequences", "[text][utf8]") {
    CHECK(utf8_first_invalid("") == 0);
    CHECK(utf8_first_invalid("plain ASCII text longer than eight bytes") == 40);
    CHECK(utf8_first_invalid("caf\xC3\xA9 \xE6\xBC\xA2 \xF0\x9F\x9A\x80") == 14);
    // An overlong, a surrogate, a cut sequence: each at its first byte, after ASCII runs.
    CHECK(utf8_first_invalid("0123456789abcdef\xC0\x80") == 16);
    CHECK(utf8_first_invalid("0123456789\xED\xA0\x80tail") == 10);
    CHECK(utf8_first_invalid("\xC3\xA9\xE6\xBC") == 2);
    CHECK(utf8_first_invalid(std::string_view("ab\0cd\xFF", 6)) == 5);
}
