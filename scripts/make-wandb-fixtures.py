#!/usr/bin/env python3
"""Writes the W&B fixtures (test/fixtures/logs/writers/wandb-trl, wandb-verl) with the real wandb
in offline mode, from the same seeded roll-outs as scripts/make-log-fixtures.py:

  wandb-trl/   TRL ≤ 0.27's completions table, logged as its `log()` does:
               wandb.log({"completions": wandb.Table(dataframe=df)}) with step (a string), prompt,
               completion, one column per reward function, advantage; the reward metrics
               train/rewards/<name>/mean in the run summary (wandb-summary.json).
  wandb-verl/  verl's ValidationGenerationsLogger (verl.utils.tracking, called here), whose table
               re-logs every earlier row plus the new one.

Kept from each run folder: files/media/table/**, as wandb wrote them (the binary .wandb stream and
the system files are left out; an offline run has no files/wandb-summary.json, its summary stays in
the .wandb stream until `wandb sync`), under the run folder names the tests use. Needs the framework stage's packages (wandb, pandas, verl):

    CONSENSUS_LENS_FRAMEWORKS_VENV=... ; $VENV/bin/python scripts/make-wandb-fixtures.py [OUT_DIR]
"""
import glob
import importlib.util
import os
import random
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "test", "fixtures", "logs", "writers")


def _fixtures():
    spec = importlib.util.spec_from_file_location("make_log_fixtures", os.path.join(HERE, "make-log-fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tmp, run_id, log):
    import wandb

    run = wandb.init(mode="offline", dir=tmp, id=run_id, project="consensus-lens-fixtures", settings=wandb.Settings(
        silent=True, x_disable_stats=True, x_disable_meta=True, console="off"))
    try:
        log(wandb)
    finally:
        run.finish()
    (folder,) = glob.glob(os.path.join(tmp, "wandb", "offline-run-*-%s" % run_id))
    return folder


def _keep(folder, dest):
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(os.path.join(dest, "files"))
    shutil.copytree(os.path.join(folder, "files", "media"), os.path.join(dest, "files", "media"))
    summary = os.path.join(folder, "files", "wandb-summary.json")
    if os.path.exists(summary):  # an offline run keeps its summary in the .wandb stream until `wandb sync`
        shutil.copy(summary, os.path.join(dest, "files", "wandb-summary.json"))


def make(out):
    import pandas as pd
    from verl.utils.tracking import ValidationGenerationsLogger

    fx = _fixtures()
    fx.rng.seed("wandb-20260101")
    rng, questions, response = fx.rng, fx.QUESTIONS, fx.response

    def answer_for(q, p):
        return q["truth"] if rng.random() < p else rng.choice(q["wrong"])

    def trl(wandb):
        for step in (1, 2):
            rows = []
            for q in questions[:3]:
                for i in range(4):
                    a = answer_for(q, 0.5)
                    rows.append({"step": str(step), "prompt": q["prompt"], "completion": response(q, a, i),
                                 "accuracy_reward": 1.0 if a == q["truth"] else 0.0, "format_reward": 0.5, "advantage": 0.0})
            wandb.log({"completions": wandb.Table(dataframe=pd.DataFrame(rows))}, step=step * 10)
        wandb.log({"train/rewards/accuracy_reward/mean": 0.5, "train/rewards/format_reward/mean": 0.5}, step=20)

    def verl(wandb):
        logger = ValidationGenerationsLogger()
        for step in (0, 5, 10):
            samples = []
            for q in questions[:3]:
                for i in range(2):
                    a = answer_for(q, 0.6)
                    samples.append((q["prompt"], response(q, a, i), 1.0 if a == q["truth"] else 0.0))
            samples.sort(key=lambda x: x[0])
            random.Random(42).shuffle(samples)
            logger.log(["wandb"], samples, step)

    with tempfile.TemporaryDirectory() as tmp:
        _keep(_run(os.path.join(tmp, "t"), "abc123", trl), os.path.join(out, "wandb-trl", "wandb", "offline-run-20250101_000000-abc123"))
        _keep(_run(os.path.join(tmp, "v"), "def456", verl), os.path.join(out, "wandb-verl", "wandb", "run-20250101_000000-def456"))


if __name__ == "__main__":
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT)
    os.environ.setdefault("WANDB_MODE", "offline")
    os.environ.setdefault("WANDB_SILENT", "true")
    make(out)
    print("wrote %s" % out)
