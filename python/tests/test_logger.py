import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

from consensus_lens import RecordError, RunLogger, group_record
from tests.helpers import PYROOT, make_groups, read_lines


class RecordTests(unittest.TestCase):
    def test_group_spec_to_native_record(self):
        rec = group_record({
            "question_id": 17, "prompt": "p", "responses": ["a", "b"],
            "token_logprobs": [[-1.0, -3.0], [-0.5]], "rewards": [1, float("nan")],
            "verifications": [True, {"tool_output": "0.5"}], "ground_truth": "a",
            "outcome_checks": [{"answer": "a", "passed": 3, "trials": 4}],
        }, 5)
        self.assertEqual(rec["kind"], "group")
        self.assertEqual((rec["step"], rec["question_id"]), (5, "17"))
        r0, r1 = rec["rollouts"]
        self.assertEqual(r0["mean_logprob"], -2.0)
        self.assertEqual(r1["mean_logprob"], -0.5)
        self.assertNotIn("token_logprobs", r0)
        self.assertEqual(r0["reward"], 1.0)
        self.assertIsNone(r1["reward"])  # NaN is not JSON: it becomes null
        self.assertEqual(r0["verification"], {"valid": True})
        self.assertEqual(r1["verification"], {"tool_output": "0.5"})
        self.assertEqual([r["sample_idx"] for r in rec["rollouts"]], [0, 1])
        json.dumps(rec, allow_nan=False)

    def test_non_finite_confidence_is_missing_not_invented(self):
        rec = group_record({"question_id": "q", "responses": ["a", "b"],
                            "mean_logprobs": [float("-inf"), -0.1]}, 1)
        self.assertIsNone(rec["rollouts"][0]["mean_logprob"])
        rec = group_record({"question_id": "q", "responses": ["a"], "token_logprobs": [[-1.0, float("nan")]]}, 1)
        self.assertIsNone(rec["rollouts"][0]["mean_logprob"])

    def test_logit_confidence_fields(self):
        rec = group_record({"question_id": "q", "responses": ["a", "b", "c"],
                            "self_certainties": [3.5, float("nan"), None],
                            "token_entropies": [[0.5, 1.5], [0.25], None],
                            "entropies": [None, 0.75, None]}, 1)
        r0, r1, r2 = rec["rollouts"]
        self.assertEqual((r0["self_certainty"], r0["entropy"], r0["token_entropies"]), (3.5, 1.0, [0.5, 1.5]))
        self.assertIsNone(r1["self_certainty"])  # NaN: missing, not invented
        self.assertEqual((r1["entropy"], r1["token_entropies"]), (0.75, [0.25]))  # the logged mean wins
        self.assertNotIn("token_entropies", r2)
        self.assertTrue(all("confidence_approximate" not in r for r in rec["rollouts"]))
        json.dumps(rec, allow_nan=False)
        # Per-token entropies are kept even without keep_token_logprobs (an entropy reward may window them).
        self.assertEqual(group_record(rec)["rollouts"][0]["token_entropies"], [0.5, 1.5])

    def test_approximate_entropy_is_flagged(self):
        rec = group_record({"question_id": "q", "responses": ["a", "b"], "token_entropies": [[0.5], None],
                            "confidence_approximate": True}, 1)
        self.assertIs(rec["rollouts"][0]["confidence_approximate"], True)
        self.assertNotIn("confidence_approximate", rec["rollouts"][1])  # said only beside a value
        with self.assertRaises(RecordError):
            group_record({"question_id": "q", "responses": ["a"], "entropies": [1.0], "confidence_approximate": "yes"}, 1)
        native = group_record({"kind": "group", "step": 2, "question_id": "q",
                               "rollouts": [{"response": "r", "entropy": 0.5, "confidence_approximate": True}]})
        self.assertIs(native["rollouts"][0]["confidence_approximate"], True)

    def test_bad_groups_raise_in_the_caller(self):
        with self.assertRaises(RecordError):
            group_record({"question_id": "q", "responses": ["a", "b"], "mean_logprobs": [0.1]}, 1)
        with self.assertRaises(RecordError):
            group_record({"responses": ["a"]}, 1)
        with self.assertRaises(RecordError):
            group_record({"question_id": "q", "responses": ["a"],
                          "outcome_checks": [{"answer": "a", "passed": 5, "trials": 4}]}, 1)

    def test_native_records_pass_through(self):
        rec = group_record({"kind": "group", "step": 3, "question_id": "q", "ground_truth": "x",
                            "rollouts": [{"response": "r", "token_logprobs": [-1.0, -2.0]}]})
        self.assertEqual(rec["step"], 3)
        self.assertEqual(rec["ground_truth"], "x")
        self.assertEqual(rec["rollouts"][0]["mean_logprob"], -1.5)


class LoggerTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_one_file_per_step_complete_lines(self):
        with RunLogger(self.dir, run_id="r1") as log:
            for step in (1, 2, 3):
                self.assertTrue(log.log_step(step, make_groups(step, 4, 16, size=2048)))
            self.assertTrue(log.flush(10))
            log.log_step(3, make_groups(30, 2, 16))  # the same step again appends to its file
        self.assertEqual(sorted(os.listdir(self.dir)), ["step_000001.jsonl", "step_000002.jsonl", "step_000003.jsonl"])
        for step, expected in ((1, 4), (2, 4), (3, 6)):
            records, tail = read_lines(os.path.join(self.dir, "step_%06d.jsonl" % step))
            self.assertEqual(tail, b"")
            self.assertEqual(len(records), expected)
            for rec in records:
                self.assertEqual(rec["step"], step)
                self.assertEqual(rec["run_id"], "r1")
                self.assertEqual(len(rec["rollouts"]), 16)
                self.assertTrue(all(isinstance(r["mean_logprob"], float) for r in rec["rollouts"]))
        s = log.stats()
        self.assertEqual((s["steps_written"], s["groups_written"], s["steps_dropped"]), (4, 14, 0))

    def test_bounded_queue_drops_and_counts_without_blocking(self):
        entered, release = threading.Event(), threading.Event()

        class SlowDisk(RunLogger):
            def _write_step(self, step, records):
                entered.set()
                release.wait(30)
                return super()._write_step(step, records)

        log = SlowDisk(self.dir, max_pending_steps=2, max_wait=0.02)
        try:
            self.assertTrue(log.log_step(1, make_groups(1, 2, 4)))
            self.assertTrue(entered.wait(5))  # the writer holds step 1 and is stuck on the disk
            t0 = time.monotonic()
            accepted = [log.log_step(step, make_groups(step, 2, 4)) for step in range(2, 11)]
            elapsed = time.monotonic() - t0
            self.assertEqual(accepted, [True, True] + [False] * 7)
            self.assertLess(elapsed, 9 * 0.02 + 1.0)  # each drop waits at most max_wait
            s = log.stats()
            self.assertEqual((s["steps_dropped"], s["groups_dropped"], s["pending_steps"]), (7, 14, 2))
        finally:
            release.set()
            final = log.close(10)
        self.assertEqual((final["steps_written"], final["steps_dropped"]), (3, 7))
        self.assertEqual(sorted(os.listdir(self.dir)), ["step_000001.jsonl", "step_000002.jsonl", "step_000003.jsonl"])

    def test_disk_errors_are_counted_not_raised(self):
        log = RunLogger(self.dir, file_template="no/such/dir/step_{step}.jsonl")
        self.assertTrue(log.log_step(1, make_groups(1, 1, 2)))
        self.assertTrue(log.flush(5))
        s = log.close()
        self.assertEqual((s["write_errors"], s["steps_written"], s["steps_dropped"]), (1, 0, 1))
        self.assertIn("FileNotFoundError", s["last_error"])

    def test_torn_tail_is_cut_before_appending(self):
        path = os.path.join(self.dir, "step_000004.jsonl")
        good = json.dumps(group_record(make_groups(4, 1, 3)[0], 4))
        with open(path, "w") as f:
            f.write(good + "\n" + good[: len(good) // 2])  # a writer killed inside a line
        with RunLogger(self.dir) as log:
            log.log_step(4, make_groups(4, 2, 3))
        records, tail = read_lines(path)
        self.assertEqual(tail, b"")
        self.assertEqual(len(records), 3)
        self.assertEqual(log.stats()["torn_tails_repaired"], 1)

    def _child(self, body):
        code = "import sys; sys.path.insert(0, %r)\n" % PYROOT + textwrap.dedent(body)
        return subprocess.Popen([sys.executable, "-c", code, self.dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def test_crash_inside_a_line_leaves_only_complete_lines(self):
        # The process dies after writing half of the third line of step 2.
        child = self._child("""
            import os, sys
            from consensus_lens import RunLogger
            from tests.helpers import make_groups
            count = [0]
            class Crashy(RunLogger):
                def _write_line(self, fd, data):
                    count[0] += 1
                    if count[0] == 6:
                        os.write(fd, data[: len(data) // 2])
                        os._exit(9)
                    super()._write_line(fd, data)
            log = Crashy(sys.argv[1])
            log.log_step(1, make_groups(1, 3, 8, size=2048))
            log.log_step(2, make_groups(2, 3, 8, size=2048))
            log.flush(30)
            os._exit(0)
        """)
        _, err = child.communicate(timeout=60)
        self.assertEqual(child.returncode, 9, err.decode())
        r1, t1 = read_lines(os.path.join(self.dir, "step_000001.jsonl"))
        r2, t2 = read_lines(os.path.join(self.dir, "step_000002.jsonl"))
        self.assertEqual((len(r1), t1), (3, b""))
        self.assertEqual(len(r2), 2)  # every newline-terminated line is a whole record
        self.assertNotEqual(t2, b"")  # the fragment has no newline: readers wait for it (docs/contract.md#files-being-written)
        with RunLogger(self.dir) as log:  # the resumed run appends after cutting the fragment
            log.log_step(2, make_groups(2, 1, 8))
        r2, t2 = read_lines(os.path.join(self.dir, "step_000002.jsonl"))
        self.assertEqual((len(r2), t2), (3, b""))

    def test_sigkill_mid_step(self):
        child = self._child("""
            import sys
            from consensus_lens import RunLogger
            from tests.helpers import make_groups
            log = RunLogger(sys.argv[1], max_pending_steps=4, max_wait=1.0)
            print("ready", flush=True)
            step = 0
            while True:
                step += 1
                log.log_step(step, make_groups(step, 8, 64, size=2048))
        """)
        self.assertEqual(child.stdout.readline().strip(), b"ready")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(os.listdir(self.dir)) < 3:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
        files = sorted(os.listdir(self.dir))
        self.assertGreaterEqual(len(files), 3)
        total = 0
        for name in files:
            records, tail = read_lines(os.path.join(self.dir, name))
            self.assertFalse(b"\n" in tail)
            for rec in records:
                self.assertEqual(len(rec["rollouts"]), 64)
                total += 1
        self.assertGreater(total, 0)


if __name__ == "__main__":
    unittest.main()


class RolloutRecordTests(unittest.TestCase):
    def test_rollout_records_one_line_per_rollout(self):
        with tempfile.TemporaryDirectory() as d:
            with RunLogger(d, records="rollout", file_template="step_{step:06d}.rank{rank}.jsonl", rank=1) as log:
                g = make_groups(2, 1, 3)[0]
                g["verifications"] = [True, False, None]
                log.log_step(2, [g])
            recs, tail = read_lines(os.path.join(d, "step_000002.rank1.jsonl"))
        self.assertEqual(tail, b"")
        self.assertEqual([r["kind"] for r in recs], ["rollout"] * 3)
        self.assertEqual([r["sample_idx"] for r in recs], [0, 1, 2])
        self.assertEqual({(r["step"], r["question_id"], r["prompt"], r["ground_truth"]) for r in recs},
                         {(2, "q000", "Question 0?", "12")})
        self.assertEqual(recs[0]["verification"], {"valid": True})
        self.assertNotIn("verification", recs[2])
        self.assertIsInstance(recs[1]["mean_logprob"], float)

    def test_outcome_checks_need_group_records(self):
        with tempfile.TemporaryDirectory() as d, RunLogger(d, records="rollout") as log:
            g = make_groups(1, 1, 2)[0]
            g["outcome_checks"] = [{"answer": "12", "passed": 1, "trials": 2}]
            with self.assertRaises(RecordError):
                log.log_step(1, [g])


class GroundTruthFormsTests(unittest.TestCase):
    """A ground truth with several accepted forms (verl ``gts`` as a list) is logged as the list, and
    the engine counts a label equal to any form as correct — the report agrees with the Python side."""

    def test_list_ground_truth_is_logged_as_forms_and_correct_in_report(self):
        from consensus_lens.records import ground_truth_value
        from tests.helpers import require_cli
        self.assertEqual(ground_truth_value(["3", "4"]), ["3", "4"])
        self.assertEqual(ground_truth_value(("7",)), "7")
        self.assertEqual(ground_truth_value(7), "7")
        self.assertIsNone(ground_truth_value([]))
        cli = require_cli()
        with tempfile.TemporaryDirectory() as d:
            with RunLogger(d) as log:
                log.log_step(1, [{"question_id": "q", "responses": ["so \\boxed{4}"] * 4, "ground_truth": ["3", "4"],
                                  "rewards": [1, 1, 1, 1], "extra": {"operator": "majority"}}])
            lines = [json.loads(line) for f in sorted(os.listdir(d)) if f.endswith(".jsonl")
                     for line in open(os.path.join(d, f)) if line.strip()]
            rec = [r for r in lines if r.get("kind") == "group"][0]
            self.assertEqual(rec["ground_truth"], ["3", "4"])
            out = subprocess.run(["node", cli, "report", d, "--json", "--no-cache", "--jobs", "0"],
                                 capture_output=True, text=True, check=True)
            report = json.loads(out.stdout)
            self.assertEqual(report["groups"][0]["correct"]["majority"], True)
            self.assertEqual(report["total"]["accuracy"]["majority"], 1)
