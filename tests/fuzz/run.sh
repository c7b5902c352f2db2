#!/usr/bin/env bash
# run.sh SECONDS_PER_TARGET [BUILD_DIR]
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for the given time on a
# seed corpus of our fixtures and the pinned llama.cpp's vocab GGUFs. Long runs: run.sh 3600.
# Exits non-zero if a target finds a crash; the reproducer is left in BUILD_DIR/crashes/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
build="${2:-$root/build-fuzz}"
CC=clang CXX=clang++ bash "$root/third_party/configure.sh" "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMLENS_BUILD_FUZZ=ON -DMLENS_BUILD_GUI=OFF
cmake --build "$build" -j"$(nproc)" --target gguf_reader_fuzz
source_dir="$(sed -n 's/^MLENS_LLAMA_SOURCE:PATH=//p' "$build/CMakeCache.txt")"
corpus="$build/corpus/gguf"
mkdir -p "$corpus" "$build/crashes"
# Seeds: the small upstream vocab files and the demo-sized fixtures the unit tests also use.
for f in "$source_dir"/models/ggml-vocab-bert-bge.gguf "$source_dir"/models/ggml-vocab-llama-spm.gguf; do
    cp -n "$f" "$corpus/" 2>/dev/null || true
done
printf 'GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' > "$corpus/empty-v3.gguf"
dict="$root/tests/fuzz/gguf.dict"
"$build/tests/fuzz/gguf_reader_fuzz" "$corpus" -dict="$dict" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -artifact_prefix="$build/crashes/" -print_final_stats=1 2>&1 | tail -n 12
