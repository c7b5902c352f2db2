#!/usr/bin/env bash
# Builds ModelLens (installing what is missing) and runs the whole test suite:
#  1. release build: unit and app tests (the window test runs under Xvfb);
#  2. AddressSanitizer + UndefinedBehaviorSanitizer build: the same unit tests;
#  3. a bounded libFuzzer run of each fuzz target (clang, ASan + UBSan; fails on any finding);
#  4. the benchmarks: parse and dequantization against ggml, dequantization also against
#     gguf-py, GUI frame times, store opening, generation against llama.cpp's own loop
#     (prints times and ratios; not a pass/fail test).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc)"

echo "== release build"
bash "$root/third_party/configure.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$jobs"
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
(cd "$root/build" && ctest --output-on-failure -j"$jobs") | tee -a "$summary"

echo "== sanitizer build (address, undefined)"
bash "$root/third_party/configure.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLENS_SANITIZE=ON -DMLENS_BUILD_GUI=OFF
cmake --build "$root/build-asan" -j"$jobs"
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs") | tee -a "$summary"

echo "== fuzzing (bounded; long runs: bash tests/fuzz/run.sh 3600)"
bash "$root/tests/fuzz/run.sh" 30 "$root/build-fuzz"

echo "== benchmark: GGUF header parse, ModelLens vs ggml"
"$root/build/tests/bench/gguf_parse_bench"
"$root/build/tests/bench/frame_bench"
"$root/build/tests/bench/store_bench"
echo "== benchmark: dequantization, ModelLens vs ggml vs gguf-py (numpy)"
decode_gguf="$(mktemp --suffix=.gguf)"
"$root/build/tests/bench/decode_bench" --keep "$decode_gguf"
llama_source="$(bash "$root/third_party/setup.sh" | sed -n 's/^MLENS_LLAMA_SOURCE=//p')"
/usr/bin/python3 "$root/tests/bench/gguf_py_decode.py" "$decode_gguf" "$llama_source"
rm -f "$decode_gguf" "$decode_gguf.tsv"
echo "== benchmark: opening remote GGUFs, ModelLens vs @huggingface/gguf (node), one loopback server"
hf_gguf="$(bash "$root/third_party/setup.sh" | sed -n 's/^MLENS_HF_GGUF=//p')"
"$root/build/tests/bench/remote_open_bench" "$hf_gguf" "$root/tests/bench/hf_gguf_open.mjs" "$root/build/assets/demo"
echo "== benchmark: fsck, ModelLens vs memcpy, ggml to_float and ggml_validate_row_data"
"$root/build/tests/bench/fsck_bench"
echo "== benchmark: generation through ModelLens (worker process) vs llama.cpp's own loop, idle and busy, and layer capture"
"$root/build/tests/bench/infer_bench" "$root/build/assets/demo/tiny-llama-f32.gguf" 64 5
echo "== benchmark: corpus KL divergence through ModelLens vs llama-perplexity"
"$root/build/tests/bench/kld_bench" "$root/build/assets/demo/tiny-llama-f32.gguf" "$root/build/assets/demo/tiny-llama-q4_0.gguf" 256 8 2 3

# One closing line over both ctest runs (each failed run has already stopped the script).
total=0
for n in $(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$summary"); do total=$((total + n)); done
echo "tests: $total passed, 0 failed"
