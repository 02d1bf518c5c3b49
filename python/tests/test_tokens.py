"""Per-token text beside per-token log-probs: kept with keep_token_logprobs, checked, dropped otherwise."""
import json
import unittest

from consensus_lens import RecordError, group_record
from consensus_lens.records import token_texts


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


class ByteTokenizer:
    """Byte-level: one token per UTF-8 byte (ids 0-255), 256 is a special token; decodes as the
    byte-level BPE tokenizers do (an incomplete character becomes U+FFFD)."""

    def __init__(self):
        self.calls = 0

    def decode(self, ids, skip_special_tokens=False):
        self.calls += 1
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


class TokenTextTests(unittest.TestCase):
    def test_each_tokens_text_joins_to_the_decoded_sequence(self):
        tok = ByteTokenizer()
        text = "x = é² → 7"
        ids = list(text.encode("utf-8")) + [256]
        out = token_texts(tok, ids)
        self.assertEqual(len(out), len(ids))
        self.assertEqual("".join(out), text)
        # The two bytes of "é" : "" on the first, the character on the second.
        i = text.encode("utf-8").index("é".encode("utf-8"))
        self.assertEqual(out[i:i + 2], ["", "é"])
        self.assertEqual(out[-1], "")  # the special token decodes to nothing

    def test_the_cache_decodes_each_id_once(self):
        tok = ByteTokenizer()
        cache = {}
        token_texts(tok, list(b"aaaa bbbb"), cache)
        self.assertEqual(tok.calls, 3)  # a, " ", b
        token_texts(tok, list(b"abba"), cache)
        self.assertEqual(tok.calls, 3)

    def test_a_truncated_character_ends_as_decoded(self):
        out = token_texts(ByteTokenizer(), list("é".encode("utf-8"))[:1])
        self.assertEqual(out, ["\ufffd"])


if __name__ == "__main__":
    unittest.main()
