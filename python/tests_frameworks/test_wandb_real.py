"""W&B tables written by the real wandb (offline mode): the committed fixtures are exactly what
scripts/make-wandb-fixtures.py writes with it, and consensus-lens reads them."""
import importlib.util
import json
import os
import subprocess

import wandb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FX = os.path.join(ROOT, "test", "fixtures", "logs", "writers")


def files(base):
    out = {}
    for name in ("wandb-trl", "wandb-verl"):
        for d, _, fs in os.walk(os.path.join(base, name)):
            for f in fs:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, base)] = fh.read()
    return out


def test_committed_wandb_fixtures_are_the_real_writers_output(tmp_path):
    assert wandb.__version__ == "0.31.0"
    spec = importlib.util.spec_from_file_location("make_wandb_fixtures", os.path.join(ROOT, "scripts", "make-wandb-fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.make(str(tmp_path))
    fresh, committed = files(str(tmp_path)), files(FX)
    assert sorted(fresh) == sorted(committed)
    assert all(fresh[k] == committed[k] for k in fresh)
    # wandb names a table file by its own history step, not the trainer's: the reader must (and
    # does) take the step from the table's step column
    names = sorted(os.path.basename(k) for k in fresh if "completions_" in k)
    assert [n.split("_")[1] for n in names] == ["0", "10"]
    out = subprocess.run(["node", os.path.join(ROOT, "dist", "cli.js"), "score", str(tmp_path / "wandb-trl"), "--operators", "majority"],
                         check=True, capture_output=True, text=True, timeout=120)
    groups = [json.loads(line) for line in out.stdout.splitlines()]
    assert [g["step"] for g in groups] == [1, 1, 1, 2, 2, 2]
    assert [g["n"] for g in groups] == [4] * 6
    # the rows of the table wandb wrote, in the groups' order
    with open([os.path.join(str(tmp_path), k) for k in fresh if "completions_0_" in k][0]) as f:
        table = json.load(f)
    assert {r[0] for r in table["data"]} == {"1"}
