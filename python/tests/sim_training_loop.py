"""A simulated training loop: samples groups, "trains", and logs every step with RunLogger.

Usage: python3 sim_training_loop.py RUN_DIR EXPECTED_JSON [--steps 5] [--groups 4] [--n 16] [--pause 0.2]
Writes the run into RUN_DIR (one file per step) while a reader may follow it, and the confidences
it logged to EXPECTED_JSON ({"step/question_id": [mean log-probs]}), outside the run folder.
Half of the groups hand over per-token log-probs (the logger reduces them to their mean), the
other half mean log-probs, as verl's and TRL's batches respectively make natural.
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from consensus_lens import RunLogger  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("expected")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--groups", type=int, default=4)
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--pause", type=float, default=0.2)
    a = ap.parse_args()
    rng = random.Random(42)
    expected = {}
    log = RunLogger(a.run_dir, run_id="sim", max_pending_steps=4)
    for step in range(1, a.steps + 1):
        groups = []
        for q in range(a.groups):
            answers = [rng.choice(["12", "12", "13", "7"]) for _ in range(a.n)]
            responses = ["step %d: we add %d and %d, so the answer is \\boxed{%s}" % (step, rng.randint(1, 9), rng.randint(1, 9), x)
                         for x in answers]
            g = {"question_id": "q%d" % q, "prompt": "Question %d" % q, "responses": responses,
                 "rewards": [1.0 if x == "12" else 0.0 for x in answers], "ground_truth": "12"}
            if q % 2 == 0:
                toks = [[-rng.uniform(0.0, 1.0) for _ in range(rng.randint(3, 12))] for _ in range(a.n)]
                g["token_logprobs"] = toks
                expected["%d/q%d" % (step, q)] = [sum(t) / len(t) for t in toks]
            else:
                means = [-rng.uniform(0.0, 1.0) for _ in range(a.n)]
                g["mean_logprobs"] = means
                expected["%d/q%d" % (step, q)] = means
            groups.append(g)
        if not log.log_step(step, groups):
            print("dropped step %d" % step, file=sys.stderr)
            return 1
        time.sleep(a.pause)  # the "training" between roll-outs
    stats = log.close()
    with open(a.expected, "w") as f:
        json.dump(expected, f)
    print(json.dumps(stats))
    return 0 if stats["steps_dropped"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
