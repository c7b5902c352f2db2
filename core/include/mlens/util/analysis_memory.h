// The memory bound of every analysis (statistics, histograms, row and block-scale series,
// comparisons, requantization, whole-model error): what the working buffers of one analysis may
// hold, whatever size a tensor claims (a sparse 1 TiB file, a header claiming 100 GB).
//
// Contract: analyses read a tensor in chunks of element ranges that need not follow its rows, so
// a row of 2^37 values is never held whole. A thread's chunk buffers stay within about 16 MiB,
// and what an analysis keeps besides (series, a comparison's two sides read into memory,
// requantized rows kept between passes) within half the bound, so an analysis on up to 8 threads
// stays within kAnalysisMemoryBound. A source that can only be read in units larger than
// kMaxReadUnit values is refused with E_LIMIT instead of read. Series with one entry per row or
// per block keep at most kMaxSeriesEntries entries (row series pool consecutive rows, block-scale
// series sample every k-th block; their headers say how), and comparisons keep only their worst
// rows and blocks, never one entry per row.
#pragma once

#include <cstdint>

namespace mlens {

inline constexpr uint64_t kAnalysisMemoryBound = 256ull << 20;
inline constexpr uint64_t kMaxReadUnit = 1ull << 16;
inline constexpr uint64_t kMaxSeriesEntries = 1ull << 21;

}  // namespace mlens
