#!/usr/bin/env bash
# Builds ModelLens (installing what is missing) and runs the whole test suite:
#  1. release build: unit and app tests (the window test runs under Xvfb);
#  2. AddressSanitizer + UndefinedBehaviorSanitizer build: the same unit tests;
#  3. the parse benchmark against ggml (prints times and ratios; not a pass/fail test).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc)"

echo "== release build"
bash "$root/third_party/configure.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$jobs"
(cd "$root/build" && ctest --output-on-failure -j"$jobs")

echo "== sanitizer build (address, undefined)"
bash "$root/third_party/configure.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLENS_SANITIZE=ON -DMLENS_BUILD_GUI=OFF
cmake --build "$root/build-asan" -j"$jobs"
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs")

echo "== benchmark: GGUF header parse, ModelLens vs ggml"
"$root/build/tests/bench/gguf_parse_bench"
