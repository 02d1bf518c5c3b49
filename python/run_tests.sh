#!/usr/bin/env bash
# Runs the Python tests (standard library unittest). Tests that talk to the real reward worker
# use dist/cli.js: run `npm run build` first (they fail, not skip, when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m unittest discover -s python/tests -t python "$@"
