#!/usr/bin/env bash
# CI entry for the real-VS-Code e2e suite: installs Chromium, ripgrep and code-server (setup.sh),
# then builds + packages the extension and runs the suite (run.mjs). Run from anywhere:
#   bash test/e2e/ci.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/setup.sh"
cd "$here/../.."
[ -d node_modules ] || npm ci
node "$here/run.mjs" "$@"
