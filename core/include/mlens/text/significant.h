// Probabilities, divergences and scores as people read them: a fixed number of significant
// digits, whatever the magnitude, so 0.00012 does not print as 0.0001 next to 0.0003.
//
// Contract: significant(v, digits) (digits 1..17, default 3) gives
//  - "0" for zero, "nan", "inf", "-inf" for those values;
//  - for 0.001 <= |v| < 10^digits, plain decimal notation rounded to `digits` significant digits
//    with trailing zeros dropped: 0.87312 -> "0.873", 0.05 -> "0.05", 0.99996 -> "1", 123.4 -> "123";
//  - otherwise scientific notation with one digit fewer (the exponent carries the magnitude):
//    0.000123 -> "1.2e-04", 4.2e-9 -> "4.2e-09", 1234.5 -> "1.2e+03".
//
// A measurement with its uncertainty shows the digits the uncertainty supports:
// plus_minus(v, err) rounds err to two significant digits and v to the same decimal place,
// both in plain decimal notation: (12.3456, 0.0789) -> {"12.346", "0.079"}, (5012.3, 48.1) ->
// {"5012", "48"}, (0.5, 0.00012) -> {"0.50000", "0.00012"}. An err that is zero, negative or not
// finite leaves v as significant(v, 6) and err as significant(err).
// plus_minus_text joins them: "12.346 ± 0.079".
//
// percent_text(fraction) is the one format of a probability difference or share in percent, in
// every view: significant(100 * fraction, 3) followed by "%" ("1.23%", "-0.05%").
#pragma once

#include <string>
#include <utility>

namespace mlens {

std::string significant(double v, int digits = 3);
std::pair<std::string, std::string> plus_minus(double v, double err);
std::string plus_minus_text(double v, double err);
std::string percent_text(double fraction);

}  // namespace mlens
