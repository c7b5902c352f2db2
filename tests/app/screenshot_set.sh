#!/usr/bin/env bash
# Regenerates the README's screenshot set: each view below at 1366x768 and 1920x1080, in the dark
# and the light theme, as OUT_DIR/VIEW-WxH-THEME.png, rendered by the real window under Xvfb.
#   tests/app/screenshot_set.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, assets/screenshots)
# Needs the targets modellens and gui_fixture_tool built, Xvfb, and the pinned llama.cpp
# source for its gemma-4 vocabulary (MLENS_LLAMA_SRC, default ~/.cache/modellens/llama.cpp-0.5.0/src).
# The pictures show paths: the demo files are copied to a folder that names no checkout
# (MLENS_SCREENSHOT_FILES, default /tmp/demo), the app runs from there, and every file made for
# a picture is made there too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${2:-$root/assets/screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
app=$build/app/gui/modellens
tool=$build/tests/app/gui_fixture_tool
built_demo=$build/assets/demo
vocab_file=${MLENS_LLAMA_SRC:-$HOME/.cache/modellens/llama.cpp-0.5.0/src}/models/ggml-vocab-gemma-4.gguf
for needed in "$app" "$tool" "$built_demo/tiny-llama-q4_0.gguf" "$vocab_file"; do
    [ -e "$needed" ] || { echo "screenshot_set: missing $needed" >&2; exit 1; }
done

demo=${MLENS_SCREENSHOT_FILES:-/tmp/demo}
rm -rf "$demo"
mkdir -p "$demo"
cp -a "$built_demo/." "$demo/"
cp "$vocab_file" "$demo/"
vocab=$demo/$(basename "$vocab_file")
cp "$root/tests/fixtures/imatrix/tiny-llama-f32.imatrix.gguf" "$demo/"
work=$demo/made
mkdir -p "$work"
cd "$demo"
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
export XDG_CONFIG_HOME=$config
# A file cut short (two thirds of the Q4_0 demo), and a tensor with two outlier columns.
cp "$demo/tiny-llama-q4_0.gguf" "$work/cut-q4_0.gguf"
truncate -s $(( $(stat -c %s "$work/cut-q4_0.gguf") * 2 / 3 )) "$work/cut-q4_0.gguf"
# The F32 demo cut inside its first tensor's data: every tensor cut, the first in part.
cp "$demo/tiny-llama-f32.gguf" "$work/cut-f32.gguf"
truncate -s 8000000 "$work/cut-f32.gguf"
"$tool" write-outliers "$work/outlier-columns.gguf"
# A text of about 2,300 tokens for the Corpus view (17 chunks of 128 tokens).
"$tool" write-corpus-text "$work/corpus.txt" 1800

# shot VIEW APP_ARGS...: the four pictures of one view.
shot() {
    local view=$1
    shift
    for size in 1366x768 1920x1080; do
        for theme in dark light; do
            local png=$out/$view-$size-$theme.png
            if ! timeout 600 "$root/tests/xvfb_session.sh" 2000x1200x24 \
                "$app" --screenshot "$png" --size "$size" --theme "$theme" --frames 6 "$@" > "$work/log" 2>&1; then
                echo "screenshot_set: $view $size $theme failed:" >&2
                cat "$work/log" >&2
                exit 1
            fi
            echo "$png"
        done
    done
}

shot metadata --panel metadata "$demo/tiny-llama-q4_0.gguf"
shot tensors --panel tensors --select blk.0.attn_q.weight "$demo/tiny-llama-q4_0.gguf"
shot tokenizer-gemma4 --panel tokenizer "$vocab"
shot weights-requant --select requant:blk.0.ffn_down.weight "$demo/tiny-llama-q4_0.gguf"
# The Q4_0 demo with its F32 twin open: the twin is picked as the reference and named.
shot weights-requant-reference --select requant:blk.0.attn_q.weight "$demo/tiny-llama-q4_0.gguf" "$demo/tiny-llama-f32.gguf"
shot weights-outliers --panel weights --select blk.0.ffn_down.weight "$work/outlier-columns.gguf"
shot model-error --select error:tiny-llama-f32.gguf "$demo/tiny-llama-q4_0.gguf" "$demo/tiny-llama-f32.gguf"
shot compat --panel compat "$demo/ollama-qwen25vl.gguf"
shot compat-export --panel compat --select compat:export "$demo/ollama-qwen25vl.gguf"
shot recipe --panel recipe "$demo/tiny-llama-q4_0.gguf"
shot diff --select diff-values:tiny-llama-f32.gguf "$demo/tiny-llama-q4_0.gguf" "$demo/tiny-llama-f32.gguf"
shot imatrix-statistics --select imatrix:statistics "$demo/tiny-llama-f32.imatrix.gguf"
shot diagnostics --panel diagnostics "$work/cut-q4_0.gguf"
# The Health scan of the cut file: the truncation summary, the cut tensors under it by name, the
# scan's counts in the status bar.
shot health-cut --panel health "$work/cut-f32.gguf"
shot loads --panel diagnostics "$demo/ollama-gemma3.gguf"
shot store-model --select tiny-moe:int4 "$demo/ollama-store"
shot store-export --select export:tiny-llama:q4_0 "$demo/ollama-store"
shot inference-ab --select infer:ab "$demo/tiny-llama-f32.gguf" "$demo/tiny-llama-q4_0.gguf"
shot inference-corpus --select "infer:corpus:$work/corpus.txt" "$demo/tiny-llama-f32.gguf" "$demo/tiny-llama-q4_0.gguf"
shot inference-divergence --select infer:divergence "$demo/tiny-llama-f32.gguf" "$demo/tiny-llama-q4_0.gguf"
shot inference-memory --select infer:memory "$demo/tiny-llama-q4_0.gguf"
shot inference-template --select "infer:template:$demo/ollama-store/tiny-llama:q4_0" --wait-documents 2 "$demo/ollama-qwen25vl.gguf" "$demo/ollama-store/tiny-llama:q4_0"
