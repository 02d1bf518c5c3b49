#!/usr/bin/env bash
# The README's test command: installs what the tests need (scripts/setup-tests.sh), then runs them
# (`npm test`: build, typecheck, lint, the unit, property, parity and CLI tests, then the Python tests).
# Run after `npm ci`. Arguments are passed to scripts/run-tests.mjs (test files to run alone).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
[ -d node_modules ] || npm ci
exec npm test -- "$@"
