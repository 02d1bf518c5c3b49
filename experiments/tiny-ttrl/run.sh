#!/usr/bin/env bash
# The tiny test-time RL experiment, one command: pretrain a small decoder from scratch (cached under
# experiments/tiny-ttrl/out/), run TTRL with TRL's GRPOTrainer for each operator and seed, and write
# docs/experiments.md from the logs through the consensus-lens CLI.
#   bash experiments/tiny-ttrl/run.sh            # the full experiment
#   bash experiments/tiny-ttrl/run.sh --smoke    # a few steps with a tiny model (no tables)
# The framework packages (torch, transformers, TRL) come from the framework stage's venv, found as
# scripts/test-frameworks.sh finds it: $CONSENSUS_LENS_FRAMEWORKS_VENV, else .venv-frameworks.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${CONSENSUS_LENS_FRAMEWORKS_VENV:-.venv-frameworks}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "run.sh: no framework venv at $VENV: run scripts/test-frameworks.sh once (it installs python/requirements-frameworks.txt), or set CONSENSUS_LENS_FRAMEWORKS_VENV" >&2
  exit 2
fi
[ -f dist/cli.js ] || npm run build
# This checkout's package first on the path; the reward worker is this checkout's engine.
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export CONSENSUS_LENS_WORKER="${CONSENSUS_LENS_WORKER:-node $PWD/dist/cli.js}"
# One thread per library pool: the runs are deterministic for a given thread count.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-2}" TOKENIZERS_PARALLELISM=false
export PYTHONHASHSEED=0
exec "$VENV/bin/python" -u experiments/tiny-ttrl/experiment.py "$@"
