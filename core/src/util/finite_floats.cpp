#include "util/finite_floats.h"

#include "util/vector_loop.h"

namespace mlens {

MLENS_VECTOR_LOOP bool all_finite(const float* v, uint64_t n) {
    uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
    for (uint64_t i = 0; i < n; ++i) bad |= !finite_bits(v[i]);
    return bad == 0;
}

}  // namespace mlens
