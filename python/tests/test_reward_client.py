import importlib.util
import json
import os
import signal
import sys
import tempfile
import time
import unittest

from consensus_lens import reward as reward_mod
from consensus_lens.reward import (
    RewardWorker, WorkerDied, WorkerProtocolError, WorkerRequestError, compute_score,
)
from tests.helpers import FAKE_WORKER, HERE


def groups(step=1):
    return [
        {"question_id": "a", "responses": ["x", "x", "y"], "ground_truth": "y"},
        {"question_id": "b", "responses": ["p", "q", "q", "q"]},
        {"kind": "group", "step": step, "question_id": "c", "ground_truth": "SECRET",
         "rollouts": [{"response": "z", "ground_truth": "SECRET"}]},
    ]


class ClientTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "requests.jsonl")
        self.state = os.path.join(self.tmp.name, "count")
        self.workers = []

    def tearDown(self):
        for w in self.workers:
            w.close()
        self.tmp.cleanup()

    def worker(self, mode="ok", die_at="", **kw):
        env = {"FAKE_MODE": mode, "FAKE_LOG": self.log, "FAKE_STATE": self.state, "FAKE_DIE_AT": die_at}
        w = RewardWorker(FAKE_WORKER, env=env, **kw)
        self.workers.append(w)
        return w

    def requests(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def test_one_request_line_per_batch_results_in_order(self):
        w = self.worker()
        res = w.score(groups(), "majority", {"kappa": 1}, step=1)
        self.assertEqual([r["question_id"] for r in res], ["a", "b", "c"])
        self.assertEqual(res[0]["rewards"], [1.0, 1.0, 0.0])
        self.assertEqual(res[1]["label"], "q")
        res2 = w.score(groups(2), step=2)
        self.assertEqual(res2[2]["step"], 2)
        reqs = self.requests()
        self.assertEqual(len(reqs), 2)  # one line per batch, one process for both
        self.assertEqual(len(reqs[0]["groups"]), 3)
        self.assertEqual((reqs[0]["operator"], reqs[0]["params"]), ("majority", {"kappa": 1}))
        self.assertEqual(reqs[1]["operator"], "core")  # the worker's default operator
        self.assertEqual(w.restarts, 0)

    def test_big_batches_go_out_in_pipelined_chunks(self):
        w = self.worker(chunk_groups=2)
        gs = [{"question_id": "g%d" % i, "responses": ["a", "b", "b"] if i % 2 else ["c"]} for i in range(5)]
        res = w.score(gs, step=3)
        self.assertEqual([r["question_id"] for r in res], ["g0", "g1", "g2", "g3", "g4"])
        self.assertEqual(res[1]["label"], "b")
        self.assertEqual([len(r["groups"]) for r in self.requests()], [2, 2, 1])
        # A refused chunk raises after every answer is read: the next batch is still in step.
        bad = gs[:3] + [{"question_id": "bad", "responses": ["x"]}] + gs[3:]
        with self.assertRaises(WorkerRequestError):
            w.score(bad, step=4)
        self.assertEqual([r["question_id"] for r in w.score(gs, step=5)], ["g0", "g1", "g2", "g3", "g4"])
        self.assertEqual(w.restarts, 0)

    def test_ground_truth_is_never_sent(self):
        w = self.worker()
        w.score(groups(), step=1)
        compute_score(["d"] * 3, ["1", "1", "2"], ["SECRET"] * 3, [{"index": 0}] * 3, command=FAKE_WORKER)
        with open(self.log) as f:
            raw = f.read()
        self.assertNotIn("ground_truth", raw)
        self.assertNotIn("SECRET", raw)
        self.assertNotIn('"y"', raw.split('"question_id":"b"')[0].split('"rollouts"')[0])

    def test_restart_after_the_worker_is_killed(self):
        w = self.worker()
        w.score(groups(), step=1)
        pid = w.pid
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        res = w.score(groups(2), step=2)
        self.assertEqual(len(res), 3)
        self.assertEqual(w.restarts, 1)
        self.assertNotEqual(w.pid, pid)

    def test_worker_dying_during_a_request_is_retried_once(self):
        w = self.worker(die_at="2")
        w.score(groups(), step=1)
        res = w.score(groups(2), step=2)  # request 2 kills the worker; request 3 answers it
        self.assertEqual(res[1]["label"], "q")
        self.assertEqual(w.restarts, 1)
        self.assertEqual(len(self.requests()), 3)

    def test_dying_in_the_middle_of_an_answer_is_a_death_not_a_bad_answer(self):
        w = self.worker("half", die_at="1")
        res = w.score(groups(), step=1)
        self.assertEqual(len(res), 3)
        self.assertEqual(w.restarts, 1)

    def test_dying_twice_on_one_request_is_an_error(self):
        w = self.worker(die_at="1,2")
        with self.assertRaises(WorkerDied):
            w.score(groups(), step=1)

    def test_crash_loop_is_bounded(self):
        w = self.worker(die_at="1,2,3,4,5,6", max_restarts=2)
        with self.assertRaises(WorkerDied):
            w.score(groups(), step=1)
        with self.assertRaises(WorkerDied) as cm:
            w.score(groups(), step=1)
        self.assertIn("giving up", str(cm.exception))

    def test_malformed_answers_are_errors_not_zero_rewards(self):
        for mode in ("malformed", "short", "nan", "wrong_group", "noise"):
            with self.subTest(mode=mode):
                w = self.worker(mode)
                with self.assertRaises(WorkerProtocolError):
                    w.score(groups(), step=1)
                self.assertIsNone(w.pid)  # killed: its output is no longer in step
                with self.assertRaises(WorkerProtocolError):  # the restarted worker is no better
                    w.score(groups(), step=1)
                self.assertEqual(w.restarts, 1)

    def test_a_group_that_cannot_be_encoded_sends_nothing_and_the_next_call_gets_its_own_rewards(self):
        # One group per line: before, the first line went out, the second failed to encode, and
        # the first line's answer was read by the next call, for the same (question, step).
        for bad_extra in ({"v": float("nan")}, {"v": object()}, {"v": float("inf")}):
            with self.subTest(extra=repr(bad_extra)):
                if os.path.exists(self.log):
                    os.remove(self.log)
                w = self.worker(chunk_groups=1)
                first = [{"question_id": "a", "step": 1, "responses": ["x", "x", "y"]},
                         {"question_id": "b", "step": 1, "responses": ["p"], "extra": bad_extra}]
                with self.assertRaises(ValueError) as cm:
                    w.score(first, step=1)
                self.assertIn("question b", str(cm.exception))
                self.assertFalse(os.path.exists(self.log) and self.requests(), "nothing may be sent")
                res = w.score([{"question_id": "a", "step": 1, "responses": ["x", "y", "y"]}], step=1)
                self.assertEqual(res[0]["label"], "y")
                self.assertEqual(res[0]["rewards"], [0.0, 1.0, 1.0])

    def test_answers_are_checked_against_the_request_id(self):
        for mode in ("wrong_id", "no_id"):
            with self.subTest(mode=mode):
                w = self.worker(mode)
                with self.assertRaises(WorkerProtocolError) as cm:
                    w.score(groups(), step=1)
                self.assertIn("belongs to request", str(cm.exception))
                self.assertIsNone(w.pid)
        ids = [r["id"] for r in self.requests()]
        self.assertEqual(len(set(ids)), len(ids))  # one id per request line

    def test_an_interrupted_call_restarts_the_worker_so_no_answer_is_left_for_the_next(self):
        w = self.worker(chunk_groups=1)
        w.score(groups(), step=1)
        pid = w.pid
        real_get = w._lines.get
        calls = [0]

        def interrupted_get(*a, **kw):
            calls[0] += 1
            if calls[0] == 2:  # one answer read, two still owed
                raise KeyboardInterrupt
            return real_get(*a, **kw)

        w._lines.get = interrupted_get
        with self.assertRaises(KeyboardInterrupt):
            w.score(groups(2), step=2)
        self.assertIsNone(w.pid)
        res = w.score([{"question_id": "b", "responses": ["p", "p", "q"]}], step=3)
        self.assertNotEqual(w.pid, pid)
        self.assertEqual((res[0]["question_id"], res[0]["step"], res[0]["label"]), ("b", 3, "p"))

    def test_rejected_request_keeps_the_worker(self):
        w = self.worker("error")
        with self.assertRaises(WorkerRequestError) as cm:
            w.score(groups(), "nope", step=1)
        self.assertIn("unknown operator", str(cm.exception))
        pid = w.pid
        self.assertIsNotNone(pid)
        with self.assertRaises(WorkerRequestError):
            w.score(groups(), "nope", step=1)
        self.assertEqual(w.pid, pid)

    def test_timeout_kills_and_reports(self):
        w = self.worker("hang", timeout=0.5)
        with self.assertRaises(WorkerDied) as cm:
            w.score(groups(), step=1)
        self.assertIn("did not answer", str(cm.exception))

    def test_missing_worker_is_a_clear_error(self):
        w = RewardWorker([os.path.join(HERE, "no-such-program")])
        with self.assertRaises(WorkerDied) as cm:
            w.score(groups(), step=1)
        self.assertIn("cannot start", str(cm.exception))


class ComputeScoreTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        os.environ["FAKE_LOG"] = os.path.join(self.tmp.name, "requests.jsonl")

    def tearDown(self):
        os.environ.pop("FAKE_LOG", None)
        reward_mod._close_workers()
        reward_mod._workers.clear()
        self.tmp.cleanup()

    def test_groups_by_key_in_shuffled_batches(self):
        # verl's balance_batch reorders roll-outs: groups are not contiguous.
        sources = ["math", "math", "gsm", "math", "gsm", "gsm", "math"]
        sols = ["1", "2", "5", "1", "5", "6", "1"]
        extras = [{"index": 0}, {"index": 0}, {"index": 0}, {"index": 0}, {"index": 0}, {"index": 0}, {"index": 0}]
        out = compute_score(sources, sols, [None] * 7, extras, command=FAKE_WORKER, operator="majority", step=4)
        self.assertEqual(out, [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0])
        self.assertTrue(all(isinstance(x, float) for x in out))
        with open(os.environ["FAKE_LOG"]) as f:
            (req,) = [json.loads(line) for line in f]
        self.assertEqual([g["question_id"] for g in req["groups"]], ["math/0", "gsm/0"])
        self.assertEqual([len(g["rollouts"]) for g in req["groups"]], [4, 3])
        self.assertEqual(req["groups"][0]["step"], 4)
        self.assertEqual(req["operator"], "majority")

    def test_dict_results_carry_gate_and_advantage(self):
        out = compute_score(["d"] * 3, ["1", "1", "2"], None, [{"index": 9}] * 3, command=FAKE_WORKER, return_dict=True)
        self.assertEqual([o["score"] for o in out], [1.0, 1.0, 0.0])
        self.assertEqual({o["cl_gate"] for o in out}, {1.0})
        self.assertGreater(out[0]["cl_advantage"], 0)

    def test_missing_group_key_is_an_error(self):
        with self.assertRaises(ValueError):
            compute_score(["d"] * 2, ["1", "2"], None, [{"index": 1}, {}], command=FAKE_WORKER)
        with self.assertRaises(ValueError):
            compute_score(["d"] * 2, ["1", "2"], None, None, command=FAKE_WORKER)

    def test_loads_by_file_path_like_verl(self):
        # verl's get_custom_reward_fn: spec_from_file_location("custom_module", path), then getattr.
        path = reward_mod.__file__
        spec = importlib.util.spec_from_file_location("custom_module", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        os.environ["CONSENSUS_LENS_WORKER"] = " ".join(FAKE_WORKER)
        try:
            out = mod.compute_score(data_sources=["d"] * 2, solution_strs=["7", "7"], ground_truths=["7", "7"],
                                    extra_infos=[{"index": 1}] * 2, operator="majority")
            mod._close_workers()
        finally:
            del os.environ["CONSENSUS_LENS_WORKER"]
        self.assertEqual(out, [1.0, 1.0])

    def test_log_dir_writes_the_rewards_used(self):
        run = os.path.join(self.tmp.name, "run")
        compute_score(["d"] * 3, ["1", "1", "2"], ["1"] * 3, [{"index": 2}] * 3, command=FAKE_WORKER,
                      step=7, log_dir=run)
        reward_mod._loggers[run].close()
        with open(os.path.join(run, "step_000007.jsonl")) as f:
            (rec,) = [json.loads(line) for line in f]
        self.assertEqual([r["reward"] for r in rec["rollouts"]], [1.0, 1.0, 0.0])
        self.assertEqual(rec["ground_truth"], "1")  # logged as a diagnostic, never sent


if __name__ == "__main__":
    unittest.main()


class RealWorkerRestartTests(unittest.TestCase):
    """The real ``serve``: a worker whose threads cannot be restarted exits (status 75); the
    client takes that as a death, starts a fresh worker and goes on."""

    def test_a_worker_out_of_thread_restarts_is_replaced(self):
        from tests.helpers import require_cli

        cli = require_cli()
        # every group of question "die" ends its thread (the worker's fault injection)
        w = RewardWorker(["node", cli], env={"CONSENSUS_LENS_TEST_WORKER_EXIT_ON": "die"},
                         operator="majority", chunk_groups=None)
        try:
            die = [{"question_id": "die", "responses": ["\\boxed{1}", "\\boxed{2}"]}]
            # "q1" goes to the same thread as "die" (of 2, serve's default on 2 cores)
            ok = [{"question_id": "q1", "responses": ["\\boxed{1}", "\\boxed{1}", "\\boxed{2}"]}]
            for _ in range(12):  # each a refused request; the 9th thread death ends the process
                with self.assertRaises(WorkerRequestError):
                    w.score(die, step=1)
            self.assertGreaterEqual(w.restarts, 1)
            res = w.score(ok, step=2)  # before: refused forever by a process that stayed up
            self.assertEqual(res[0]["label"], "1")
        finally:
            w.close()
