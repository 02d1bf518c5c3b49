"""Consensus Lens on Ray against one machine, measured in the same run (docs/scale.md, BENCHMARKS.md).

    PYTHONPATH=python /work/venv-fw/bin/python bench/ray-pool.py [--steps 5] [--cpus 2]

1. A verl-sized step of 64 groups (64 roll-outs of ~2,000 characters each, CoRE with confidence,
   and majority) rewarded by one local reward worker (the baseline), by a RewardPool of 1 actor
   (its overhead per group) and of --cpus actors.
2. A κ × τ sweep of examples/demo-run: `consensus-lens sweep` on this machine (the baseline,
   both cores) against `python -m consensus_lens.ray sweep` on a local Ray of --cpus CPUs.
Medians over --steps repetitions; every result is checked equal to the baseline's.
"""
import argparse
import io
import json
import os
import random
import statistics
import string
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import ray  # noqa: E402

from consensus_lens import ray as clray  # noqa: E402
from consensus_lens.reward import RewardWorker  # noqa: E402

CLI = os.path.join(REPO, "dist", "cli.js")


def make_step(step, groups=64, n=64, size=2000, seed=11):
    rng = random.Random(seed * 1000 + step)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9))) for _ in range(400)]
    out = []
    for g in range(groups):
        answers = [str(rng.randint(1, 9)) for _ in range(3)]
        resp = []
        for _ in range(n):
            text = []
            while sum(len(w) + 1 for w in text) < size:
                text.append(rng.choice(words))
            resp.append(" ".join(text) + " so \\boxed{%s}." % rng.choice(answers))
        out.append({"question_id": "q%04d" % g, "responses": resp, "mean_logprobs": [-rng.random() for _ in range(n)]})
    return out


def timed(fn):
    t0 = time.perf_counter()
    v = fn()
    return time.perf_counter() - t0, v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--ops", default="core,majority")
    ap.add_argument("--chunk-groups", type=int, default=None)
    ap.add_argument("--max-in-flight", type=int, default=None)
    ap.add_argument("--no-sweep", action="store_true")
    args = ap.parse_args()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    steps = [make_step(s) for s in range(args.steps)]
    print("step: %d groups x %d roll-outs, %.1f MB of text" % (
        len(steps[0]), len(steps[0][0]["responses"]), sum(len(r) for g in steps[0] for r in g["responses"]) / 1e6))
    tuning = {k: v for k, v in (("chunk_groups", args.chunk_groups), ("max_in_flight", args.max_in_flight)) if v}
    for op in args.ops.split(","):
        single = RewardWorker(["node", CLI], operator=op)  # serve on both cores (its default)
        single.score(steps[0][:2], step=0)  # started and warm
        rows = {"single": [], 1: [], args.cpus: []}
        wants = []
        for s, groups in enumerate(steps, start=1):
            t, want = timed(lambda: single.score(groups, step=s))
            rows["single"].append(t)
            wants.append(want)
        single.close()
        for k in (1, args.cpus):  # one pool at a time: each actor takes a CPU
            # pool(1): one actor with every CPU, as the single worker (its overhead alone);
            # pool(K): K actors of one CPU each, as a cluster deploys them.
            with clray.RewardPool(num_actors=k, operator=op, actor_options={"num_cpus": args.cpus // k}, **tuning) as p:
                p.actor_pids()
                p.score(steps[0][:4], step=0)
                for s, groups in enumerate(steps, start=1):
                    t, got = timed(lambda: p.score(groups, step=s))
                    assert got == wants[s - 1], "pool of %d differs from the single worker" % k
                    rows[k].append(t)
        base = statistics.median(rows["single"])
        one = statistics.median(rows[1])
        many = statistics.median(rows[args.cpus])
        print("%-8s single worker %.3f s/step | pool(1) %.3f s (overhead %+.2f ms/group, x%.2f) | pool(%d) %.3f s (x%.2f of single)" % (
            op, base, one, 1000 * (one - base) / len(steps[0]), one / base, args.cpus, many, many / base))

    if args.no_sweep:
        return
    run = os.path.join(REPO, "examples", "demo-run")
    flags = ["--kappa", "0:1:0.05", "--tau", "0.05,0.1,0.25,0.5,1,2", "--operators", "core"]
    local, ray_ = [], []
    for _ in range(max(1, args.steps // 2)):
        t, want = timed(lambda: subprocess.run(["node", CLI, "sweep", run] + flags, capture_output=True, text=True, check=True).stdout)
        local.append(t)
        out, err = io.StringIO(), io.StringIO()
        t, code = timed(lambda: clray.main(["sweep", run] + flags + ["--shards", str(args.cpus), "--no-progress"], out, err))
        assert code == 0, err.getvalue()
        assert [json.loads(x)["groups"] for x in out.getvalue().splitlines()] == [json.loads(x)["groups"] for x in want.splitlines()]
        ray_.append(t)
    print("sweep of the demo run (126 settings x 36 groups): consensus-lens %.2f s | Ray, %d shards %.2f s (x%.2f)" % (
        statistics.median(local), args.cpus, statistics.median(ray_), statistics.median(ray_) / statistics.median(local)))
    ray.shutdown()


if __name__ == "__main__":
    main()
