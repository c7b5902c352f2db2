// Whether core's hand-written vector paths may run: one switch over them all, so that the
// portable loops they stand in for can be run and compared on a CPU that would never take them.
// Internal to core.
//
// Contract: vector_paths_allowed() is false when the environment variable MLENS_PORTABLE_PATHS
// holds a value other than "" and "0" at its first call in the process (read once), else true.
// Every place in core that picks hand-written AVX-512, AVX2, GFNI or F16C code by the CPU's
// features (the block readers' ranges and unpacking, the statistics' counting and tallies, half
// to float, UTF-8 validation) asks it beside those features; the figures and findings are the
// same either way, only slower without. Loops that the compiler vectorizes for each CPU
// (vector_loop.h's target clones) are chosen when the program loads and do not ask. The tests run
// the statistics' and text tests once more with it set (tests/CMakeLists.txt).
#pragma once

namespace mlens {

bool vector_paths_allowed();

// Whether AVX-512 F, BW, DQ and VL paths may run: the CPU has them (and with them F16C and FMA)
// and vector_paths_allowed(). False off x86-64 with GCC.
bool avx512_paths_allowed();

}  // namespace mlens
