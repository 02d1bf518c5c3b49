"""The label-free operators from Python (docs/contract.md#label-free-operators), through the real
reward worker (dist/cli.js): ``RewardWorker.score``, ``consensus_reward`` and ``compute_score`` take
``empo``, ``selfcertainty``, ``entropy``, ``likelihood`` and ``novelty`` like the other operators;
a confidence operator reads the logged ``self_certainty`` / ``entropy`` and refuses by name what
is missing."""
import math
import unittest

from consensus_lens.reward import RewardWorker, WorkerRequestError, compute_score
from consensus_lens.trl import consensus_reward
from tests.helpers import require_cli


def grpo(r, eps=1e-6):
    m = sum(r) / len(r)
    sd = math.sqrt(sum((x - m) ** 2 for x in r) / (len(r) - 1))
    return [(x - m) / (sd + eps) for x in r]


class LabelFreeTests(unittest.TestCase):
    def setUp(self):
        self.worker = RewardWorker(["node", require_cli()])
        self.addCleanup(self.worker.close)

    def group(self, answers, **fields):
        rollouts = []
        for i, a in enumerate(answers):
            r = {"response": "so \\boxed{%s}" % a}
            for k, v in fields.items():
                r[k] = v[i]
            rollouts.append(r)
        return {"question_id": "q", "rollouts": rollouts}

    def test_selfcertainty_rewards_the_logged_values(self):
        sc = [6.5, 5.25, 7.0]
        [res] = self.worker.score([self.group(["4", "4", "9"], self_certainty=sc)], "selfcertainty", step=1)
        self.assertEqual(res["rewards"], sc)
        for a, b in zip(res["advantages"], grpo(sc)):
            self.assertAlmostEqual(a, b, places=12)
        self.assertEqual(res["label"], "9")  # the most self-certain roll-out's answer

    def test_missing_self_certainty_is_refused_by_name(self):
        with self.assertRaises(WorkerRequestError) as e:
            self.worker.score([self.group(["4", "4"])], "selfcertainty", step=1)
        self.assertIn("no self_certainty", str(e.exception))

    def test_empo_entropy_and_likelihood(self):
        g = self.group(["4", "4", "4", "9"], entropy=[0.5, 1.0, 0.25, 2.0], mean_logprob=[-0.1, -0.2, -0.3, -0.4])
        [e] = self.worker.score([g], "empo", step=1)
        self.assertEqual(e["rewards"], [0.75, 0.75, 0.75, 0.25])
        [h] = self.worker.score([g], "entropy", step=1)
        self.assertEqual(h["rewards"], [-0.5, -1.0, -0.25, -2.0])
        [l] = self.worker.score([g], "likelihood", step=1)
        self.assertEqual(l["rewards"], [-0.1, -0.2, -0.3, -0.4])

    def test_consensus_reward_and_compute_score_take_the_new_names(self):
        fn = consensus_reward("empo", worker=self.worker, num_generations=4)
        self.assertEqual(fn.__name__, "consensus_empo")
        completions = ["\\boxed{2}", "\\boxed{2}", "\\boxed{2}", "\\boxed{3}"]
        self.assertEqual(fn(prompts=["1+1?"] * 4, completions=completions), [0.75, 0.75, 0.75, 0.25])
        out = compute_score(["d"] * 4, completions, None, [{"index": 0}] * 4, operator="novelty", command=["node", require_cli()])
        self.assertEqual(len(out), 4)
        self.assertTrue(all(0.5 <= x <= 1 for x in out[:3]) and out[3] == -0.5)


if __name__ == "__main__":
    unittest.main()
