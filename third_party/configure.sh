#!/usr/bin/env bash
# configure.sh BUILD_DIR [CMAKE_ARGS...]
# Installs what is missing (setup.sh) and configures a ModelLens build directory against it.
# Compiles go through ccache (cache under ~/.cache/ccache), with paths taken relative to the
# source root, so every build directory and every fresh clone on this machine share one cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$1"; shift
deps="$(bash "$root/third_party/setup.sh")"
prefix="$(sed -n 's/^MLENS_DEPS_PREFIX=//p' <<<"$deps")"
source_dir="$(sed -n 's/^MLENS_LLAMA_SOURCE=//p' <<<"$deps")"
hf_tokenizers="$(sed -n 's/^MLENS_HF_TOKENIZERS=//p' <<<"$deps")"
launcher=()
if command -v ccache >/dev/null; then
    ccache_cmd="env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache"
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$ccache_cmd" -DCMAKE_CXX_COMPILER_LAUNCHER="$ccache_cmd")
fi
cmake -S "$root" -B "$build" -DMLENS_DEPS_PREFIX="$prefix" -DMLENS_LLAMA_SOURCE="$source_dir" -DMLENS_HF_TOKENIZERS="$hf_tokenizers" "${launcher[@]}" "$@" >/dev/null
