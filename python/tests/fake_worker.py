"""A stand-in for `consensus-lens serve --stdio` (docs/contract.md#command-line) used by the client tests.

Majority vote on the exact response text, binary rewards, GRPO advantages (docs/contract.md#grpo-view), gate 1.
Behaviour is steered by environment variables:
  FAKE_LOG     file that receives every request line (to check batching and stripping)
  FAKE_STATE   file holding a counter of requests across restarts
  FAKE_DIE_AT  comma-separated request numbers (1-based, counted across restarts) at which the
               worker exits without answering
  FAKE_MODE    ok | malformed | short | nan | error | wrong_group | noise | wrong_id | no_id
Every answer echoes the request's "id" (as serve does), except in the modes wrong_id and no_id.
"""
import json
import math
import os
import sys
from collections import Counter


def advantages(r):
    n = len(r)
    if n < 2:
        return [0.0] * n
    m = sum(r) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in r) / (n - 1))
    return [(x - m) / (sd + 1e-6) for x in r]


def count():
    path = os.environ.get("FAKE_STATE")
    if not path:
        return 0
    k = 0
    if os.path.exists(path):
        with open(path) as f:
            k = int(f.read() or 0)
    k += 1
    with open(path, "w") as f:
        f.write(str(k))
    return k


def answer(req, obj):
    mode = os.environ.get("FAKE_MODE", "ok")
    if isinstance(req, dict) and "id" in req and mode != "no_id":
        obj = dict(obj, id=req["id"] + "x" if mode == "wrong_id" else req["id"])
    return json.dumps(obj)


def main():
    mode = os.environ.get("FAKE_MODE", "ok")
    die_at = {int(x) for x in os.environ.get("FAKE_DIE_AT", "").split(",") if x}
    log = os.environ.get("FAKE_LOG")
    for line in sys.stdin:
        k = count()
        if log:
            with open(log, "a") as f:
                f.write(line if line.endswith("\n") else line + "\n")
        if k in die_at:
            if mode == "half":  # dies in the middle of its answer
                sys.stdout.write('{"results":[{"step"')
                sys.stdout.flush()
            os._exit(3)
        try:
            req = json.loads(line)
        except ValueError as e:
            print(json.dumps({"error": "bad JSON: %s" % e}), flush=True)
            continue
        if any(g.get("question_id") == "bad" for g in req.get("groups", [])):
            print(answer(req, {"error": "group bad refused"}), flush=True)
            continue
        if mode == "error":
            print(answer(req, {"error": "unknown operator %r" % req.get("operator")}), flush=True)
            continue
        if mode == "hang":
            import time
            time.sleep(60)
        if mode == "malformed":
            print("this is not json", flush=True)
            continue
        results = []
        for g in req["groups"]:
            texts = [r["response"] for r in g["rollouts"]]
            label, _ = Counter(texts).most_common(1)[0]
            rewards = [1.0 if t == label else 0.0 for t in texts]
            res = {"step": g["step"], "question_id": g["question_id"], "label": label,
                   "rewards": rewards, "gate": 1.0, "advantages": advantages(rewards)}
            if mode == "short":
                res["rewards"] = rewards[:-1]
            if mode == "nan":
                res["gate"] = None
            if mode == "wrong_group":
                res["question_id"] = "other"
            results.append(res)
        if mode == "noise":
            print("warming up...", flush=True)
        sys.stdout.write(answer(req, {"results": results}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
