import unittest

from consensus_lens.convert import ConvertError, main, slime_records


def sample(gi, idx, answer, reward, **kw):
    s = {"group_index": gi, "index": idx, "prompt": [{"role": "user", "content": "Q%d?" % gi}], "response": "\\boxed{%s}" % answer,
         "label": "7", "reward": reward, "rollout_log_probs": [-0.5, -0.25, -1.0], "loss_mask": [1, 0, 1], "status": "completed"}
    s.update(kw)
    return s


class SlimeRecordsTests(unittest.TestCase):
    def test_groups_by_group_index_with_masked_mean_logprob_and_label_as_ground_truth(self):
        recs = slime_records({"rollout_id": 4, "samples": [sample(0, 0, "7", 1.0), sample(0, 1, "8", 0.0), sample(1, 2, "7", 1.0)]}, evaluation=False)
        self.assertEqual([(r["step"], r["prompt"], len(r["rollouts"])) for r in recs], [(4, "Q0?", 2), (4, "Q1?", 1)])
        self.assertEqual(recs[0]["ground_truth"], "7")
        self.assertEqual([ro["reward"] for ro in recs[0]["rollouts"]], [1.0, 0.0])
        self.assertEqual(recs[0]["rollouts"][0]["mean_logprob"], -0.75)  # the masked token left out
        self.assertEqual(recs[0]["rollouts"][1]["sample_idx"], 1)

    def test_evaluation_rewards_are_kept_aside_and_a_dict_reward_needs_the_key(self):
        recs = slime_records({"rollout_id": 2, "samples": [sample(0, 0, "7", 1.0)]}, evaluation=True)
        self.assertNotIn("reward", recs[0]["rollouts"][0])
        self.assertEqual(recs[0]["rollouts"][0]["extra"]["score"], 1.0)
        with self.assertRaisesRegex(ConvertError, "--reward-key"):
            slime_records({"rollout_id": 2, "samples": [sample(0, 0, "7", {"acc": 1.0, "fmt": 0.5})]}, evaluation=False)
        recs = slime_records({"rollout_id": 2, "samples": [sample(0, 0, "7", {"acc": 1.0, "fmt": 0.5})]}, evaluation=False, reward_key="acc")
        self.assertEqual(recs[0]["rollouts"][0]["reward"], 1.0)

    def test_not_a_dump_is_refused(self):
        with self.assertRaisesRegex(ConvertError, "no \"samples\" list"):
            slime_records({"weights": []}, evaluation=False)

    def test_the_command_refuses_a_file_it_cannot_load_without_running_it(self):
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "3.pt")
            with open(p, "wb") as f:
                f.write(b"not a pickle")
            import contextlib
            import io

            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(main(["slime", p, "--out", os.path.join(d, "out")]), 1)
            self.assertIn("consensus_lens.convert:", err.getvalue())
            self.assertFalse(os.path.exists(os.path.join(d, "out", "000003.jsonl")))


if __name__ == "__main__":
    unittest.main()
