"""Per-token text beside per-token log-probs: kept with keep_token_logprobs, checked, dropped otherwise."""
import json
import unittest

from consensus_lens import RecordError, group_record


class TokenStringTests(unittest.TestCase):
    SPEC = {"question_id": "q", "responses": ["x is 7", "8"],
            "token_logprobs": [[-0.5, -0.1, -2.0], [-0.3]], "tokens": [["x", " is", " 7"], ["8"]]}

    def test_kept_with_the_log_probs(self):
        rec = group_record(self.SPEC, 1, keep_token_logprobs=True)
        r0, r1 = rec["rollouts"]
        self.assertEqual(r0["tokens"], ["x", " is", " 7"])
        self.assertEqual(r0["token_logprobs"], [-0.5, -0.1, -2.0])
        self.assertEqual(r1["tokens"], ["8"])
        json.dumps(rec, allow_nan=False)

    def test_dropped_without_them(self):
        rec = group_record(self.SPEC, 1)
        self.assertNotIn("tokens", rec["rollouts"][0])
        self.assertNotIn("token_logprobs", rec["rollouts"][0])
        native = group_record({"kind": "group", "step": 1, "question_id": "q",
                               "rollouts": [{"response": "a", "token_logprobs": [-1.0], "tokens": ["a"]}]})
        self.assertNotIn("tokens", native["rollouts"][0])

    def test_native_rollouts_keep_checked_tokens(self):
        rec = group_record({"kind": "group", "step": 1, "question_id": "q",
                            "rollouts": [{"response": "ab", "token_logprobs": [-1.0, -0.2], "tokens": ["a", "b"]}]},
                           keep_token_logprobs=True)
        self.assertEqual(rec["rollouts"][0]["tokens"], ["a", "b"])

    def test_a_mismatch_is_an_error_not_values_on_the_wrong_text(self):
        with self.assertRaisesRegex(RecordError, "3 strings, one per token log-prob"):
            group_record(dict(self.SPEC, tokens=[["x", " is"], ["8"]]), 1, keep_token_logprobs=True)
        with self.assertRaisesRegex(RecordError, "list of strings"):
            group_record({"kind": "group", "step": 1, "question_id": "q",
                          "rollouts": [{"response": "a", "token_logprobs": [-1.0], "tokens": "a"}]},
                         keep_token_logprobs=True)


if __name__ == "__main__":
    unittest.main()
