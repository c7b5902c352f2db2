#!/usr/bin/env bash
# configure.sh BUILD_DIR [CMAKE_ARGS...]
# Installs what is missing (setup.sh) and configures a ModelLens build directory against it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$1"; shift
deps="$(bash "$root/third_party/setup.sh")"
prefix="$(sed -n 's/^MLENS_DEPS_PREFIX=//p' <<<"$deps")"
source_dir="$(sed -n 's/^MLENS_LLAMA_SOURCE=//p' <<<"$deps")"
cmake -S "$root" -B "$build" -DMLENS_DEPS_PREFIX="$prefix" -DMLENS_LLAMA_SOURCE="$source_dir" "$@" >/dev/null
