#!/usr/bin/env bash
# Builds, checks and publishes a release: the VS Code extension (.vsix, to the Visual Studio
# Marketplace and Open VSX) and the Python wheel (to PyPI), with release notes from CHANGELOG.md.
#
#   bash scripts/release.sh [--dry-run] [--skip-tests] [--out DIR]
#
#   --dry-run     everything up to publishing: DIR (default dist/release) then holds the .vsix, the
#                 wheel and release-notes.md; nothing is uploaded and no token is needed
#   --skip-tests  with --dry-run only: do not run the tests (scripts/test.sh) first
#
# Publishing needs, from the environment: VSCE_PAT (Marketplace), OVSX_PAT (Open VSX) and
# PYPI_TOKEN (a PyPI API token). The version is package.json's; python/pyproject.toml and
# consensus_lens.__version__ must say the same, CHANGELOG.md must have a "## <version>" section
# (its notes; a dry run falls back to "## Unreleased"), and on CI a tag must be v<version>.
set -euo pipefail
cd "$(dirname "$0")/.."
DRY=0
TESTS=1
OUT=dist/release
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --skip-tests) TESTS=0 ;;
    --out) OUT="$2"; shift ;;
    --out=*) OUT="${1#--out=}" ;;
    *) echo "release: unknown argument $1 (usage: bash scripts/release.sh [--dry-run] [--skip-tests] [--out DIR])" >&2; exit 2 ;;
  esac
  shift
done
[ "$TESTS" = 1 ] || [ "$DRY" = 1 ] || { echo "release: --skip-tests is for a dry run only" >&2; exit 2; }
fail() { echo "release: $*" >&2; exit 1; }
step() { echo "release: $*"; }

# 1. One version everywhere.
VERSION=$(node -p 'require("./package.json").version')
PY_VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' python/pyproject.toml)
INIT_VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/consensus_lens/__init__.py)
[ "$PY_VERSION" = "$VERSION" ] || fail "python/pyproject.toml has version $PY_VERSION, package.json $VERSION"
[ "$INIT_VERSION" = "$VERSION" ] || fail "consensus_lens.__version__ is $INIT_VERSION, package.json $VERSION"
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [ "${GITHUB_REF_NAME:-}" != "v$VERSION" ]; then
  fail "the tag is ${GITHUB_REF_NAME}, the version v$VERSION"
fi
step "version $VERSION"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/consensus-lens-*.vsix "$OUT"/consensus_lens-*.whl "$OUT/release-notes.md"  # an earlier run's only

# 2. Release notes: the CHANGELOG section of this version (a dry run may use Unreleased).
notes() { # HEADING-REGEX: the section's lines, without its heading, up to the next "## "
  awk -v re="$1" 'found && /^## / { exit } found { print } $0 ~ re { found = 1 }' CHANGELOG.md
}
NOTES=$(notes "^## \\[?${VERSION//./\\.}\\]?( |$)")
if [ -z "$(echo "$NOTES" | tr -d '[:space:]')" ]; then
  [ "$DRY" = 1 ] || fail "CHANGELOG.md has no \"## $VERSION\" section: rename \"## Unreleased\" to \"## $VERSION — $(date -u +%F)\""
  echo "release: (dry run) CHANGELOG.md has no \"## $VERSION\" section: the notes are the Unreleased section's" >&2
  NOTES=$(notes '^## Unreleased')
fi
[ -n "$(echo "$NOTES" | tr -d '[:space:]')" ] || fail "CHANGELOG.md: no release notes found"
printf '# Consensus Lens %s\n%s\n' "$VERSION" "$NOTES" > "$OUT/release-notes.md"
step "notes: $OUT/release-notes.md ($(wc -l < "$OUT/release-notes.md") lines)"

# 3. The tests (the README's test command).
[ -d node_modules ] || npm ci
if [ "$TESTS" = 1 ]; then
  step "tests (bash scripts/test.sh)"
  bash scripts/test.sh
fi

# 4. The extension: a plain vsce package of the release build, checked.
step "extension (npm run package)"
npm run package >/dev/null
VSIX="$OUT/consensus-lens-$VERSION.vsix"
cp dist/consensus-lens.vsix "$VSIX"
LIST=$(unzip -Z1 "$VSIX")
grep -qx 'extension/package.json' <<<"$LIST" || fail "$VSIX has no package.json"
grep -qx 'extension/dist/extension.js' <<<"$LIST" || fail "$VSIX has no dist/extension.js"
! grep -qE '\.(map|cache)$|BENCHMARKS|screenshots/' <<<"$LIST" || fail "$VSIX carries files that do not run: $(grep -E '\.(map|cache)$|BENCHMARKS|screenshots/' <<<"$LIST" | head -3 | tr '\n' ' ')"
[ "$(unzip -p "$VSIX" extension/package.json | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).version')" = "$VERSION" ] || fail "$VSIX is not version $VERSION"
UNPACKED=$(mktemp -d)
trap 'rm -rf "$UNPACKED"' EXIT
unzip -q "$VSIX" -d "$UNPACKED"
[ "$(node "$UNPACKED/extension/dist/cli.js" --version)" = "consensus-lens $VERSION" ] || fail "the packaged CLI does not run"
step "  $VSIX ($(du -k "$VSIX" | cut -f1) KB)"

# 5. The wheel, with the engine inside, installed into a fresh venv and run.
step "wheel (scripts/build-wheel.sh)"
WHEEL=$(bash scripts/build-wheel.sh "$OUT")
python3 -m venv "$UNPACKED/venv"
"$UNPACKED/venv/bin/pip" install -q --disable-pip-version-check "$WHEEL"
[ "$(cd "$UNPACKED" && env -u PYTHONPATH "$UNPACKED/venv/bin/consensus-lens" --version)" = "consensus-lens $VERSION" ] || fail "the wheel's consensus-lens does not run"
(cd "$UNPACKED" && env -u PYTHONPATH "$UNPACKED/venv/bin/consensus-lens" path verl | grep -q "^$UNPACKED/venv/.*/consensus_lens/verl.py$") || fail "the wheel's consensus-lens path verl"
step "  $WHEEL ($(du -k "$WHEEL" | cut -f1) KB)"

if [ "$DRY" = 1 ]; then
  step "dry run: not published; in $OUT:"
  ls -1 "$OUT"
  exit 0
fi

# 6. Publish: the tokens from the environment, never on a command line that is echoed.
: "${VSCE_PAT:?release: VSCE_PAT (Visual Studio Marketplace token) is not set}"
: "${OVSX_PAT:?release: OVSX_PAT (Open VSX token) is not set}"
: "${PYPI_TOKEN:?release: PYPI_TOKEN (PyPI API token) is not set}"
step "publishing to the Visual Studio Marketplace"
VSCE_PAT="$VSCE_PAT" npx vsce publish --packagePath "$VSIX"
step "publishing to Open VSX"
OVSX_PAT="$OVSX_PAT" npx --yes ovsx@1.4.0 publish "$VSIX"
step "publishing to PyPI"
"$UNPACKED/venv/bin/pip" install -q --disable-pip-version-check twine==7.0.0
TWINE_USERNAME=__token__ TWINE_PASSWORD="$PYPI_TOKEN" "$UNPACKED/venv/bin/python" -m twine upload --non-interactive "$WHEEL"
step "published $VERSION; notes: $OUT/release-notes.md"
