#!/usr/bin/env bash
# Installs everything ModelLens needs to build, idempotently:
#  1. the Debian packages listed in third_party/debian-packages.txt that are missing (apt-get);
#  2. the pinned llama.cpp source (llama.cpp 0.5.0, shipped inside the npm package
#     node-llama-cpp@3.22.1 as package/llama/gitRelease.bundle), cloned into a cache directory
#     outside the source tree;
#  3. a static build of only ggml-base, ggml-cpu and llama from that source, installed into the
#     same cache so every build directory (release, sanitizers, fuzzing) shares it;
#  4. llama.cpp's llama-quantize and llama-imatrix from the same build (common and the two tools
#     on top of it), installed into <prefix>/bin for the recipe test; when they do not build, setup
#     goes on without them and that test is not registered.
# Prints nothing but progress; the cache prefix is written to stdout's last line as
#   MLENS_DEPS_PREFIX=<dir>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm_package="node-llama-cpp@3.22.1"
llama_version="0.5.0"
cache="${MLENS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/modellens}"
src="$cache/llama.cpp-$llama_version/src"
build="$cache/llama.cpp-$llama_version/build"
prefix="$cache/llama.cpp-$llama_version/install"

log() { printf '[setup] %s\n' "$*" >&2; }

install_debian_packages() {
    local missing=()
    while read -r pkg; do
        [[ -z "$pkg" || "$pkg" == \#* ]] && continue
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done < "$here/debian-packages.txt"
    command -v npm >/dev/null || missing+=(npm)
    if ((${#missing[@]})); then
        log "installing Debian packages: ${missing[*]}"
        local sudo=""
        [[ $(id -u) -ne 0 ]] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
    fi
}

fetch_llama_source() {
    [[ -f "$src/.mlens-complete" ]] && return
    log "fetching llama.cpp $llama_version from npm package $npm_package"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "$npm_package" >/dev/null)
    tar -xzf "$tmp"/node-llama-cpp-*.tgz -C "$tmp" package/llama/gitRelease.bundle
    rm -rf "$src"
    mkdir -p "$(dirname "$src")"
    git clone --quiet "$tmp/package/llama/gitRelease.bundle" "$src" 2>/dev/null
    rm -rf "$tmp"
    touch "$src/.mlens-complete"
}

build_llama() {
    [[ -f "$prefix/.mlens-complete" ]] && return
    log "building ggml-base, ggml-cpu and llama (static) from $src"
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF \
        -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON >/dev/null
    cmake --build "$build" -j"$(nproc)" --target ggml-base ggml-cpu ggml llama >/dev/null
    cmake --install "$build" >/dev/null
    touch "$prefix/.mlens-complete"
}

build_llama_quantize() {
    [[ -f "$prefix/.mlens-quantize-complete" ]] && return
    log "building llama-quantize and llama-imatrix from $src"
    if cmake -S "$src" -B "$build" -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON >/dev/null &&
       cmake --build "$build" -j"$(nproc)" --target llama-quantize llama-imatrix >/dev/null; then
        mkdir -p "$prefix/bin"
        cp "$build/bin/llama-quantize" "$build/bin/llama-imatrix" "$prefix/bin/"
        touch "$prefix/.mlens-quantize-complete"
    else
        log "llama-quantize did not build: the recipe test is left out"
    fi
}

install_debian_packages
fetch_llama_source
build_llama
build_llama_quantize
echo "MLENS_LLAMA_SOURCE=$src"
echo "MLENS_DEPS_PREFIX=$prefix"
