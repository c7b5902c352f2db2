// MLENS_VECTOR_LOOP marks a function whose loops the compiler should vectorize for the CPU the
// program runs on: on x86-64 with GCC it is compiled three times (AVX-512, AVX2 and the baseline)
// and the variant is chosen once, when the program loads. Files that use it with `omp simd`
// reductions are compiled with -fopenmp-simd (no OpenMP runtime; see core/CMakeLists.txt).
// Clang (the fuzzing build) gets the baseline only: it cannot multiversion function templates.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MLENS_VECTOR_LOOP __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define MLENS_VECTOR_LOOP
#endif
