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
# pip's check of ~150 installed pins takes minutes on a busy machine: skip it when this exact
# requirements file was installed into this environment already.
stamp="$VENV/.consensus-lens-requirements.sha256"
want=$(sha256sum python/requirements-frameworks.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check -r python/requirements-frameworks.txt
  echo "$want" > "$stamp"
fi
# openrlhf pins deepspeed and flash-attn (a CUDA build): its reward-loading module is tested alone,
# installed without its dependencies (python/tests_frameworks/test_openrlhf_remote.py).
"$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('openrlhf') == '0.11.2'" 2>/dev/null \
  || "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps openrlhf==0.11.2
echo "test-frameworks: packages ready in $(( $(date +%s) - start )) s ($(du -sh "$VENV" | cut -f1) in $VENV)"
[ -f dist/cli.js ] || npm run build
# This checkout's package, first on the path (an environment shared by several checkouts may hold
# another one's editable install); subprocesses of the tests inherit it.
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests_frameworks "$@"
