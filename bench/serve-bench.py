#!/usr/bin/env python3
"""Reward-worker benchmark: one training step scored through `consensus-lens serve --stdio` from
Python (consensus_lens.reward, JSON round trip included) against the numpy baseline
(bench/baseline.py, docs/contract.md#operators CoRE computed from raw text) on the same step.

Step: 32 groups x 64 roll-outs, ~2 KB of text each, with answers and mean log-probs (CoRE with
confidence). Target: worker round trip < 10% of the baseline's compute time, best of N against
best of N ("ratio_min"; "ratio" is median against median). Both sides must give the same
numbers (max_abs_diff_baseline).

Usage: python3 bench/serve-bench.py [--cli dist/cli.js] [--groups 32] [--rollouts 64] [--bytes 2048]
           [--operator core] [--repeat 5] [--jobs N] [--check]
Prints one JSON line. With --check, exits 1 when the target is missed or the numbers differ.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

from consensus_lens.records import group_record  # noqa: E402
from consensus_lens.reward import RewardWorker  # noqa: E402

WORDS = (
    "let we the of and so thus hence compute sum product equation solve for x y z n term series "
    "factor divide multiply add subtract square root integral derivative limit value answer check "
    "substitute simplify expand both sides equals therefore since because first second next then "
    "finally note that consider case prime number integer rational fraction denominator numerator "
    "angle triangle circle radius area perimeter probability expected count ways choose"
).split()


def make_text(rng, size, answer):
    parts = []
    n = 0
    while n < size - 40:
        if rng.random() < 0.15:
            w = "%d%s%d" % (rng.randint(0, 99), rng.choice("+-*/="), rng.randint(0, 99))
        else:
            w = rng.choice(WORDS)
        parts.append(w)
        n += len(w) + 1
    return " ".join(parts) + ". The answer is \\boxed{%s}." % answer


def make_step(groups, rollouts, size, seed=1):
    rng = random.Random(seed)
    out = []
    for g in range(groups):
        answers = [str(rng.choice([12, 12, 12, 13, 7, 100 + g])) for _ in range(rollouts)]
        spec = {
            "question_id": "bench/%03d" % g,
            "prompt": "Question %d" % g,
            "responses": [make_text(rng, size, a) for a in answers],
            "answers": answers,
            "mean_logprobs": [-rng.uniform(0.05, 0.9) for _ in range(rollouts)],
        }
        out.append(group_record(spec, 1))
    return out


def baseline_seconds(records, operator, repeat):
    script = os.path.join(HERE, "baseline.py")
    if not os.path.isfile(script):
        return None, "bench/baseline.py is missing (the numpy baseline, docs/contract.md#operators)"
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        path = f.name
    try:
        times = []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, script, path, "--operators", operator, "--time"],
                                 check=True, capture_output=True, text=True)
            times.append(json.loads(out.stdout.strip().splitlines()[-1])["compute_seconds"])
        times.sort()
        full = subprocess.run([sys.executable, script, path, "--operators", operator],
                              check=True, capture_output=True, text=True)
        ref = [json.loads(line) for line in full.stdout.splitlines() if line.strip()]
        return (statistics.median(times), times[0], ref), None
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(REPO, "dist", "cli.js"))
    ap.add_argument("--groups", type=int, default=32)
    ap.add_argument("--rollouts", type=int, default=64)
    ap.add_argument("--bytes", type=int, default=2048)
    ap.add_argument("--operator", default="core")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--chunk", type=int, default=4, help="groups per request line (client chunking)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if not os.path.isfile(a.cli):
        print(json.dumps({"bench": "serve", "error": "%s is missing: run npm run build" % a.cli}))
        return 1

    records = make_step(a.groups, a.rollouts, a.bytes)
    cmd = ["node", a.cli]
    extra = ["--jobs", str(a.jobs)] if a.jobs is not None else []

    class Worker(RewardWorker):
        @property
        def command(self):
            return cmd + ["serve", "--stdio"] + extra

    w = Worker(operator=a.operator, chunk_groups=a.chunk)
    try:
        for _ in range(2):  # start-up and JIT warm-up: a training run pays them once
            w.score(records)
        times = []
        results = None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            results = w.score(records)
            times.append(time.perf_counter() - t0)
    finally:
        w.close()
    worker_s = statistics.median(times)

    line = {
        "bench": "serve", "operator": a.operator, "groups": a.groups, "rollouts": a.rollouts,
        "text_bytes": a.bytes, "chunk_groups": a.chunk, "request_bytes": len(json.dumps({"groups": records})),
        "worker_seconds": round(worker_s, 4), "worker_min_seconds": round(min(times), 4),
    }
    base, why = baseline_seconds(records, a.operator, max(1, min(3, a.repeat)))
    ok = True
    if base is None:
        line["baseline_seconds"] = None
        line["note"] = why
        ok = False
    else:
        base_s, base_min, ref = base
        diff = 0.0
        labels_equal = True
        for res, r in zip(results, ref):
            b = r["results"][a.operator]
            labels_equal &= res["label"] == b["label"]
            for key in ("rewards", "advantages"):
                diff = max(diff, max(abs(x - y) for x, y in zip(res[key], b[key])))
            diff = max(diff, abs(res["gate"] - b["gate"]))
        ratio = worker_s / base_s
        ratio_min = min(times) / base_min
        line.update({
            "baseline_seconds": round(base_s, 4), "baseline_min_seconds": round(base_min, 4),
            "ratio": round(ratio, 4), "ratio_min": round(ratio_min, 4), "target_ratio": 0.1,
            # Best-of-N against best-of-N (as timeit does): the least disturbed by other load.
            "pass": ratio_min < 0.1, "labels_equal_baseline": labels_equal, "max_abs_diff_baseline": diff,
            "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
        })
        ok = ratio_min < 0.1 and labels_equal and diff < 1e-6
    print(json.dumps(line))
    return 0 if ok or not a.check else 1


if __name__ == "__main__":
    sys.exit(main())
