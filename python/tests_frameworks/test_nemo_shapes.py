"""consensus_lens.nemo on NeMo RL's data shapes. NeMo RL itself is not installable from the
package index (``nemo-rl`` there is a 0.0.0 placeholder), so the batch is built as its GRPO loop
builds it: the prompt batch repeat_interleave'd num_generations_per_prompt times, one message log
per sample (assistant messages carry token_ids and generation_logprobs tensors), total_reward."""
import json
import os
import subprocess

import pytest
import torch

from consensus_lens import RunLogger
from consensus_lens.nemo import ConsensusEnvironment, GroupError, shape_rewards
from consensus_lens.reward import RewardWorker
from tiny import QUESTIONS, KnownAnswers, tiny_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")
N = 4


def test_nemo_rl_on_the_index_is_a_placeholder():
    # The reason this module is tested on shapes: the package index has no usable NeMo RL.
    with pytest.raises(ImportError):
        import nemo_rl.algorithms.grpo  # noqa: F401


def repeated_batch(tok, seed=0):
    rollouts = KnownAnswers(tok, seed=seed)
    prompts = [q["prompt"] for q in QUESTIONS[:2] for _ in range(N)]  # repeat_interleave
    out = rollouts(prompts, None)
    logs = []
    for p, ids, lps in zip(prompts, out["completion_ids"], out["logprobs"]):
        logs.append([
            {"role": "user", "content": p, "token_ids": torch.tensor(tok(p, add_special_tokens=False)["input_ids"])},
            {"role": "assistant", "content": tok.decode(ids, skip_special_tokens=True), "token_ids": torch.tensor(ids),
             "generation_logprobs": torch.tensor(lps)},
        ])
    return {"message_log": logs, "total_reward": torch.zeros(len(logs)), "idx": list(range(len(logs)))}, out


@pytest.fixture(scope="module")
def worker():
    w = RewardWorker(operator="core")
    yield w
    w.close()


def test_shape_rewards_over_the_repeated_batch(tmp_path, worker):
    tok = tiny_tokenizer()
    batch, out = repeated_batch(tok)
    with RunLogger(str(tmp_path)) as log:
        batch = shape_rewards(batch, num_generations=N, step=5, operator="core", worker=worker, logger=log)
    assert batch["unshaped_total_reward"].tolist() == [0.0] * 2 * N
    assert batch["total_reward"].dtype == torch.float32 and batch["cl_gate"].shape == (2 * N,)
    res = subprocess.run(["node", CLI, "score", str(tmp_path), "--operators", "core"], check=True, capture_output=True, text=True)
    groups = [json.loads(line) for line in res.stdout.splitlines()]
    assert [g["step"] for g in groups] == [5, 5]
    got = [r for g in groups for r in g["results"]["core"]["rewards"]]
    assert batch["total_reward"].tolist() == pytest.approx(got, abs=1e-6)
    assert {g["results"]["core"]["confidence"] for g in groups} == {"used"}
    assert groups[0]["advantage_formula"] == {"framework": "nemo-rl", "eps": 1e-6, "std": "leave-one-out"}
    # No logits in a message log: the entropies logged are the sampled tokens' surprisal, marked approximate.
    recs = [json.loads(line) for f in sorted(os.listdir(tmp_path)) if f.endswith(".jsonl") for line in open(tmp_path / f)]
    rows = [r for rec in recs for r in rec["rollouts"]]
    want = [[-x for x in lp] for lp in out["logprobs"]]
    assert len(rows) == len(want)
    for r, w in zip(rows, want):
        assert r["token_entropies"] == pytest.approx(w, abs=1e-6)
    assert all(r["confidence_approximate"] is True and "self_certainty" not in r for r in rows)
    assert [r["entropy"] for r in rows] == pytest.approx([sum(w) / len(w) for w in want], abs=1e-6)


def test_a_batch_that_is_not_whole_groups_is_refused(worker):
    tok = tiny_tokenizer()
    batch, _ = repeated_batch(tok)
    with pytest.raises(GroupError, match="num_generations_per_prompt=3"):
        shape_rewards(batch, num_generations=3, step=1, worker=worker)
    batch["message_log"] = batch["message_log"][1:] + batch["message_log"][:1]  # one sample out of its block
    with pytest.raises(GroupError, match="has another prompt"):
        shape_rewards(batch, num_generations=N, step=1, worker=worker)


def test_environment_step_sees_whole_groups(worker):
    tok = tiny_tokenizer()
    batch, _ = repeated_batch(tok, seed=3)
    env = ConsensusEnvironment(num_generations=N, operator="majority", worker=worker)
    ret = env.step(batch["message_log"], [{"question_id": "q%d" % (i // N)} for i in range(2 * N)])
    assert ret.rewards.shape == (2 * N,) and bool(ret.terminateds.all())
    for k in range(2):
        block = ret.answers[k * N:(k + 1) * N]
        assert len(set(block)) == 1  # one pseudo-label per group
        texts = [m[-1]["content"] for m in batch["message_log"][k * N:(k + 1) * N]]
        assert ret.rewards[k * N:(k + 1) * N].tolist() == [1.0 if ("{%s}" % block[0]) in t else 0.0 for t in texts]
