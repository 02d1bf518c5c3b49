#!/usr/bin/env bash
# Prepares the e2e machine: Chromium + ripgrep from Debian (when missing), the ripgrep cache
# tarball that @vscode/ripgrep looks for (so code-server installs without GitHub), then the
# e2e folder's own npm dependencies (code-server, playwright-core). Idempotent.
set -euo pipefail
cd "$(dirname "$0")"

export DEBIAN_FRONTEND=noninteractive
missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
# code-server builds the kerberos native module, which needs the GSS-API headers.
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v make >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 || missing+=(build-essential)
command -v python3 >/dev/null 2>&1 || missing+=(python3)   # node-gyp
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}"
fi

# @vscode/ripgrep first looks in $TMPDIR/vscode-ripgrep-cache-<ver>/<asset>; give it Debian's rg.
export TMPDIR="${TMPDIR:-/tmp}"
cache="$TMPDIR/vscode-ripgrep-cache-1.15.11"
asset="$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$asset" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d)"
  cp "$(command -v rg)" "$tmp/rg"
  tar -czf "$asset" -C "$tmp" rg
  rm -rf "$tmp"
fi

if [ -x node_modules/.bin/code-server ] && [ -d node_modules/playwright-core ]; then
  echo "e2e deps already installed"
  exit 0
fi
export npm_config_unsafe_perm=true npm_config_yes=true
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
