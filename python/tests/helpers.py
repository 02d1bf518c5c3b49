import json
import os
import random
import string
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
REPO = os.path.dirname(PYROOT)
FAKE_WORKER = [sys.executable, os.path.join(HERE, "fake_worker.py")]
# CONSENSUS_LENS_CLI points the tests at another build of the CLI (development only).
CLI = os.environ.get("CONSENSUS_LENS_CLI") or os.path.join(REPO, "dist", "cli.js")


def read_lines(path):
    """(complete JSON records, trailing fragment) of a JSONL file."""
    with open(path, "rb") as f:
        data = f.read()
    *complete, tail = data.split(b"\n")
    return [json.loads(line) for line in complete], tail


def text(rng, size):
    alphabet = string.ascii_letters + string.digits + "     +-=()"
    return "".join(rng.choice(alphabet) for _ in range(size))


def make_groups(step, n_groups, n, size=200, seed=0, answers=("12", "13", "7")):
    rng = random.Random(seed * 7919 + step)
    groups = []
    for g in range(n_groups):
        responses = []
        for i in range(n):
            a = rng.choice(answers)
            responses.append(text(rng, size) + " so the answer is \\boxed{%s}." % a)
        groups.append({
            "question_id": "q%03d" % g,
            "prompt": "Question %d?" % g,
            "responses": responses,
            "mean_logprobs": [-rng.random() for _ in range(n)],
            "rewards": [0.0] * n,
            "ground_truth": "12",
        })
    return groups


def require_cli():
    if not os.path.isfile(CLI):
        raise AssertionError(
            "%s is missing: run `npm run build` before the Python tests (they use the real reward worker)" % CLI
        )
    return CLI
