"""verl's actor entropy path on verl 0.9.1's own code: RayPPOTrainer._compute_old_log_prob (the
trainer's, unchanged: left_right_2_no_padding, no_padding_2_padding) with an actor worker group
that runs the tiny model and verl's entropy_from_logits / logprobs_from_logits on the no-padding
batch, as the engine worker does; the consensus trainer's override hands the ``entropys`` to the
hook, whose log and reward_extra_info (and verl's own rollout dump of it) carry each roll-out's
entropy. What this machine cannot run (Ray worker groups, FSDP, vLLM) is said in
docs/training-loop.md."""
import json
import os

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from verl.trainer.ppo import ray_trainer as rt
from verl.trainer.ppo.ray_trainer import RayPPOTrainer
from verl.utils import tensordict_utils as tu
from verl.utils.torch_functional import entropy_from_logits, logprobs_from_logits

from consensus_lens.reward import RewardWorker
from consensus_lens.verl import ConsensusHook, consensus_trainer, use_consensus
from test_verl_dataproto import N, balance, make_batch
from tiny import tiny_model, tiny_tokenizer


class Actor:
    """What actor_rollout_wg.compute_log_prob returns, computed as verl's engine does: per token of
    the no-padding batch, log-prob of the next token and entropy of the distribution there."""

    def __init__(self, model):
        self.model = model
        self.calls = 0

    def compute_log_prob(self, td):
        self.calls += 1
        assert tu.get(td, "calculate_entropy") is True
        ents, lps = [], []
        with torch.no_grad():
            for ids in td["input_ids"].unbind():
                logits = self.model(input_ids=ids.unsqueeze(0)).logits[0]
                ents.append(entropy_from_logits(logits))
                nxt = torch.cat([ids[1:], ids[:1]])
                lps.append(logprobs_from_logits(logits, nxt))
        return tu.get_tensordict({"entropy": torch.cat(ents), "log_probs": torch.cat(lps)},
                                 non_tensor_dict={"metrics": {"mfu": 0.0}})


def reference_entropies(model, data):
    """Per row, each response token's entropy in float64 from the model's modules."""
    out = []
    for i in range(len(data)):
        am = data.batch["attention_mask"][i].bool()
        ids = data.batch["input_ids"][i][am]
        r = int(data.batch["response_mask"][i].sum())
        with torch.no_grad():
            z = model.lm_head(model.model(input_ids=ids.unsqueeze(0)).last_hidden_state)[0].double()
        p = len(ids) - r
        rows = z[p - 1:p - 1 + r]
        lse = torch.logsumexp(rows, -1)
        out.append((lse - (torch.softmax(rows, -1) * rows).sum(-1)).tolist())
    return out


def test_the_actors_entropys_reach_the_log_and_reward_extra_info(tmp_path):
    tok = tiny_tokenizer()
    model = tiny_model(tok, seed=3)
    data, _, _ = make_batch(tok)
    am = data.batch["attention_mask"]
    data.batch["position_ids"] = (am.cumsum(-1) - 1).clamp(min=0)
    balance(data)
    trainer = object.__new__(consensus_trainer())
    trainer.config = OmegaConf.create({"actor_rollout_ref": {"actor": {}}})
    trainer.actor_rollout_wg = Actor(model)
    with RewardWorker(operator="majority") as worker:
        hook = ConsensusHook(tok, operator="majority", n=N, worker=worker, log_dir=str(tmp_path), entropies=True)
        with use_consensus(trainer, hook):
            trainer.global_steps = 5
            _, extra = rt.extract_reward(data)  # the wrapped extraction fit() calls
            assert not list(tmp_path.glob("*.jsonl"))  # the step waits for its entropies
            trainer._cl_hook = hook
            old, _ = trainer._compute_old_log_prob(data)  # verl's own stage, then the override
        hook.logger.close()
    assert trainer.actor_rollout_wg.calls == 1
    want = reference_entropies(model, data)
    got = [list(x) for x in extra["cl_token_entropies"]]
    assert len(got) == len(data) and all(len(a) == len(b) >= 1 for a, b in zip(got, want))
    for a, b in zip(got, want):
        assert a == pytest.approx(b, abs=1e-5)
    assert list(extra["cl_entropy"]) == pytest.approx([sum(w) / len(w) for w in want], abs=1e-5)
    # They are the entropys verl computed (old.batch keeps them until fit() pops them).
    m = data.batch["response_mask"].bool()
    assert [old.batch["entropys"][i][m[i]].tolist() for i in range(len(data))] == got
    # The log: one record per group, each roll-out with its row's values (rows follow uids after balance_batch).
    recs = [json.loads(line) for f in sorted(tmp_path.glob("*.jsonl")) for line in open(f)]
    assert len(recs) == 3 and {r["step"] for r in recs} == {5}
    uids = list(data.non_tensor_batch["uid"])
    for r in recs:
        rows = [i for i, u in enumerate(uids) if u == r["extra"]["uid"]]
        assert [ro["token_entropies"] for ro in r["rollouts"]] == [got[i] for i in rows]
        assert [ro["entropy"] for ro in r["rollouts"]] == pytest.approx([extra["cl_entropy"][i] for i in rows], abs=1e-12)
        assert all("confidence_approximate" not in ro for ro in r["rollouts"])
    # fit()'s adv stage copies reward_extra_info into the batch; verl's rollout dump writes the columns.
    data.non_tensor_batch.update({k: np.array(v) for k, v in extra.items()})
    dump = tmp_path / "dump"
    RayPPOTrainer._write_generations(["p"] * len(data), ["o"] * len(data), [None] * len(data), [0.0] * len(data),
                                     {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in extra.items()}, str(dump), 5)
    lines = [json.loads(x) for x in open(os.path.join(dump, "5.jsonl"))]
    assert [x["cl_token_entropies"] for x in lines] == got
    assert [x["cl_entropy"] for x in lines] == pytest.approx(list(extra["cl_entropy"]), abs=1e-12)


def test_without_the_entropy_stage_the_step_is_still_logged(tmp_path):
    tok = tiny_tokenizer()
    data, _, _ = make_batch(tok)
    with RewardWorker(operator="majority") as worker:
        hook = ConsensusHook(tok, operator="majority", n=N, worker=worker, log_dir=str(tmp_path), entropies=True)
        hook(data, step=1)
        hook(data, step=2)  # bypass mode: no old_log_prob stage, the held step is written
        hook.flush_log()
        hook.logger.close()
    recs = [json.loads(line) for f in sorted(tmp_path.glob("*.jsonl")) for line in open(f)]
    assert sorted({r["step"] for r in recs}) == [1, 2]
    assert all("entropy" not in ro for r in recs for ro in r["rollouts"])
