"""TTRL's pattern on verl 0.9.1's DataProto: ``apply_consensus_gt`` in place of TTRL's
``apply_ttrl_gt`` (same arguments), then TTRL's own flow: the batch repeated and joined with the
roll-outs, and the stock verl math verifier rewarding each roll-out against the new ground truth."""
import numpy as np
import pytest
import torch
from verl import DataProto
from verl.utils.reward_score import default_compute_score

from consensus_lens.reward import RewardWorker
from consensus_lens.verl import GroupError, apply_consensus_gt
from test_verl_dataproto import make_batch
from tiny import QUESTIONS, tiny_tokenizer

N = 4


def ttrl_inputs(tok, n=N):
    """TTRL's two objects at the call: ``batch`` (one row per prompt, the dataset's fields) and
    ``gen_batch_output`` (n roll-outs per prompt, consecutive)."""
    full, _, _ = make_batch(tok, n=n, seed=5)
    gen = full.select_idxs(np.ones(len(full), dtype=bool))
    for k in ("uid", "data_source", "reward_model", "extra_info"):
        gen.non_tensor_batch.pop(k)
    rows = np.arange(0, len(full), n)
    batch = DataProto.from_dict(
        tensors={"dummy": torch.arange(len(rows))},
        non_tensors={k: full.non_tensor_batch[k][rows] for k in ("uid", "data_source", "reward_model", "extra_info")})
    return batch, gen


def test_one_line_swap_labels_and_the_stock_verifier_rewards():
    tok = tiny_tokenizer()
    batch, gen = ttrl_inputs(tok)
    with RewardWorker(operator="core") as w:
        batch = apply_consensus_gt(batch, gen, N, tok, operator="core", step=4, worker=w)
    rm = batch.non_tensor_batch["reward_model"]
    assert [r["original_gt"] for r in rm] == [q["answer"] for q in QUESTIONS[:3]]
    labels = [r["ground_truth"] for r in rm]
    assert all(isinstance(x, str) for x in labels)
    # TTRL continues: repeat the prompt rows n times and join the roll-outs
    batch = batch.repeat(repeat_times=N, interleave=True).union(gen)
    texts = [tok.decode(batch.batch["responses"][i][: int(batch.batch["response_mask"][i].sum())], skip_special_tokens=True)
             for i in range(len(batch))]
    rewards = [float(default_compute_score("lighteval/MATH", t, batch.non_tensor_batch["reward_model"][i]["ground_truth"]))
               for i, t in enumerate(texts)]
    # the verifier's reward against CoRE's label: 1 exactly for the roll-outs in the label's class
    for i, t in enumerate(texts):
        assert rewards[i] == (1.0 if t.endswith("\\boxed{%s}" % labels[i // N]) or t.endswith("\\boxed{%s}." % labels[i // N]) else 0.0)
    # the graded CoRE reward and the gate travel with the roll-outs into the training batch
    assert len(batch.non_tensor_batch["cl_reward"]) == len(batch)
    assert set(batch.non_tensor_batch["cl_label"][:N]) == {labels[0]}
    assert all(0.0 <= g <= 1.0 for g in batch.non_tensor_batch["cl_gate"])


def test_n_not_the_batch_is_refused_naming_n_votes_per_prompt():
    tok = tiny_tokenizer()
    batch, gen = ttrl_inputs(tok)
    with RewardWorker(operator="majority") as w:
        with pytest.raises(GroupError, match=r"ttrl\.n_votes_per_prompt=3"):
            apply_consensus_gt(batch, gen, 3, tok, operator="majority", worker=w)
        assert w.requests == 0
