"""consensus_lens.verl on a verl-shaped batch without verl installed (numpy arrays in place of torch
tensors): the standard-library paths. The same code on verl 0.9.1's real DataProto, balance_batch and
compute_advantage is tested in python/tests_frameworks/test_verl_dataproto.py."""
import json
import os
import sys
import tempfile
import types
import unittest

import numpy as np

from consensus_lens import RunLogger
from consensus_lens.reward import RewardWorker
from consensus_lens.verl import ConsensusRewardManager, groups_from_batch, mean_logprobs
from tests.helpers import FAKE_WORKER

VOCAB = {1: "the", 2: "answer", 3: "is", 4: "\\boxed{7}", 5: "\\boxed{8}", 9: "Q?"}
PAD, EOS = 0, 99


class Tok:
    def decode(self, ids, skip_special_tokens=False):
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return " ".join(VOCAB[i] for i in ids if not (skip_special_tokens and i in (PAD, EOS)))


class Batch(dict):
    pass


class DataProto:
    def __init__(self, batch, non_tensor_batch, meta_info=None):
        self.batch = Batch(batch)
        self.non_tensor_batch = non_tensor_batch
        self.meta_info = meta_info or {}

    def __len__(self):
        return len(self.batch["responses"])


def verl_batch(with_logprobs=True):
    # Two prompts x 3 samples, rows shuffled as balance_batch leaves them.
    responses = np.array([
        [1, 2, 3, 4, EOS, PAD],   # uid a
        [1, 2, 3, 5, EOS, PAD],   # uid b
        [2, 3, 4, EOS, PAD, PAD], # uid a
        [1, 3, 5, EOS, PAD, PAD], # uid b
        [4, EOS, PAD, PAD, PAD, PAD],  # uid a
        [1, 2, 3, 4, 2, EOS],     # uid b
    ])
    mask = (responses != PAD).astype(np.int64)
    lp = np.where(mask == 1, -0.5, 0.0)
    lp[1, :5] = [-0.1, -0.2, -0.3, -0.4, -0.5]
    prompts = np.array([[PAD, 9]] * 6)
    batch = {"responses": responses, "response_mask": mask, "prompts": prompts,
             "attention_mask": np.concatenate([(prompts != PAD).astype(np.int64), mask], axis=1),
             "token_level_scores": np.zeros(responses.shape)}
    if with_logprobs:
        batch["rollout_log_probs"] = lp
    uid = np.array(["a", "b", "a", "b", "a", "b"], dtype=object)
    extra = np.array([{"index": 0 if u == "a" else 1, "split": "train"} for u in uid], dtype=object)
    rm = np.array([{"ground_truth": "7", "style": "rule"}] * 6, dtype=object)
    return DataProto(batch, {"uid": uid, "data_source": np.array(["math"] * 6, dtype=object),
                             "extra_info": extra, "reward_model": rm}, {"global_steps": 12})


class FakeTensor:
    def __init__(self, shape):
        self.rows = [[0.0] * shape[1] for _ in range(shape[0])]

    def __setitem__(self, ij, v):
        i, j = ij
        self.rows[i][j] = v


class VerlTests(unittest.TestCase):
    def test_groups_by_uid_with_mean_logprobs_over_the_mask(self):
        data = verl_batch()
        groups, rows = groups_from_batch(data, Tok(), step=12)
        self.assertEqual(rows, [[0, 2, 4], [1, 3, 5]])
        a, b = groups
        self.assertEqual((a["question_id"], b["question_id"]), ("math/0", "math/1"))
        self.assertEqual(a["responses"], ["the answer is \\boxed{7}", "answer is \\boxed{7}", "\\boxed{7}"])
        self.assertAlmostEqual(b["mean_logprobs"][0], -0.3)  # 5 real tokens (EOS included), pads excluded
        self.assertEqual(a["mean_logprobs"], [-0.5, -0.5, -0.5])
        self.assertEqual(a["ground_truth"], "7")
        self.assertEqual(a["prompt"], "Q?")
        self.assertEqual(a["rewards"], [0.0, 0.0, 0.0])
        self.assertEqual(a["extra"], {"uid": "a"})

    def test_response_mask_from_attention_mask_and_no_logprobs(self):
        data = verl_batch(with_logprobs=False)
        del data.batch["response_mask"]
        self.assertIsNone(mean_logprobs(data))
        groups, _ = groups_from_batch(data, Tok(), step=1)
        self.assertNotIn("mean_logprobs", groups[0])
        self.assertEqual(groups[1]["responses"][2], "the answer is \\boxed{7} answer")
        with self.assertRaises(KeyError):
            mean_logprobs(data, "old_log_probs")

    def test_logger_accepts_the_groups(self):
        with tempfile.TemporaryDirectory() as d:
            groups, _ = groups_from_batch(verl_batch(), Tok(), step=12)
            with RunLogger(d) as log:
                log.log_step(12, groups)
            with open(os.path.join(d, "step_000012.jsonl")) as f:
                recs = [json.loads(line) for line in f]
            self.assertEqual([len(r["rollouts"]) for r in recs], [3, 3])
            self.assertAlmostEqual(recs[1]["rollouts"][0]["mean_logprob"], -0.3)

    def test_reward_manager_places_rewards_on_the_last_token(self):
        fake_torch = types.SimpleNamespace(float32="float32", zeros_like=lambda t, dtype=None: FakeTensor(t.shape))
        sys.modules["torch"] = fake_torch
        worker = RewardWorker(FAKE_WORKER)
        self.addCleanup(worker.close)
        self.addCleanup(sys.modules.pop, "torch", None)
        with tempfile.TemporaryDirectory() as d:
            mgr = ConsensusRewardManager(Tok(), 0, None, "data_source", operator="majority", worker=worker, log_dir=d)
            out = mgr(verl_batch(), return_dict=True)
            mgr.logger.close()
            with open(os.path.join(d, "step_000012.jsonl")) as f:
                logged = [json.loads(line) for line in f]
        rows = out["reward_tensor"].rows
        # The fake worker votes on exact text: uid a has three different texts -> the first wins.
        self.assertEqual(rows[0][4], 1.0)
        self.assertEqual(sum(map(sum, rows)), 2.0)
        self.assertEqual(out["reward_extra_info"]["cl_gate"], [1.0] * 6)
        self.assertEqual([r["reward"] for r in logged[0]["rollouts"]], [1.0, 0.0, 0.0])


if __name__ == "__main__":
    unittest.main()
