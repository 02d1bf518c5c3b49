#!/usr/bin/env bash
# The framework stage: tests against the real verl, TRL, Ray, wandb, pandas/pyarrow and
# Math-Verify, pinned in python/requirements-frameworks.txt and installed from the Python package
# index into a virtual environment of their own (.venv-frameworks, or $CONSENSUS_LENS_FRAMEWORKS_VENV),
# so the core `npm test` never needs them. Run after `npm run build` (the tests use dist/).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${CONSENSUS_LENS_FRAMEWORKS_VENV:-.venv-frameworks}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
start=$(date +%s)
"$VENV/bin/pip" install -q --disable-pip-version-check -r python/requirements-frameworks.txt
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -e python
echo "test-frameworks: packages ready in $(( $(date +%s) - start )) s ($(du -sh "$VENV" | cut -f1) in $VENV)"
[ -f dist/cli.js ] || npm run build
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests_frameworks "$@"
