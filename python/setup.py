"""Build hook of the consensus-lens wheel: the engine goes into the package.

The metadata is in pyproject.toml. This file only adds a build step: the wheel carries the engine,
the CLI bundles of the repository's dist/ (the same JavaScript the VS Code extension ships), in
consensus_lens/engine/, where consensus_lens.reward.packaged_engine() and the ``consensus-lens``
console script find them. Where they come from, in order:

1. consensus_lens/engine/ of the source being built (an sdist, or the staging copy an older
   scripts/build-wheel.sh made), used as it is;
2. the repository around python/ (``pip install ./python`` from a checkout): its dist/, built
   first with ``node scripts/build.mjs`` (after ``npm ci`` when node_modules is missing) when a
   file is missing or older than the sources;
3. otherwise the build fails: a wheel without its engine cannot score anything.

An editable install (``pip install -e python``) copies nothing: it runs the checkout's dist/cli.js.
"""

import atexit
import json
import os
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build import build as _build
from setuptools.command.build_py import build_py as _build_py
from setuptools.command.sdist import sdist as _sdist

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# The CLI entry and its bundle, the worker thread's entry and its bundle, mathjs (loaded lazily),
# the parquet parse thread (TRL runs) and the `report --html` page's script. Not the V8 code caches
# (made for the build's Node; the wheel's Node is another version and V8 rejects them) and not the
# source maps.
ENGINE_FILES = (
    "cli.js",
    "cli-main.js",
    "score-worker.js",
    "score-worker-main.js",
    "mathjs.js",
    "parquet-worker.js",
    "webview/report-page.js",
)
# What the bundles are made from: a dist/ older than any of these is rebuilt.
SOURCES = ("src", "webview", "package.json", "package-lock.json", "scripts/build.mjs", "scripts/build-wasm.mjs")


def _newest(path):
    if os.path.isfile(path):
        return os.path.getmtime(path)
    newest = 0.0
    for root, _dirs, files in os.walk(path):
        for f in files:
            newest = max(newest, os.path.getmtime(os.path.join(root, f)))
    return newest


def _is_checkout():
    try:
        with open(os.path.join(REPO, "package.json"), encoding="utf-8") as f:
            return json.load(f).get("name") == "consensus-lens" and os.path.isfile(os.path.join(REPO, "scripts", "build.mjs"))
    except (OSError, ValueError):
        return False


def _run(cmd, what):
    print("consensus-lens: %s (%s)" % (what, " ".join(cmd)), flush=True)
    r = subprocess.run(cmd, cwd=REPO)
    if r.returncode != 0:
        raise SystemExit("consensus-lens: %s failed (exit %d)" % (what, r.returncode))


def _checkout_engine():
    """The repository's dist/, built first when missing or stale; returns (folder, version)."""
    dist = os.path.join(REPO, "dist")
    paths = [os.path.join(dist, f) for f in ENGINE_FILES]
    sources = max(_newest(os.path.join(REPO, s)) for s in SOURCES if os.path.exists(os.path.join(REPO, s)))
    stale = [p for p in paths if not os.path.isfile(p) or os.path.getmtime(p) < sources]
    if stale:
        if shutil.which("node") is None:
            raise SystemExit(
                "consensus-lens: building the engine from this checkout needs Node.js >= 20 and npm on PATH "
                "(%s is missing or older than the sources)" % os.path.relpath(stale[0], REPO)
            )
        if not os.path.isfile(os.path.join(REPO, "node_modules", "esbuild", "package.json")):
            _run(["npm", "ci", "--no-audit", "--no-fund"], "installing the engine's build dependencies")
        _run(["node", "scripts/build.mjs"], "building the engine")
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            raise SystemExit("consensus-lens: the engine build did not write %s" % os.path.relpath(missing[0], REPO))
    with open(os.path.join(REPO, "package.json"), encoding="utf-8") as f:
        version = json.load(f)["version"]
    return dist, version


def engine_source():
    """(folder holding ENGINE_FILES, engine version or None when the folder has its VERSION)."""
    inside = os.path.join(HERE, "consensus_lens", "engine")
    if all(os.path.isfile(os.path.join(inside, f)) for f in ENGINE_FILES):
        return inside, None
    if _is_checkout():
        return _checkout_engine()
    raise SystemExit(
        "consensus-lens: no engine to put in the package: build from a checkout of the repository "
        "(pip install ./python) or install the published wheel (pip install consensus-lens)"
    )


def copy_engine(target):
    src, version = engine_source()
    if os.path.abspath(src) == os.path.abspath(target):
        return
    for f in ENGINE_FILES:
        os.makedirs(os.path.dirname(os.path.join(target, f)), exist_ok=True)
        shutil.copyfile(os.path.join(src, f), os.path.join(target, f))
    if version is None:
        shutil.copyfile(os.path.join(src, "VERSION"), os.path.join(target, "VERSION"))
    else:
        with open(os.path.join(target, "VERSION"), "w", encoding="utf-8") as out:
            out.write(version + "\n")


class build(_build):
    def initialize_options(self):
        super().initialize_options()
        # A fresh build folder each time, outside the checkout: setuptools' build/lib keeps files of
        # earlier builds (a module since removed would be packaged again).
        self.build_base = tempfile.mkdtemp(prefix="consensus-lens-build-")
        atexit.register(shutil.rmtree, self.build_base, True)


class build_py(_build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # runs the checkout's dist/cli.js (consensus_lens.reward.default_command)
        copy_engine(os.path.join(self.build_lib, "consensus_lens", "engine"))


class sdist(_sdist):
    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        # The source distribution carries the engine too, so a wheel built from it has one.
        copy_engine(os.path.join(base_dir, "consensus_lens", "engine"))


setup(cmdclass={"build": build, "build_py": build_py, "sdist": sdist})
