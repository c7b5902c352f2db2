#!/usr/bin/env bash
# Builds ModelLens (installing what is missing) and launches the app on the bundled demo models.
# Extra arguments are passed to the app (files or folders to open instead of the demo models).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/third_party/configure.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$(nproc)" --target modellens mlens demo_models
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    echo "No display found: starting the app inside Xvfb (screenshots only make sense with --screenshot)." >&2
    exec xvfb-run -a -s "-screen 0 1600x1000x24" "$root/build/app/gui/modellens" "$@"
fi
exec "$root/build/app/gui/modellens" "$@"
