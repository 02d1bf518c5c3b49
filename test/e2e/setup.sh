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

if [ -x node_modules/.bin/code-server ] && [ -d node_modules/playwright-core ] && [ -x node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg ]; then
  echo "e2e deps already installed"
  exit 0
fi
export npm_config_unsafe_perm=true npm_config_yes=true
# npm 11 runs a dependency's install scripts only when package.json's allowScripts lists it (it
# warns, or with strict-allow-scripts fails, otherwise). code-server's postinstall is essential:
# it installs VS Code's own dependencies (ripgrep, the native modules) under lib/vscode; argon2
# is its native password hash. Both are listed in this folder's package.json.
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
# Check what the postinstall makes, so a skipped script fails here and not as a blank workbench.
vscode=node_modules/code-server/lib/vscode
for f in "$vscode/node_modules/@vscode/ripgrep/bin/rg" "$vscode/node_modules.asar" "$vscode/bin/remote-cli/code-server"; do
  if [ ! -e "$f" ]; then
    echo "e2e setup: $f is missing: code-server's postinstall did not run or failed (npm $(npm --version); see 'npm install-scripts ls' in test/e2e)" >&2
    exit 1
  fi
done
