#!/usr/bin/env bash
# run.sh SECONDS_PER_TARGET [BUILD_DIR]
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for the given time on a
# seed corpus: the pinned llama.cpp's small vocab GGUFs, and small safetensors files, tensor
# blobs, manifests and config blobs written here; the compat planner's seeds are small
# Ollama-made GGUFs written by compat_seeds; the imatrix reader's are llama-imatrix's files in
# tests/fixtures/imatrix. Long runs: run.sh 3600.
# Exits non-zero if a target finds a crash or an input that runs over 20 s; the reproducer is
# left in BUILD_DIR/crashes/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
build="${2:-$root/build-fuzz}"
targets=(gguf_reader_fuzz safetensors_reader_fuzz ollama_manifest_fuzz compat_plan_fuzz imatrix_reader_fuzz compat_seeds)
CC=clang CXX=clang++ bash "$root/third_party/configure.sh" "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMLENS_BUILD_FUZZ=ON -DMLENS_BUILD_GUI=OFF
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
source_dir="$(sed -n 's/^MLENS_LLAMA_SOURCE:PATH=//p' "$build/CMakeCache.txt")"
mkdir -p "$build/crashes" "$build/corpus/gguf" "$build/corpus/safetensors" "$build/corpus/manifest" "$build/corpus/compat" \
    "$build/corpus/imatrix"

# safetensors seed: 8-byte little-endian header length, the JSON header, then the data bytes.
write_safetensors() {  # FILE HEADER_JSON DATA_BYTES
    local n=${#2}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)))" > "$1"
    printf '%s' "$2" >> "$1"
    head -c "$3" /dev/urandom >> "$1"
}

for f in "$source_dir"/models/ggml-vocab-bert-bge.gguf "$source_dir"/models/ggml-vocab-llama-spm.gguf; do
    cp -n "$f" "$build/corpus/gguf/" 2>/dev/null || true
done
printf 'GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' > "$build/corpus/gguf/empty-v3.gguf"

st="$build/corpus/safetensors"
write_safetensors "$st/plain.safetensors" \
    '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]},"c":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[32,40]}}' 40
write_safetensors "$st/int4-blob.safetensors" \
    '{"__metadata__":{"quant_type":"int4","group_size":"32"},"w":{"dtype":"U32","shape":[2,4],"data_offsets":[0,32]},"w.scale":{"dtype":"F16","shape":[2,1],"data_offsets":[32,36]},"w.bias":{"dtype":"F16","shape":[2,1],"data_offsets":[36,40]}}' 40
write_safetensors "$st/nvfp4-experts.safetensors" \
    '{"__metadata__":{"quant_type":"nvfp4","group_size":"16"},"model.layers.0.mlp.experts.gate_proj.weight":{"dtype":"U32","shape":[2,2,2],"data_offsets":[0,32]},"model.layers.0.mlp.experts.gate_proj.weight.scale":{"dtype":"U8","shape":[2,2,1],"data_offsets":[32,36]},"model.layers.0.mlp.experts.gate_proj.weight.global_scale":{"dtype":"F32","shape":[1],"data_offsets":[36,40]}}' 40

mf="$build/corpus/manifest"
printf '%s' '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","size":485},"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789","size":1234,"from":"/x/y.gguf"},{"mediaType":"application/vnd.ollama.image.tensor","digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","size":40,"name":"model.layers.0.mlp.experts"},{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","size":12}]}' > "$mf/manifest.json"
printf '%s' '{"model_format":"gguf","model_family":"llama","model_families":["llama"],"model_type":"8B","file_type":"Q4_0","architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}' > "$mf/config.json"
printf '%s' 'registry.ollama.ai/library/llama3:8b' > "$mf/reference.txt"

run_target() {  # TARGET CORPUS [EXTRA_ARGS...]
    local target="$1" corpus="$2" log="$build/$1.log"; shift 2
    echo "-- $target"
    if ! "$build/tests/fuzz/$target" "$corpus" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=20 \
        -artifact_prefix="$build/crashes/$target-" -print_final_stats=1 "$@" > "$log" 2>&1; then
        tail -n 60 "$log"
        return 1
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)' "$log"
}
run_target gguf_reader_fuzz "$build/corpus/gguf" -dict="$root/tests/fuzz/gguf.dict"
run_target safetensors_reader_fuzz "$st"
run_target ollama_manifest_fuzz "$mf"
"$build/tests/fuzz/compat_seeds" "$build/corpus/compat"
cp -n "$build"/corpus/gguf/empty-v3.gguf "$build/corpus/compat/"
run_target compat_plan_fuzz "$build/corpus/compat" -dict="$root/tests/fuzz/gguf.dict"
cp -n "$root"/tests/fixtures/imatrix/*.imatrix.* "$build/corpus/imatrix/"
run_target imatrix_reader_fuzz "$build/corpus/imatrix" -dict="$root/tests/fuzz/gguf.dict"
