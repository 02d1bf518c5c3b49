"""Answers that once hung the reward worker (nested sums, products of literal matrices, sums of
big rational powers) are answered within the client's timeout, through the real worker
(dist/cli.js), and the worker keeps serving (docs/answers.md, "Size bounds")."""
import os
import shutil
import unittest

from consensus_lens.reward import RewardWorker
from tests.helpers import CLI

M = "\\begin{pmatrix}1&1\\\\1&0\\end{pmatrix}"
PRIMES = [3, 5, 7, 11, 13, 17, 19, 23]
HOSTILE = {
    "nested_sum3": "\\sum_{i=1}^{1000}\\sum_{j=1}^{1000}\\sum_{k=1}^{1000} (i+j+k)",
    "matrix_product": "\\prod_{k=1}^{40} " + M,
    "big_powers": "+".join("\\frac{1}{%d}^{5000}" % p for p in PRIMES),
}


class HostileAnswerTests(unittest.TestCase):
    def test_hostile_answers_are_scored_within_the_timeout(self):
        self.assertTrue(os.path.isfile(CLI), "run npm run build first (%s)" % CLI)
        # Before the bounds, one nested sum took minutes and gigabytes: 60 s is far above the
        # bounded cost, far below the hang.
        with RewardWorker([shutil.which("node") or "node", CLI], operator="majority", timeout=60.0) as w:
            for step in (1, 2):
                groups = [
                    {"question_id": name, "responses": ["\\boxed{%s}" % a, "\\boxed{%s}" % a, "\\boxed{12}", "\\boxed{12}", "\\boxed{\u202e12}"]}
                    for name, a in HOSTILE.items()
                ]
                res = w.score(groups, step=step)
                self.assertEqual([r["question_id"] for r in res], list(HOSTILE))
                for r in res:
                    self.assertEqual(r["label"], "12")
                    self.assertEqual(r["rewards"], [0.0, 0.0, 1.0, 1.0, 1.0])
            self.assertEqual(w.restarts, 0)


if __name__ == "__main__":
    unittest.main()
