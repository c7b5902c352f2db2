// The x86 intrinsics for code that targets AVX-512 in functions of its own (target attributes),
// with GCC 12's uninitialized-value warnings turned off for the rest of the including file: its
// AVX-512 intrinsics start their results from _mm512_undefined_*(), which those warnings take for
// a read of an uninitialized variable. Internal to core; x86-64 with GCC only (includes nothing
// elsewhere).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
