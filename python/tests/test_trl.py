import json
import os
import tempfile
import types
import unittest

from consensus_lens.reward import RewardWorker
from consensus_lens.trl import consensus_reward
from tests.helpers import FAKE_WORKER


class TrlTests(unittest.TestCase):
    def test_groups_by_prompt_logs_rollout_records_and_never_sends_truth(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        reqlog = os.path.join(tmp.name, "requests.jsonl")
        worker = RewardWorker(FAKE_WORKER, env={"FAKE_LOG": reqlog})
        self.addCleanup(worker.close)
        run = os.path.join(tmp.name, "run")
        fn = consensus_reward("majority", log_dir=run, worker=worker, rank=0)
        prompts = [[{"role": "user", "content": "1+1?"}]] * 3 + ["2+2?"] * 2
        completions = [[{"role": "assistant", "content": c}] for c in ("2", "2", "3")] + ["4", "5"]
        out = fn(prompts=prompts, completions=completions, ground_truth=["2", "2", "2", "4", "4"],
                 trainer_state=types.SimpleNamespace(global_step=7))
        self.assertEqual(out, [1.0, 1.0, 0.0, 1.0, 0.0])
        self.assertEqual(fn.__name__, "consensus_majority")
        fn.logger.close()
        with open(os.path.join(run, "step_000007.rank0.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        self.assertEqual(len(recs), 5)
        self.assertEqual([r["reward"] for r in recs], out)
        self.assertEqual(recs[0]["ground_truth"], "2")
        self.assertEqual(recs[0]["prompt"], "1+1?")
        self.assertEqual(len({r["question_id"] for r in recs}), 2)
        with open(reqlog) as f:
            raw = f.read()
        self.assertNotIn("ground_truth", raw)


if __name__ == "__main__":
    unittest.main()
