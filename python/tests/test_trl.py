import json
import os
import tempfile
import types
import unittest

from consensus_lens.reward import RewardWorker
from consensus_lens.trl import GroupError, consensus_reward, prompt_id
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
        with open(os.path.join(run, "step_000008.rank0.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        self.assertEqual(len(recs), 5)
        self.assertEqual([r["reward"] for r in recs], out)
        self.assertEqual(recs[0]["ground_truth"], "2")
        self.assertEqual(recs[0]["prompt"], "1+1?")
        self.assertEqual(len({r["question_id"] for r in recs}), 2)
        # global_step 7 is the number of finished updates: this batch trains step 8, as TRL's table names it
        self.assertEqual({r["step"] for r in recs}, {8})
        self.assertEqual(recs[3]["question_id"], prompt_id("2+2?"))
        with open(reqlog) as f:
            raw = f.read()
        self.assertNotIn("ground_truth", raw)

    def test_partial_groups_and_mixed_blocks_are_refused_naming_the_setting(self):
        worker = RewardWorker(FAKE_WORKER)
        self.addCleanup(worker.close)
        fn = consensus_reward("majority", worker=worker, num_generations=2)
        with self.assertRaisesRegex(GroupError, r"5 completions.*num_generations=2"):
            fn(prompts=["a", "a", "b", "b", "c"], completions=["1"] * 5)
        with self.assertRaisesRegex(GroupError, r"rows 0-1 .*row 1 has another prompt"):
            fn(prompts=["a", "b", "b", "a"], completions=["1"] * 4)
        self.assertEqual(worker.requests, 0)  # nothing was scored
        self.assertEqual(fn(prompts=["a", "a", "a", "a"], completions=["1", "2", "1", "1"]), [1.0, 0.0, 1.0, 1.0])

    def test_evaluation_is_rewarded_at_global_step_and_not_logged(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        worker = RewardWorker(FAKE_WORKER)
        self.addCleanup(worker.close)
        seen = {}

        class Trainer:  # what the reward function reads of GRPOTrainer, in evaluation
            num_generations = 8
            num_generations_eval = 2
            model = types.SimpleNamespace(training=False)

            def log_extra(self, column, values):
                seen[column] = values

        fn = consensus_reward("majority", log_dir=os.path.join(tmp.name, "run"), worker=worker, rank=0)
        out = fn(prompts=["q", "q"], completions=["1", "1"], trainer_state=types.SimpleNamespace(global_step=5),
                 log_extra=Trainer().log_extra)
        self.assertEqual(out, [1.0, 1.0])  # num_generations_eval = 2 is the group size here
        self.assertEqual(seen["cl_label"], ["1", "1"])
        self.assertIsNone(fn.logger)
        self.assertFalse(os.path.exists(os.path.join(tmp.name, "run", "step_000005.rank0.jsonl")))

    def test_split_group_is_gathered_across_processes(self):
        worker = RewardWorker(FAKE_WORKER)
        self.addCleanup(worker.close)
        # Two processes each hold half of one group of 4: the gather gives both halves to both.
        halves = {0: ["7", "7"], 1: ["8", "7"]}
        for rank in (0, 1):
            def gather(xs, rank=rank):
                if xs and isinstance(xs[0], int):
                    return [2, 2]
                return [{"prompt": "q", "completion": c, "qid": None, "lp": None, "truth": None} for c in halves[0] + halves[1]]

            fn = consensus_reward("majority", worker=worker, num_generations=4, gather=gather, rank=rank)
            out = fn(prompts=["q", "q"], completions=halves[rank])
            self.assertEqual(out, [1.0, 1.0] if rank == 0 else [0.0, 1.0])


if __name__ == "__main__":
    unittest.main()
