"""Parity: the same groups scored through the reward worker from Python and through
`consensus-lens score` give identical numbers (docs/contract.md#command-line). Uses the built CLI (dist/cli.js)."""
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import unittest

from consensus_lens import RunLogger
from consensus_lens import reward as reward_mod
from consensus_lens.reward import RewardWorker, compute_score
from tests.helpers import require_cli

# Every operator the groups here can feed (selfcertainty needs logged self-certainty: test_label_free.py).
OPERATORS = ["majority", "cisc", "ec", "core", "t3rl", "msttrl", "empo", "entropy", "likelihood", "novelty"]
PARAMS = {"kappa": 0.3, "tau": 0.5, "alpha": 0.1, "omega": 3, "lambda": 0.5}
FLAGS = ["--kappa", "0.3", "--tau", "0.5", "--alpha", "0.1", "--omega", "3", "--lambda", "0.5"]
WORDS = "we compute the sum then divide both sides check value so answer is first note that".split()


def step_groups(step, rng, n_groups=6, n=24):
    groups = []
    for q in range(n_groups):
        pool = ["12", "12", "13", "\\frac{1}{2}", "0.5", "7", None]
        answers = [rng.choice(pool) for _ in range(n)]
        responses = []
        for a in answers:
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
            responses.append(body + (" so \\boxed{%s}" % a if a is not None else " I am not sure"))
        checks = [{"answer": "12", "passed": rng.randint(0, 4), "trials": 4},
                  {"answer": "13", "passed": rng.randint(0, 4), "trials": 4}]
        groups.append({
            "question_id": "q%d" % q, "prompt": "Question %d" % q, "responses": responses,
            "mean_logprobs": [-rng.uniform(0.01, 1.5) for _ in range(n)],
            "verifications": [rng.random() < 0.3 for _ in range(n)],
            "outcome_checks": checks, "ground_truth": "12",
        })
    return groups


class ParityTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cli = require_cli()
        cls.tmp = tempfile.mkdtemp(prefix="cl-parity-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        rng = random.Random(7)
        cls.steps = {s: step_groups(s, rng) for s in (1, 2, 3)}
        with RunLogger(cls.run_dir) as log:
            for s, gs in cls.steps.items():
                log.log_step(s, gs)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def worker(self):
        w = RewardWorker(["node", self.cli])
        self.addCleanup(w.close)
        return w

    def score_cli(self, op):
        out = subprocess.run(["node", self.cli, "score", self.run_dir, "--operators", op] + FLAGS,
                             check=True, capture_output=True, text=True)
        return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]

    def assert_same(self, served, scored, op):
        self.assertEqual(len(served), len(scored))
        for a, b in zip(served, scored):
            self.assertEqual((a["step"], a["question_id"]), (b["step"], b["question_id"]))
            r = b["results"][op]
            # Identical numbers: exact equality, not a tolerance.
            self.assertEqual([a["label"], a["rewards"], a["gate"], a["advantages"]],
                             [r["label"], r["rewards"], r["gate"], r["advantages"]],
                             "%s step %s %s" % (op, a["step"], a["question_id"]))

    def test_worker_equals_score_for_every_operator(self):
        for op in OPERATORS:
            with self.subTest(op=op):
                w = self.worker()  # a fresh worker per operator: MS-TTRL's cache starts empty, as in score
                served = []
                for s in sorted(self.steps):
                    served += w.score(self.steps[s], op, PARAMS, step=s)
                self.assert_same(served, self.score_cli(op), op)
                if op == "core":
                    self.assertTrue(all(r.get("confidence") == "used" for r in served))

    def test_restarted_worker_gives_the_same_numbers(self):
        w = self.worker()
        first = w.score(self.steps[1], "core", PARAMS, step=1)
        os.kill(w.pid, signal.SIGKILL)
        again = w.score(self.steps[1], "core", PARAMS, step=1)
        self.assertEqual(w.restarts, 1)
        self.assertEqual(first, again)

    def test_compute_score_on_a_shuffled_verl_batch(self):
        # verl's batch: one row per roll-out, rows of a question not contiguous (balance_batch).
        gs = self.steps[2]
        rows = [(q, i) for q in range(len(gs)) for i in range(len(gs[q]["responses"]))]
        random.Random(3).shuffle(rows)
        data_sources = ["math"] * len(rows)
        sols = [gs[q]["responses"][i] for q, i in rows]
        extras = [{"index": q, "split": "train"} for q, _ in rows]
        truths = ["12"] * len(rows)
        try:
            rewards = compute_score(data_sources, sols, truths, extras, operator="ec", params=PARAMS,
                                    command=["node", self.cli], step=2)
        finally:
            reward_mod._close_workers()
            reward_mod._workers.clear()
        # The same groups (roll-outs in batch order within each group), scored directly:
        w = self.worker()
        direct = {}
        for q in range(len(gs)):
            order = [i for qq, i in rows if qq == q]
            res = w.score([{"question_id": "math/%d" % q, "responses": [gs[q]["responses"][i] for i in order]}],
                          "ec", PARAMS, step=2)[0]
            for j, i in enumerate(order):
                direct[(q, i)] = res["rewards"][j]
        self.assertEqual(rewards, [direct[r] for r in rows])


if __name__ == "__main__":
    unittest.main()
