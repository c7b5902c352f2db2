// Numbers as people read them, one format per kind of number for every view (the command line
// tool's text and the app): each is computed by one function here.
//
// Contract:
//  - significant(v, digits) (digits 1..17, default 3): "0" for zero, "nan", "inf", "-inf"; for
//    0.001 <= |v| < 10^digits plain decimal notation rounded to `digits` significant digits with
//    trailing zeros dropped (0.87312 -> "0.873", 0.05 -> "0.05", 0.99996 -> "1", 123.4 -> "123");
//    otherwise scientific notation with one digit fewer (0.000123 -> "1.2e-04", 1234.5 -> "1.2e+03").
//  - table_number(v): a figure in a text table, significant(v, 4); --json keeps full precision.
//  - cosine_text(v): six decimals ("0.999993"), since the cosines that matter sit just under 1;
//    significant(v) when not finite.
//  - probability_text(p): a token probability, significant(p, 3) ("0.873", "1.2e-04").
//  - percent_text(fraction): a probability difference or share in percent,
//    significant(100 * fraction, 3) followed by "%" ("1.23%", "-0.05%").
//  - plus_minus(v, err): a measurement with the digits its uncertainty supports: err rounded to two
//    significant digits and v to the same decimal place, both plain decimals: (12.3456, 0.0789) ->
//    {"12.346", "0.079"}, (5012.3, 48.1) -> {"5012", "48"}, (0.5, 0.00012) -> {"0.50000",
//    "0.00012"}. An err that is zero, negative or not finite leaves v as significant(v, 6) and err
//    as significant(err). plus_minus_text joins them: "12.346 ± 0.079".
//  - mib_text(bytes): memory as llama.cpp prints it, bytes / 2^20 with two decimals, "12.34 MiB".
//  - human_bytes(bytes): a file or tensor size in decimal units, "1.2 GB", "512 B".
//  - human_count(n): a parameter or element count, "7.24 B", "125 M", "3.1 K", "512".
//  - bits_per_weight_text(bpw): bits per weight with two decimals, "4.50", "6.56", "16.00".
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace mlens {

std::string significant(double v, int digits = 3);
std::string table_number(double v);
std::string cosine_text(double v);
std::string probability_text(double p);
std::string percent_text(double fraction);
std::pair<std::string, std::string> plus_minus(double v, double err);
std::string plus_minus_text(double v, double err);
std::string mib_text(uint64_t bytes);
std::string human_bytes(uint64_t bytes);
std::string human_count(uint64_t count);
std::string bits_per_weight_text(double bpw);

}  // namespace mlens
