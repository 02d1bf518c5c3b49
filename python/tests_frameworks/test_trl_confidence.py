"""Self-certainty and token entropy from the policy's logits, in a real TRL GRPOTrainer run.

The model generates its own completions (no rollout_func); ``confidence_trainer()`` computes each
roll-out's values from the logits before the rewards. A probe reward function, called by TRL in
the same batch, recomputes them independently: the model's backbone and LM head called directly,
one unpadded sequence at a time, in float64 — and TRL's own per-token entropies
(``_get_per_token_logps_and_entropies``, its fused head) for the same tokens. The run is rewarded
by the confidence operators (``selfcertainty``, ``entropy``, ``likelihood``) through the reward
worker, and ``consensus-lens score`` on each one's log gives back the rewards TRL trained with.
"""
import glob
import json
import os
import subprocess

import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig

from consensus_lens.trl import confidence_trainer, consensus_reward
from tiny import QUESTIONS, tiny_model, tiny_tokenizer

N = 4
OPERATORS = ("selfcertainty", "entropy", "likelihood")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")


def reference(model, prompt_ids, completion_ids):
    """Per response token, (self-certainty, entropy, log-prob) from the model's own modules."""
    ids = torch.tensor([list(prompt_ids) + list(completion_ids)])
    with torch.no_grad():
        hidden = model.model(input_ids=ids).last_hidden_state
        z = model.lm_head(hidden)[0].double()
    p = len(prompt_ids)
    out = []
    for t, tok in enumerate(completion_ids):
        row = z[p - 1 + t]
        lse = torch.logsumexp(row, 0)
        probs = torch.exp(row - lse)
        out.append((float(lse - row.mean()), float(-(probs * (row - lse)).sum()), float(row[tok] - lse)))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trl-confidence")
    out = str(tmp / "trl")
    logs = {op: str(tmp / ("consensus-" + op)) for op in OPERATORS}
    log = logs["selfcertainty"]
    tok = tiny_tokenizer()
    rewards = [consensus_reward(op, log_dir=logs[op]) for op in OPERATORS]
    seen = []

    def probe(prompts, completions, completion_ids, **kw):
        trainer = kw["log_extra"].__self__
        model = trainer.model
        batch = []
        for p, c in zip(prompts, completion_ids):
            pids = tok(p, add_special_tokens=False)["input_ids"]
            batch.append({"ref": reference(model, pids, c), "pids": pids, "cids": list(c)})
        # TRL's own entropies for the same tokens (its fused LM head), one sequence at a time.
        for b in batch:
            ids = torch.tensor([b["pids"] + b["cids"]])
            with torch.no_grad():
                _, ent, _ = trainer._get_per_token_logps_and_entropies(model, ids, torch.ones_like(ids), len(b["cids"]),
                                                                       compute_entropy=True)
            b["trl_entropy"] = ent[0].double().tolist()
        seen.append({"step": kw["trainer_state"].global_step + 1, "rows": batch, "kw": {
            k: kw[k] for k in ("cl_self_certainty", "cl_entropy", "cl_token_entropies", "cl_logprobs")}})
        return [0.0] * len(prompts)

    ds = Dataset.from_list([{"prompt": q["prompt"]} for q in QUESTIONS])
    args = GRPOConfig(output_dir=out, max_steps=2, per_device_train_batch_size=2 * N, num_generations=N, learning_rate=1e-2,
                      logging_steps=1, log_completions=True, num_completions_to_print=0, report_to=[], save_strategy="no",
                      use_cpu=True, bf16=False, beta=0.0, max_completion_length=12, seed=0, disable_tqdm=True,
                      dataloader_num_workers=0, temperature=1.0)
    trainer = confidence_trainer()(model=tiny_model(tok), reward_funcs=[*rewards, probe], args=args, train_dataset=ds,
                                   processing_class=tok)
    trainer.train()
    trainer.save_state()  # names the reward functions for the table's reader
    for reward in rewards:
        reward.logger.close()
        reward.worker.close()
    recs = []
    for f in sorted(glob.glob(os.path.join(log, "*.jsonl"))):
        with open(f) as fh:
            recs.extend(json.loads(line) for line in fh)
    return {"seen": seen, "recs": recs, "out": out, "log": log, "logs": logs}


