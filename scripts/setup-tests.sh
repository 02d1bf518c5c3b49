#!/usr/bin/env bash
# Installs what the core tests need beyond `npm ci`, where it is missing, on Debian or Ubuntu:
#   - fish, zsh and dash (the training launcher's quoting is checked through the real shells),
#     Chromium (`report --html` is checked in a real browser; or set CHROMIUM_PATH): Debian packages;
#   - numpy, scipy and scikit-learn for the python3 first on PATH, whichever it is (Debian's, pyenv's,
#     a venv's): Debian's packages for Debian's own python3 (its pip is refused there, PEP 668),
#     else the pinned versions of scripts/requirements-tests.txt with that python3's pip.
# Debian packages need root (or sudo without a password). What cannot be installed is listed at
# the end: the tests that need it are then skipped with that reason (test/tools.ts), never failed.
#
#   bash scripts/setup-tests.sh          (the README's test command, scripts/test.sh, runs it first)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" = 0 ]; then SUDO=(); elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else SUDO=(none); fi
apt_updated=0
apt_install() { # PACKAGE...: true when installed
  command -v apt-get >/dev/null && [ "${SUDO[0]:-}" != none ] || return 1
  if [ "$apt_updated" = 0 ]; then "${SUDO[@]}" apt-get update -qq && apt_updated=1 || return 1; fi
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
not_installed=()

# Programs. The Debian package of each is named as the program.
missing=()
for p in fish zsh dash; do command -v "$p" >/dev/null || missing+=("$p"); done
if [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ] && [ ! -x /usr/bin/chromium-browser ]; then missing+=(chromium); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-tests: installing ${missing[*]} (Debian packages)"
  apt_install "${missing[@]}" || not_installed+=("${missing[@]}")
fi

# Python modules, for the python3 the tests run.
if ! command -v python3 >/dev/null; then
  echo "setup-tests: installing python3 (Debian package)"
  apt_install python3 python3-numpy python3-sklearn || not_installed+=(python3)
fi
if command -v python3 >/dev/null && ! python3 -c 'import numpy, scipy, sklearn' 2>/dev/null; then
  py=$(python3 -c 'import sys; print(sys.executable)')
  managed=$(python3 -c 'import sysconfig, os; print(int(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))')
  if [ "$managed" = 1 ] && [ "$(python3 -c 'import sys; print(sys.prefix)')" = /usr ]; then
    echo "setup-tests: installing numpy, scipy, scikit-learn for $py (Debian packages)"
    apt_install python3-numpy python3-scipy python3-sklearn || not_installed+=("numpy, scipy, scikit-learn for $py")
  else
    echo "setup-tests: installing numpy, scipy, scikit-learn for $py (pip, scripts/requirements-tests.txt)"
    python3 -m pip --version >/dev/null 2>&1 || python3 -m ensurepip -q >/dev/null 2>&1 || true
    python3 -m pip install -q --disable-pip-version-check -r scripts/requirements-tests.txt \
      || not_installed+=("numpy, scipy, scikit-learn for $py")
  fi
fi

if [ ${#not_installed[@]} -gt 0 ]; then
  echo "setup-tests: could not install: ${not_installed[*]} (Debian packages need root or sudo);" \
    "the tests that need them are skipped, each with its reason"
else
  echo "setup-tests: everything the tests need is installed"
fi
