#!/usr/bin/env bash
# Re-records tests/golden/records from a build: the stdout and exit status of every mlens command on
# the demo models (see golden.py for the list and for what is left out). usage: record.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
cmake --build "$build" --target mlens demo_models
python3 "$here/golden.py" "$build/app/cli/mlens" "$build/assets/demo" "$here/records" --record