def test_values_handed_to_reward_functions_are_the_models(run):
    assert len(run["seen"]) == 2
    for call in run["seen"]:
        kw = call["kw"]
        for i, row in enumerate(call["rows"]):
            ref = row["ref"]
            assert len(ref) == len(row["cids"]) >= 1
            n = len(ref)
            assert kw["cl_self_certainty"][i] == pytest.approx(sum(r[0] for r in ref) / n, abs=1e-5)
            assert kw["cl_entropy"][i] == pytest.approx(sum(r[1] for r in ref) / n, abs=1e-5)
            assert kw["cl_token_entropies"][i] == pytest.approx([r[1] for r in ref], abs=1e-5)
            assert kw["cl_logprobs"][i] == pytest.approx([r[2] for r in ref], abs=1e-5)
            # TRL's fused-head entropies of the same tokens agree (float32).
            assert kw["cl_token_entropies"][i] == pytest.approx(row["trl_entropy"], abs=1e-4)
            # Self-certainty is not a constant: logsumexp(z) - mean(z) > 0 unless the logits are flat.
            assert kw["cl_self_certainty"][i] > 0


def test_the_log_holds_them_per_rollout(run):
    recs = run["recs"]
    kws = [(call["step"], i, call["kw"]) for call in run["seen"] for i in range(len(call["rows"]))]
    assert len(recs) == len(kws) == 2 * 2 * N
    for r, (step, i, kw) in zip(recs, kws):
        assert r["step"] == step
        assert r["self_certainty"] == pytest.approx(kw["cl_self_certainty"][i], abs=1e-12)
        assert r["entropy"] == pytest.approx(kw["cl_entropy"][i], abs=1e-12)
        assert r["token_entropies"] == pytest.approx(kw["cl_token_entropies"][i], abs=1e-12)
        assert r["mean_logprob"] == pytest.approx(sum(kw["cl_logprobs"][i]) / len(kw["cl_logprobs"][i]), abs=1e-12)
        assert "confidence_approximate" not in r  # from the logits: the real value
        assert r["extra"]["temperature"] == 1.0
    # Distinct roll-outs, distinct values: nothing constant was logged.
    assert len({round(r["self_certainty"], 9) for r in recs}) > 1


def test_trls_completions_table_gets_the_columns(run):
    import pandas as pd

    files = sorted(glob.glob(os.path.join(run["out"], "completions", "**", "*.parquet"), recursive=True))
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    want_sc = [x for call in run["seen"] for x in call["kw"]["cl_self_certainty"]]
    want_ent = [x for call in run["seen"] for x in call["kw"]["cl_entropy"]]
    assert list(df["cl_self_certainty"]) == pytest.approx(want_sc, abs=1e-12)
    assert list(df["cl_entropy"]) == pytest.approx(want_ent, abs=1e-12)


def test_score_on_the_log_gives_the_rewards_trl_trained_with(run):
    """Each confidence operator's rewards from ``score`` on its log are TRL's (float32) and the
    reference forward pass's: self-certainty, -(mean token entropy), mean token log-prob."""
    import pandas as pd

    files = sorted(glob.glob(os.path.join(run["out"], "completions", "**", "*.parquet"), recursive=True))
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    refs = [row["ref"] for call in run["seen"] for row in call["rows"]]
    want = {
        "selfcertainty": [sum(r[0] for r in ref) / len(ref) for ref in refs],
        "entropy": [-sum(r[1] for r in ref) / len(ref) for ref in refs],
        "likelihood": [sum(r[2] for r in ref) / len(ref) for ref in refs],
    }
    for op in OPERATORS:
        proc = subprocess.run(["node", CLI, "score", run["logs"][op], "--operators", op], check=True, capture_output=True,
                              text=True, timeout=120)
        groups = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        assert len(groups) == 2 * 2, proc.stderr
        res = [g["results"][op] for g in groups]
        assert all(r.get("approximation") is None for r in res), res  # from the logits: not an estimate
        got = [x for r in res for x in r["rewards"]]
        assert got == pytest.approx(list(df["consensus_" + op]), abs=1e-5, rel=1e-6), op  # what TRL trained with
        assert got == pytest.approx(want[op], abs=1e-5), op  # the model's own forward pass
        # The trainer's advantages are the group-normalised rewards of all its reward functions; the
        # log's own rewards are the ones this reward function returned.
        logged = [r["reward"] for r in (json.loads(line) for f in sorted(glob.glob(os.path.join(run["logs"][op], "*.jsonl")))
                                         for line in open(f))]
        assert got == pytest.approx(logged, abs=1e-12), op
