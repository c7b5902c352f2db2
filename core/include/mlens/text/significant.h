// Probabilities, divergences and scores as people read them: a fixed number of significant
// digits, whatever the magnitude, so 0.00012 does not print as 0.0001 next to 0.0003.
//
// Contract: significant(v, digits) (digits 1..17, default 3) gives
//  - "0" for zero, "nan", "inf", "-inf" for those values;
//  - for 0.001 <= |v| < 10^digits, plain decimal notation rounded to `digits` significant digits
//    with trailing zeros dropped: 0.87312 -> "0.873", 0.05 -> "0.05", 0.99996 -> "1", 123.4 -> "123";
//  - otherwise scientific notation with one digit fewer (the exponent carries the magnitude):
//    0.000123 -> "1.2e-04", 4.2e-9 -> "4.2e-09", 1234.5 -> "1.2e+03".
#pragma once

#include <string>

namespace mlens {

std::string significant(double v, int digits = 3);

}  // namespace mlens
