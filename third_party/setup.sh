#!/usr/bin/env bash
# Installs everything ModelLens needs to build, idempotently:
#  1. the Debian packages listed in third_party/debian-packages.txt that are missing (apt-get);
#  2. the pinned llama.cpp source (llama.cpp 0.5.0, shipped inside the npm package
#     node-llama-cpp@3.22.1 as package/llama/gitRelease.bundle), cloned into a cache directory
#     outside the source tree;
#  3. a static build of only ggml-base, ggml-cpu and llama from that source, installed into the
#     same cache so every build directory (release, sanitizers, fuzzing) shares it;
#  4. llama.cpp's own llama-perplexity, llama-quantize and llama-imatrix from the same build tree
#     (the same ggml objects, so the same kernels), installed into <prefix>/bin: the references the
#     corpus KL-divergence test and benchmark and the recipe test run against. A tool that does not
#     build is left out with a note, and its test is not registered;
#  5. llama.cpp's common library (its chat layer and Jinja engine, libllama-common.a and
#     libllama-common-base.a, with their headers in <prefix>/include/llama-common), which the
#     llama.cpp worker links to render chat templates as llama-server does, and llama.cpp's own
#     test-chat-template (installed as <prefix>/bin/llama-test-chat-template), which renders a
#     template through the same library calls: the reference of the template tests;
#  6. the npm packages @huggingface/gguf (the remote-open benchmark's reference) and tokenizers
#     (Hugging Face's tokenizers library as its Node binding: tokenizer-parity reads tokenizer.json
#     with it), each into its own folder of the cache.
# Prints nothing but progress; the cache prefix is written to stdout's last line as
#   MLENS_DEPS_PREFIX=<dir>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm_package="node-llama-cpp@3.22.1"
llama_version="0.5.0"
hf_gguf_version="0.4.6"
hf_tokenizers_version="0.23.2"
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

# Reuses the build tree of build_llama: only common and the missing tools are compiled. A lock
# keeps two setups started at once from configuring that tree together.
build_llama_tools() {
    local missing=()
    for tool in llama-perplexity llama-quantize llama-imatrix; do
        [[ -x "$prefix/bin/$tool" ]] || missing+=("$tool")
    done
    ((${#missing[@]})) || return 0
    log "building ${missing[*]} from $src"
    (
        flock 9
        if ! cmake -S "$src" -B "$build" -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON >/dev/null ||
           ! cmake --build "$build" -j2 --target "${missing[@]}" >/dev/null; then
            log "${missing[*]} did not build: the tests that run them are left out"
            exit 0
        fi
        mkdir -p "$prefix/bin"
        for tool in "${missing[@]}"; do
            cp "$build/bin/$tool" "$prefix/bin/$tool.tmp"
            mv "$prefix/bin/$tool.tmp" "$prefix/bin/$tool"
        done
    ) 9>"$cache/llama.cpp-$llama_version/.tools.lock"
}

# The chat layer is required (the worker links it); its reference program is not: a reference that
# does not build is left out with a note, and the tests that run it are not registered.
build_llama_chat() {
    local headers="$prefix/include/llama-common"
    if [[ ! -f "$prefix/lib/libllama-common.a" || ! -f "$prefix/lib/libllama-common-base.a" || ! -f "$headers/chat.h" ]]; then
        log "building llama.cpp's common library (chat templates) from $src"
        (
            flock 9
            cmake -S "$src" -B "$build" -DLLAMA_BUILD_COMMON=ON >/dev/null
            cmake --build "$build" -j2 --target llama-common llama-common-base >/dev/null
            rm -rf "$headers.tmp"
            mkdir -p "$prefix/lib" "$headers.tmp"
            (cd "$src/common" && find . \( -name '*.h' -o -name '*.hpp' \) -exec cp --parents {} "$headers.tmp" \;)
            rm -rf "$headers"
            mv "$headers.tmp" "$headers"
            for lib in libllama-common.a libllama-common-base.a; do
                cp "$(find "$build" -name "$lib" | head -n1)" "$prefix/lib/$lib.tmp"
                mv "$prefix/lib/$lib.tmp" "$prefix/lib/$lib"
            done
        ) 9>"$cache/llama.cpp-$llama_version/.tools.lock"
    fi
    [[ -x "$prefix/bin/llama-test-chat-template" ]] && return
    log "building llama.cpp's test-chat-template from $src"
    (
        flock 9
        if ! cmake -S "$src" -B "$build" -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TESTS=ON >/dev/null ||
           ! cmake --build "$build" -j2 --target test-chat-template >/dev/null; then
            log "test-chat-template did not build: the template reference tests are left out"
            exit 0
        fi
        mkdir -p "$prefix/bin"
        cp "$build/bin/test-chat-template" "$prefix/bin/llama-test-chat-template.tmp"
        mv "$prefix/bin/llama-test-chat-template.tmp" "$prefix/bin/llama-test-chat-template"
    ) 9>"$cache/llama.cpp-$llama_version/.tools.lock"
}

# @huggingface/gguf, the reference of the remote-open benchmark (tests/bench/remote_open_bench.cpp).
install_hf_gguf() {
    [[ -f "$cache/hf-gguf/.mlens-complete" ]] && return
    log "installing @huggingface/gguf@$hf_gguf_version from npm into $cache/hf-gguf"
    mkdir -p "$cache/hf-gguf"
    if npm install --silent --prefix "$cache/hf-gguf" "@huggingface/gguf@$hf_gguf_version" >/dev/null 2>&1; then
        touch "$cache/hf-gguf/.mlens-complete"
    else
        log "@huggingface/gguf did not install: the remote-open benchmark prints it as failed"
    fi
}

# Hugging Face's tokenizers (the Rust library, as its Node binding), which reads a tokenizer.json
# for `mlens tokenizer-parity` (app/tokenizer_json).
install_hf_tokenizers() {
    [[ -f "$cache/hf-tokenizers/.mlens-complete" ]] && return
    log "installing tokenizers@$hf_tokenizers_version from npm into $cache/hf-tokenizers"
    mkdir -p "$cache/hf-tokenizers"
    if npm install --silent --prefix "$cache/hf-tokenizers" "tokenizers@$hf_tokenizers_version" >/dev/null 2>&1; then
        touch "$cache/hf-tokenizers/.mlens-complete"
    else
        log "tokenizers did not install: tokenizer-parity cannot read tokenizer.json files, and its tests are left out"
    fi
}

install_debian_packages
install_hf_gguf
install_hf_tokenizers
fetch_llama_source
build_llama
build_llama_tools
build_llama_chat
echo "MLENS_LLAMA_SOURCE=$src"
echo "MLENS_DEPS_PREFIX=$prefix"
echo "MLENS_HF_GGUF=$cache/hf-gguf"
echo "MLENS_HF_TOKENIZERS=$cache/hf-tokenizers"
