import importlib.util
import json
import os
import tempfile
import threading
import unittest

from consensus_lens.openrlhf import GroupError, make_reward_func, prompt_id
from consensus_lens.reward import RewardWorker
from tests.helpers import FAKE_WORKER, PYROOT


def _records(run):
    out = []
    for name in sorted(os.listdir(run)):
        with open(os.path.join(run, name)) as f:
            out.extend((name, json.loads(line)) for line in f)
    return out


class OpenRlhfTests(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.reqlog = os.path.join(tmp.name, "requests.jsonl")
        self.worker = RewardWorker(FAKE_WORKER, env={"FAKE_LOG": self.reqlog})
        self.addCleanup(self.worker.close)

    def test_a_batch_of_whole_groups_is_scored_at_once_logged_and_the_labels_never_sent(self):
        run = os.path.join(self.tmp, "run")
        fn = make_reward_func("majority", worker=self.worker, log_dir=run, tensors=False)
        prompts = ["Q: 1+1?\n"] * 3 + ["Q: 2+2?\n"] * 2
        queries = [p + r for p, r in zip(prompts, ["2", "2", "3", "4", "5"])]
        out = fn(queries, prompts, ["2", "2", "2", "4", "4"])
        self.assertEqual(out["rewards"], [1.0, 1.0, 0.0, 1.0, 0.0])
        self.assertEqual(out["scores"], out["rewards"])
        self.assertEqual(out["extra_logs"]["cl_label_agrees"], [1.0, 1.0, 0.0, 1.0, 0.0])
        fn.close()
        recs = _records(run)
        self.assertEqual([r["question_id"] for _, r in recs], [prompt_id("Q: 1+1?\n"), prompt_id("Q: 2+2?\n")])
        self.assertEqual([r["rollouts"][i]["response"] for _, r in recs for i in range(len(r["rollouts"]))], ["2", "2", "3", "4", "5"])
        self.assertEqual([r["rollouts"][i]["reward"] for _, r in recs for i in range(len(r["rollouts"]))], out["rewards"])
        self.assertEqual(recs[0][1]["ground_truth"], "2")
        self.assertTrue(all(name == "openrlhf_step_000001.pid%d.jsonl" % os.getpid() for name, _ in recs))
        with open(self.reqlog) as f:
            self.assertNotIn("ground_truth", f.read())

    def test_samples_called_one_at_a_time_wait_for_their_group_and_get_the_group_reward(self):
        run = os.path.join(self.tmp, "run")
        fn = make_reward_func("majority", worker=self.worker, log_dir=run, n_samples_per_prompt=4, tensors=False, timeout=30)
        answers = {"P1 ": ["7", "7", "8", "7"], "P2 ": ["1", "2", "2", "3"]}
        out = {}
        threads = []
        for p, rs in answers.items():
            for i, r in enumerate(rs):
                t = threading.Thread(target=lambda p=p, i=i, r=r: out.__setitem__((p, i), fn([p + r], [p], ["7"])))
                threads.append(t)
        for t in threads[::-1]:  # interleaved, the last sample of each group first
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual([out[("P1 ", i)]["rewards"] for i in range(4)], [[1.0], [1.0], [0.0], [1.0]])
        self.assertEqual([out[("P2 ", i)]["rewards"] for i in range(4)], [[0.0], [1.0], [1.0], [0.0]])
        self.assertEqual(fn.pending, {})
        # a second round of the same prompt is its step 2 (the question's second group)
        more = [None] * 4
        ts = [threading.Thread(target=lambda i=i: more.__setitem__(i, fn(["P1 9"], ["P1 "], ["7"]))) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        self.assertEqual([m["rewards"] for m in more], [[1.0]] * 4)
        fn.close()
        steps = sorted((r["step"], r["question_id"]) for _, r in _records(run))
        self.assertEqual(steps, sorted([(1, prompt_id("P1 ")), (1, prompt_id("P2 ")), (2, prompt_id("P1 "))]))

    def test_groups_per_step_numbers_steps_by_groups_scored(self):
        run = os.path.join(self.tmp, "run")
        fn = make_reward_func("majority", worker=self.worker, log_dir=run, n_samples_per_prompt=2, groups_per_step=2, tensors=False)
        for p in ("a ", "b ", "c "):
            fn([p + "1", p + "1"], [p, p], None)
        fn.close()
        self.assertEqual([(r["step"], r["prompt"]) for _, r in _records(run)], [(1, "a "), (1, "b "), (2, "c ")])

    def test_a_group_that_never_fills_is_an_error_naming_the_setting_and_leaves_nothing_behind(self):
        fn = make_reward_func("majority", worker=self.worker, n_samples_per_prompt=3, tensors=False, timeout=0.5)
        with self.assertRaisesRegex(GroupError, r"n_samples_per_prompt=3 .*--rollout.n_samples_per_prompt"):
            fn(["x 1", "x 1"], ["x ", "x "], None)
        self.assertEqual(fn.pending, {})
        self.assertEqual(self.worker.requests, 0)

    def test_loaded_by_file_path_as_openrlhf_does_configured_from_the_environment(self):
        run = os.path.join(self.tmp, "envrun")
        env = {"CONSENSUS_LENS_OPERATOR": "majority", "CONSENSUS_LENS_N_SAMPLES": "2", "CONSENSUS_LENS_LOG_DIR": run,
               "CONSENSUS_LENS_WORKER": " ".join(FAKE_WORKER)}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            spec = importlib.util.spec_from_file_location("reward_func", os.path.join(PYROOT, "consensus_lens", "openrlhf.py"))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            res = [None, None]
            ts = [threading.Thread(target=lambda i=i: res.__setitem__(i, mod.reward_func(["q " + "ab"[i]], ["q "], ["a"]))) for i in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(60)
            self.assertEqual([len(r["rewards"]) for r in res], [1, 1])
            mod._default.close()
            self.assertEqual(sorted(x["response"] for _, r in _records(run) for x in r["rollouts"]), ["a", "b"])
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main()
