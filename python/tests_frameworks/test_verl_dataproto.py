"""consensus_lens.verl on verl 0.9.1's own objects: a real DataProto (torch tensors, uid in
non_tensor_batch, response_mask, rollout_log_probs) reordered by RayPPOTrainer._balance_batch,
the hook wired through verl's config and extract_reward, then verl's compute_advantage (GRPO)."""
import glob
import json
import os
import subprocess
import types
import uuid

import numpy as np
import pytest
import torch
import verl
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import ray_trainer as rt
from verl.trainer.ppo.core_algos import AdvantageEstimator
from verl.trainer.ppo.ray_trainer import RayPPOTrainer, compute_advantage
from verl.trainer.ppo.reward import extract_reward

from consensus_lens.reward import RewardWorker
from consensus_lens.verl import ConsensusHook, GroupError, consensus_trainer, use_consensus
from tiny import QUESTIONS, KnownAnswers, tiny_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")
N = 4


def test_pinned_version():
    assert verl.__version__ == "0.9.1"


def make_batch(tok, n=N, questions=QUESTIONS[:3], seed=0, source="lighteval/MATH"):
    """A batch as RayPPOTrainer.fit has it after generation: prompts repeated n times
    (interleaved), one uid per prompt, right-padded responses with response_mask and the
    sampler's rollout_log_probs."""
    rollouts = KnownAnswers(tok, seed=seed)
    prompts = [q["prompt"] for q in questions for _ in range(n)]
    out = rollouts(prompts, None)
    b = len(prompts)
    P = max(len(x) for x in out["prompt_ids"])
    R = max(len(x) for x in out["completion_ids"]) + 2
    pad = tok.pad_token_id
    prompt_t = torch.full((b, P), pad, dtype=torch.long)
    resp_t = torch.full((b, R), pad, dtype=torch.long)
    pmask = torch.zeros((b, P), dtype=torch.long)
    rmask = torch.zeros((b, R), dtype=torch.long)
    lp = torch.zeros((b, R), dtype=torch.float32)
    for i in range(b):
        p, c = out["prompt_ids"][i], out["completion_ids"][i]
        prompt_t[i, P - len(p):] = torch.tensor(p)
        pmask[i, P - len(p):] = 1
        resp_t[i, :len(c)] = torch.tensor(c)
        rmask[i, :len(c)] = 1
        lp[i, :len(c)] = torch.tensor(out["logprobs"][i])
    uids = [str(uuid.UUID(int=k + 1)) for k in range(len(questions))]
    data = DataProto.from_dict(
        tensors={"prompts": prompt_t, "responses": resp_t, "input_ids": torch.cat([prompt_t, resp_t], 1),
                 "attention_mask": torch.cat([pmask, rmask], 1), "response_mask": rmask, "rollout_log_probs": lp},
        non_tensors={
            "uid": np.array([uids[i // n] for i in range(b)], dtype=object),
            "data_source": np.array([source] * b, dtype=object),
            "reward_model": np.array([{"ground_truth": questions[i // n]["answer"], "style": "rule"} for i in range(b)], dtype=object),
            "extra_info": np.array([{"index": QUESTIONS.index(questions[i // n]), "split": "train"} for i in range(b)], dtype=object),
        },
        meta_info={"global_steps": 3},
    )
    return data, out, rollouts


def balance(data, dp=2):
    """RayPPOTrainer._balance_batch itself, on a trainer with dp ranks (it reorders by sequence length)."""
    fake = types.SimpleNamespace(_get_dp_size=lambda wg, role: dp, actor_rollout_wg=None, use_prefix_grouper=False,
                                 config=OmegaConf.create({"trainer": {"balance_batch": True}}))
    before = list(data.non_tensor_batch["uid"])
    RayPPOTrainer._balance_batch(fake, data, metrics={})
    return before


def score(path, *args):
    out = subprocess.run(["node", CLI, "score", path, *args], check=True, capture_output=True, text=True, timeout=120)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def worker():
    w = RewardWorker(operator="majority")
    yield w
    w.close()


def test_hook_then_verls_compute_advantage_equals_the_grpo_view(tmp_path, worker):
    tok = tiny_tokenizer()
    data, _, _ = make_batch(tok)
    before = balance(data)
    assert list(data.non_tensor_batch["uid"]) != before  # balance_batch really reordered the rows
    hook = ConsensusHook(tok, operator="core", n=N, worker=worker, log_dir=str(tmp_path))
    data = hook(data, step=3)
    reward_tensor, extra = extract_reward(data)  # verl's own extraction
    assert {"cl_label", "cl_gate", "cl_reward", "cl_confidence"} <= set(extra)
    assert set(extra["cl_confidence"]) == {"used"}  # CoRE's confidence from rollout_log_probs
    data.batch["token_level_scores"] = reward_tensor
    data.batch["token_level_rewards"] = reward_tensor
    data = compute_advantage(data, adv_estimator=AdvantageEstimator.GRPO, num_repeat=N, norm_adv_by_std_in_grpo=True,
                             config=OmegaConf.create({}))
    adv = data.batch["advantages"]
    mask = data.batch["response_mask"]
    verl_adv = [float(adv[i][mask[i].bool()][0]) for i in range(len(adv))]
    hook.logger.close()
    groups = score(str(tmp_path), "--operators", "core")
    assert [g["step"] for g in groups] == [3] * 3
    uids = list(data.non_tensor_batch["uid"])
    uid_of = {}
    for f in glob.glob(os.path.join(str(tmp_path), "*.jsonl")):
        with open(f) as fh:
            for line in fh:
                r = json.loads(line)
                uid_of[r["question_id"]] = r["extra"]["uid"]
    for g in groups:
        assert g["advantage_formula"] == {"framework": "verl", "eps": 1e-6, "std": "unbiased"}
        rows = [i for i, u in enumerate(uids) if u == uid_of[g["question_id"]]]  # batch order, as logged
        assert len(rows) == N
        ours = g["results"]["core"]["advantages"]
        assert max(abs(verl_adv[i] - a) for i, a in zip(rows, ours)) < 1e-5  # verl computes in float32
        assert [float(reward_tensor[i].sum()) for i in rows] == pytest.approx(g["results"]["core"]["rewards"], abs=1e-6)


def test_a_partial_group_is_refused_naming_rollout_n(worker):
    tok = tiny_tokenizer()
    data, _, _ = make_batch(tok)
    data = data.select_idxs(np.arange(len(data)) != 5)  # one roll-out of the second question lost
    with pytest.raises(GroupError, match=r"3 roll-outs .*actor_rollout_ref\.rollout\.n=4"):
        ConsensusHook(tok, n=N, worker=worker)(data, step=1)


def test_wired_through_the_config_and_logged_at_global_steps(tmp_path, worker):
    tok = tiny_tokenizer()
    log = str(tmp_path / "consensus")
    cfg = OmegaConf.create({"actor_rollout_ref": {"rollout": {"n": N}},
                            "consensus_lens": {"operator": "majority", "log_dir": log}})
    trainer = types.SimpleNamespace(config=cfg, tokenizer=tok, global_steps=7)
    data, _, _ = make_batch(tok)
    original = rt.extract_reward
    with use_consensus(trainer) as hook:
        hook.worker.close()
        hook.worker = worker
        reward_tensor, extra = rt.extract_reward(data)  # what RayPPOTrainer.fit calls
    assert rt.extract_reward is original
    hook.logger.close()
    assert sorted(os.listdir(log)) == ["step_000007.jsonl"]
    with open(os.path.join(log, "step_000007.jsonl")) as f:
        recs = [json.loads(line) for line in f]
    assert {r["step"] for r in recs} == {7}
    assert [sum(r["reward"] for r in rec["rollouts"]) > 0 for rec in recs] == [True] * 3
    assert list(extra["cl_gate"]) == [1.0] * len(data)
    cls = consensus_trainer()
    assert issubclass(cls, RayPPOTrainer) and cls.fit is not RayPPOTrainer.fit
    bad = OmegaConf.create({"actor_rollout_ref": {"rollout": {"n": N}}, "consensus_lens": {"operater": "core"}})
    with pytest.raises(ValueError, match="operater"):
        with use_consensus(types.SimpleNamespace(config=bad, tokenizer=tok, global_steps=1)):
            pass


def test_ttrl_mode_labels_ground_truth_and_the_stock_verifier_rewards(worker):
    tok = tiny_tokenizer()
    data, out, rollouts = make_batch(tok)
    balance(data)
    hook = ConsensusHook(tok, operator="majority", mode="ttrl", n=N, worker=worker)
    data = hook(data, step=2)
    rm = data.non_tensor_batch["reward_model"]
    labels = data.non_tensor_batch["cl_label"]
    for i in range(len(data)):
        q = next(q for q in QUESTIONS if q["prompt"] == tok.decode(data.batch["prompts"][i], skip_special_tokens=True))
        assert rm[i]["original_gt"] == q["answer"]
        assert rm[i]["ground_truth"] == labels[i]
    from verl.utils.reward_score import default_compute_score

    texts = [tok.decode(data.batch["responses"][i][: int(data.batch["response_mask"][i].sum())], skip_special_tokens=True)
             for i in range(len(data))]
    got = data.batch["rm_scores"].sum(-1).tolist()
    want = [float(default_compute_score("lighteval/MATH", t, labels[i])) for i, t in enumerate(texts)]
    assert got == want
    # TTRL's majority: the verifier's reward against the vote equals the majority reward
    assert got == [float(x) for x in data.non_tensor_batch["cl_reward"]]


def test_the_log_keeps_token_logprobs_and_their_text(tmp_path, worker):
    """Confidence on the text: each logged roll-out has the sampler's rollout_log_probs over its
    response mask and each token's text from the tokenizer, after balance_batch reordered the rows."""
    tok = tiny_tokenizer()
    data, out, _ = make_batch(tok, seed=4)
    balance(data)
    by_text = {}
    for ids, lp in zip(out["completion_ids"], out["logprobs"]):
        by_text[tok.decode(ids, skip_special_tokens=True)] = (ids, lp)
    hook = ConsensusHook(tok, operator="majority", n=N, worker=worker, log_dir=str(tmp_path / "log"))
    hook(data, step=5)
    hook.logger.close()
    with open(os.path.join(str(tmp_path / "log"), "step_000005.jsonl")) as f:
        recs = [json.loads(line) for line in f]
    rollouts = [r for rec in recs for r in rec["rollouts"]]
    assert len(rollouts) == len(data)
    for r in rollouts:
        ids, lp = by_text[r["response"]]
        assert r["token_logprobs"] == [round(x, 4) for x in torch.tensor(lp, dtype=torch.float32).tolist()]
        assert len(r["tokens"]) == len(ids) and "".join(r["tokens"]) == r["response"] and r["tokens"][-1] == ""
        assert r["mean_logprob"] == pytest.approx(sum(lp) / len(lp), abs=1e-6)
    # token_logprobs=False: the mean only.
    hook2 = ConsensusHook(tok, operator="majority", n=N, worker=worker, log_dir=str(tmp_path / "mean"), token_logprobs=False)
    hook2(make_batch(tok, seed=4)[0], step=5)
    hook2.logger.close()
    with open(os.path.join(str(tmp_path / "mean"), "step_000005.jsonl")) as f:
        rs = [r for line in f for r in json.loads(line)["rollouts"]]
    assert rs and all("tokens" not in r and "token_logprobs" not in r and r["mean_logprob"] is not None for r in rs)


def test_reward_manager_places_each_reward_on_the_last_response_token(tmp_path, worker):
    """verl's reward-manager contract on a real DataProto: one reward per roll-out, at the last
    token of its response (response_mask), zero elsewhere, equal to what the log records."""
    from consensus_lens.verl import ConsensusRewardManager, groups_from_batch

    tok = tiny_tokenizer()
    data, _, _ = make_batch(tok)
    mgr = ConsensusRewardManager(tok, 0, None, "data_source", operator="majority", worker=worker, log_dir=str(tmp_path))
    out = mgr(data, return_dict=True)
    mgr.logger.close()
    rewards = out["reward_tensor"]
    mask = data.batch["response_mask"]
    assert rewards.shape == data.batch["responses"].shape
    last = mask.sum(dim=1) - 1
    at_last = rewards[torch.arange(len(last)), last]
    assert torch.equal(rewards.sum(dim=1), at_last)
    assert int((rewards != 0).sum()) == int((at_last != 0).sum())
    _, rows = groups_from_batch(data, tok, step=3)
    (log,) = glob.glob(str(tmp_path / "step_*.jsonl"))
    with open(log) as f:
        logged = [json.loads(line) for line in f]
    assert len(logged) == len(rows)
    for rec, idx in zip(logged, rows):
        assert [r["reward"] for r in rec["rollouts"]] == [float(at_last[i]) for i in idx]


def test_without_response_mask_or_log_probs_the_attention_mask_decides(worker):
    """Older verl batches carry no response_mask (its response part of attention_mask is used)
    and no rollout log-probs (no mean log-prob is logged, none invented)."""
    from consensus_lens.verl import groups_from_batch, mean_logprobs

    tok = tiny_tokenizer()
    full, _, _ = make_batch(tok)
    bare, _, _ = make_batch(tok)
    bare.batch.pop("response_mask")
    bare.batch.pop("rollout_log_probs")
    assert mean_logprobs(bare) is None
    with pytest.raises(KeyError):
        mean_logprobs(bare, "old_log_probs")
    want, _ = groups_from_batch(full, tok, step=1)
    got, _ = groups_from_batch(bare, tok, step=1)
    assert [g["responses"] for g in got] == [g["responses"] for g in want]
    assert all("mean_logprobs" not in g for g in got)
    assert all("mean_logprobs" in g for g in want)
