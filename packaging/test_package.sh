#!/usr/bin/env bash
# test_package.sh BUILD_DIR XVFB_SESSION: builds the Debian package of BUILD_DIR with CPack,
# unpacks it into a temporary root (dpkg -x) and runs the installed programs from outside the
# source and build trees: mlens on an installed demo model (through the installed llama.cpp worker
# too), and modellens rendering its window to a PNG under Xvfb (XVFB_SESSION is
# tests/xvfb_session.sh). Also checks that the dependencies were computed and that no build-folder
# path is compiled into the installed programs.
set -euo pipefail
build="$(cd "$1" && pwd)"
xvfb_session="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$work/package" >/dev/null
deb="$(ls "$work"/package/modellens_*_*.deb)"
[[ "$(basename "$deb")" =~ ^modellens_[0-9.]+_[a-z0-9]+\.deb$ ]] || fail "package name $(basename "$deb")"
depends="$(dpkg-deb -f "$deb" Depends)"
echo "Depends: $depends"
for lib in libc6 libstdc++6 libglfw3 libfontconfig1; do
    [[ "$depends" == *"$lib "* || "$depends" == *"$lib," || "$depends" == *"$lib" ]] || fail "Depends lacks $lib"
done
dpkg -x "$deb" "$work/root"
root="$work/root/usr"
for program in "$root/bin/mlens" "$root/bin/modellens" "$root/libexec/modellens/mlens-llama-worker"; do
    if grep -qF "$build" "$program"; then fail "$program holds the build folder's path"; fi
done

cd "$work"
demo="$root/share/modellens/demo/tiny-llama-q4_0.gguf"
info="$("$root/bin/mlens" info "$demo")"
grep -qE "^format +GGUF v3$" <<<"$info" || fail "mlens info: $info"
grep -qE "^name +ModelLens tiny llama demo \(Q4_0\)$" <<<"$info" || fail "mlens info: $info"
tokens="$(env -u MLENS_LLAMA_WORKER "$root/bin/mlens" tokenize "$demo" hello)"
grep -q "2 tokens; detokenized: <s> hello" <<<"$tokens" || fail "mlens tokenize: $tokens"
"$root/bin/mlens" --version | head -1 | grep -q "^mlens [0-9.]* (git " || fail "mlens --version"
zcat "$root/share/man/man1/mlens.1.gz" | head -1 | grep -qx '.TH MLENS 1 "" "ModelLens [0-9.]*" "User Commands"' ||
    fail "mlens.1"

shot="$("$xvfb_session" 1280x1024x24 "$root/bin/modellens" --screenshot "$work/window.png" --size 1200x800)"
grep -qx "document ready front $root/share/modellens/demo/ollama-store" <<<"$shot" || fail "modellens: $shot"
grep -qx "document ready $demo" <<<"$shot" || fail "modellens: $shot"
[[ "$(head -c 8 "$work/window.png" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]] || fail "window.png is no PNG"
echo "package $(basename "$deb") installs and runs"
