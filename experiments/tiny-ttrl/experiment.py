"""The tiny test-time RL experiment, end to end: pretrain once (cached), then TTRL with each operator
and seed, then the tables. ``run.sh`` calls this with the framework venv's Python.

    python experiment.py [--smoke] [--out DIR] [--tables PATH] [--threads N]
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import lm  # noqa: E402

PRETRAIN = {
    "data_seed": 1, "n_test": 24, "n_val": 100, "seed": 0,
    "size": {"hidden": 64, "ffn": 256, "layers": 2, "heads": 4},
    "lr": 3e-3, "warmup": 50, "batch": 64, "max_steps": 1500, "check_every": 25, "min_steps": 100,
    "target_acc": 0.55, "max_new": 28,
}
TTRL = {"num_generations": 16, "questions_per_step": 4, "steps": 30, "eval_every": 6, "rl_lr": 1e-4}
FULL = {"pretrain": PRETRAIN, "ttrl": TTRL, "operators": ["majority", "cisc", "core"], "seeds": [1, 2]}

SMOKE = {
    "pretrain": dict(PRETRAIN, n_test=4, n_val=8, size={"hidden": 32, "ffn": 64, "layers": 1, "heads": 2},
                     max_steps=10, check_every=10, min_steps=10, target_acc=1.0, batch=32, warmup=5),
    "ttrl": {"num_generations": 16, "questions_per_step": 2, "steps": 2, "eval_every": 1, "rl_lr": 1e-4},
    "operators": ["majority", "core"], "seeds": [1],
}


def trl_version() -> str:
    import importlib.metadata as md

    return md.version("trl")


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:12]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="a few steps with a tiny model (the framework-stage test)")
    ap.add_argument("--out", default=None, help="output folder (default experiments/tiny-ttrl/out[/smoke])")
    ap.add_argument("--tables", default=None, help="write the tables here (default docs/experiments.md; none in smoke mode)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run (results depend on it: keep 1)")
    ap.add_argument("--jobs", type=int, default=3, help="runs at once, each in a process of its own")
    ap.add_argument("--one", nargs=3, metavar=("CKPT", "OPERATOR", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--no-tables", action="store_true")
    ap.add_argument("--example", default=None, help="copy the CoRE run of the first seed's log here (default "
                    "examples/tiny-ttrl-run in the full experiment; none in smoke mode)")
    ap.add_argument("--cache", default=os.path.join(HERE, "out"), help="where the pretrained checkpoints are cached")
    a = ap.parse_args(argv)
    cfg = SMOKE if a.smoke else FULL
    out = a.out or os.path.join(HERE, "out", "smoke" if a.smoke else "full")
    lm.setup_torch(a.threads)
    os.makedirs(out, exist_ok=True)
    if a.one:
        import ttrl

        ckpt, op, seed = a.one[0], a.one[1], int(a.one[2])
        with open(os.path.join(out, "run-config.json")) as f:
            rcfg = json.load(f)
        rdir = os.path.join(out, "runs", "%s-seed%d" % (op, seed))
        res = ttrl.run(ckpt, op, seed, rcfg, rdir, log=lambda m: print(m, flush=True))
        with open(os.path.join(rdir, "result.json"), "w") as f:
            json.dump(res, f, indent=1)
        return 0
    t0 = time.time()

    def log(msg: str) -> None:
        print("[%6.0f s] %s" % (time.time() - t0, msg), flush=True)

    # The pretrained checkpoint is cached by its configuration: every operator and seed (and every
    # later invocation) starts from the same weights.
    pcfg = cfg["pretrain"]
    ckpt = os.path.join(a.cache, "pretrained-" + digest([pcfg, a.threads]))
    if not os.path.exists(os.path.join(ckpt, "meta.json")):
        log("pretraining %s" % ckpt)
        meta = lm.pretrain(ckpt, pcfg, log=log)
    else:
        with open(os.path.join(ckpt, "meta.json")) as f:
            meta = json.load(f)
        log("pretrained checkpoint cached: %s (%d steps)" % (ckpt, meta["steps"]))

    rcfg = dict(cfg["ttrl"], data_seed=pcfg["data_seed"], n_test=pcfg["n_test"], n_val=pcfg["n_val"], max_new=pcfg["max_new"])
    manifest = {"pretrain": meta, "ttrl": rcfg, "checkpoint": os.path.relpath(ckpt, out), "threads": a.threads,
                "operators": cfg["operators"], "seeds": cfg["seeds"], "runs": [], "trl_version": trl_version()}
    todo = []
    for seed in cfg["seeds"]:
        for op in cfg["operators"]:
            name = "%s-seed%d" % (op, seed)
            manifest["runs"].append({"name": name, "operator": op, "seed": seed})
            rdir = os.path.join(out, "runs", name)
            key = digest([rcfg, meta["config"], meta["steps"], op, seed, a.threads])
            try:
                with open(os.path.join(rdir, "result.json")) as f:
                    if json.load(f).get("key") == key:
                        log("%s: done already" % name)
                        continue
            except (OSError, ValueError):
                pass
            todo.append((name, op, seed, rdir, key))
    with open(os.path.join(out, "run-config.json"), "w") as f:
        json.dump(rcfg, f)
    # Each run in a process of its own (one torch thread each): a run's numbers never depend on
    # which runs share the machine with it.
    running = []
    failed = []
    while todo or running:
        while todo and len(running) < a.jobs:
            name, op, seed, rdir, key = todo.pop(0)
            if os.path.exists(rdir):
                shutil.rmtree(rdir)
            os.makedirs(rdir)
            log("TTRL %s" % name)
            lf = open(os.path.join(rdir, "run.log"), "w")
            p = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), "--threads", str(a.threads),
                                  "--out", out, "--one", ckpt, op, str(seed)], stdout=lf, stderr=subprocess.STDOUT)
            running.append((p, name, rdir, key, lf))
        time.sleep(2)
        for r in list(running):
            p, name, rdir, key, lf = r
            if p.poll() is None:
                continue
            running.remove(r)
            lf.close()
            if p.returncode != 0:
                failed.append(name)
                log("%s FAILED (exit %d): see %s" % (name, p.returncode, os.path.join(rdir, "run.log")))
                continue
            with open(os.path.join(rdir, "result.json")) as f:
                res = json.load(f)
            res["key"] = key
            with open(os.path.join(rdir, "result.json"), "w") as f:
                json.dump(res, f, indent=1)
            log("%s done in %.0f s: greedy test acc %s" % (name, res["seconds"], [e["greedy_acc"] for e in res["evals"]]))
    if failed:
        log("failed runs: %s" % ", ".join(failed))
        return 1
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    log("runs done")
    example = a.example or (None if a.smoke else os.path.join(ROOT, "examples", "tiny-ttrl-run"))
    if example:
        src = os.path.join(out, "runs", "%s-seed%d" % ("core" if "core" in cfg["operators"] else cfg["operators"][0], cfg["seeds"][0]), "consensus")
        if os.path.exists(example):
            shutil.rmtree(example)
        shutil.copytree(src, example)
        log("example run copied to %s (%.1f MB)" % (example, sum(os.path.getsize(os.path.join(example, f)) for f in os.listdir(example)) / 1e6))
    if not a.no_tables and not a.smoke or a.tables:
        import tables

        path = a.tables or os.path.join(ROOT, "docs", "experiments.md")
        tables.write(out, path, log=log)
        log("tables written to %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
