// Count, mean and central moment sums M2..M4 of a set of finite values, in double (float
// sources) or long double (wide ones). Internal to core/quant.
#pragma once

#include <cstdint>

namespace mlens {

// Sets merge exactly (Pébay's pairwise update), so chunks can be summed in any order.
template <typename Real>
struct CentralMoments {
    uint64_t n = 0;
    Real mean = 0, m2 = 0, m3 = 0, m4 = 0;

    void merge(const CentralMoments& o) {
        if (o.n == 0) return;
        if (n == 0) {
            *this = o;
            return;
        }
        const Real na = static_cast<Real>(n), nb = static_cast<Real>(o.n), nt = na + nb;
        const Real d = o.mean - mean, d2 = d * d;
        const Real m4_new = m4 + o.m4 + d2 * d2 * na * nb * (na * na - na * nb + nb * nb) / (nt * nt * nt) +
            6 * d2 * (na * na * o.m2 + nb * nb * m2) / (nt * nt) + 4 * d * (na * o.m3 - nb * m3) / nt;
        const Real m3_new = m3 + o.m3 + d2 * d * na * nb * (na - nb) / (nt * nt) + 3 * d * (na * o.m2 - nb * m2) / nt;
        m2 += o.m2 + d2 * na * nb / nt;
        m3 = m3_new;
        m4 = m4_new;
        mean += d * nb / nt;
        n += o.n;
    }
};

}  // namespace mlens
