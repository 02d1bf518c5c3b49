"""A real TRL GRPOTrainer, on the CPU, rewarded by consensus_lens.trl.consensus_reward.

The model and tokenizer are built here (tiny.py); the answers are real through TRL's public
``rollout_func`` hook, which draws them from a known distribution and returns their log-probs.
Then the completions parquet the trainer wrote is read back by ``consensus-lens score``.
"""
import glob
import json
import os
import signal
import subprocess
import threading

import pandas as pd
import pytest
import trl
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from consensus_lens import RunLogger
from consensus_lens.reward import RewardWorker, WorkerDied
from consensus_lens.trl import GroupError, consensus_reward, prompt_id, with_logprobs
from tiny import QUESTIONS, KnownAnswers, tiny_model, tiny_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")
N = 4  # num_generations


def test_pinned_version():
    assert trl.__version__ == "1.16.0"


def dataset():
    return Dataset.from_list([{"prompt": q["prompt"], "answer": q["answer"]} for q in QUESTIONS])


def config(out, steps=3, **kw):
    return GRPOConfig(
        output_dir=out, max_steps=steps, per_device_train_batch_size=2 * N, num_generations=N,
        learning_rate=1e-3, logging_steps=1, log_completions=True, num_completions_to_print=0,
        report_to=[], save_strategy="no", use_cpu=True, bf16=False, beta=0.0, max_completion_length=32,
        seed=0, disable_tqdm=True, dataloader_num_workers=0, **kw)


def score(path, *args):
    out = subprocess.run(["node", CLI, "score", path, *args], check=True, capture_output=True, text=True, timeout=120)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def log_records(run):
    recs = []
    for f in sorted(glob.glob(os.path.join(run, "*.jsonl"))):
        with open(f) as fh:
            recs.extend(json.loads(line) for line in fh)
    return recs


@pytest.fixture(scope="module")
def majority_run(tmp_path_factory):
    """Three steps with majority; the reward worker is killed by SIGKILL in the middle of step 2
    (after the roll-outs, before the rewards): the client restarts it and re-sends the step."""
    tmp = tmp_path_factory.mktemp("trl")
    out, log = str(tmp / "trl"), str(tmp / "consensus")
    tok = tiny_tokenizer()
    reward = consensus_reward("majority", log_dir=log)
    killed = []

    def kill_in_step_2(call):
        if call == 2:
            pid = reward.worker.pid
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    rollouts = KnownAnswers(tok, seed=1, before_return=kill_in_step_2)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(out), train_dataset=dataset(),
                          processing_class=tok, rollout_func=rollouts)
    trainer.train()
    trainer.save_state()  # trainer_state.json: names the reward functions for the reader
    stats = reward.logger.close()
    reward.worker.close()
    return {"out": out, "log": log, "reward": reward, "rollouts": rollouts, "killed": killed, "stats": stats, "trainer": trainer}


def parquet_rows(out):
    files = sorted(glob.glob(os.path.join(out, "completions", "**", "*.parquet"), recursive=True))
    assert files, "the trainer wrote no completions table"
    return files, pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def test_rewards_of_score_on_trls_table_equal_the_logged_ones(majority_run):
    files, df = parquet_rows(majority_run["out"])
    assert [os.path.basename(f) for f in files] == ["completions_00001.parquet", "completions_00002.parquet", "completions_00003.parquet"]
    # The completions are the roll-out function's: real answers, not random tokens.
    texts = [t for c in majority_run["rollouts"].calls for t in c["texts"]]
    assert list(df["completion"]) == texts
    groups = score(majority_run["out"], "--operators", "majority")
    assert len(groups) == 3 * 2
    got = [r for g in groups for r in g["results"]["majority"]["rewards"]]
    assert got == list(df["consensus_majority"])  # exactly: majority rewards are 0/1
    assert sorted({g["step"] for g in groups}) == [1, 2, 3]
    assert [g["step"] for g in groups] == [s for s in df["step"][::N]]
    assert not any(g.get("reward_mismatch", {}).get("indices") for g in groups)


def test_our_log_and_trls_table_name_the_same_steps_and_questions(majority_run):
    _, df = parquet_rows(majority_run["out"])
    recs = log_records(majority_run["log"])
    assert sorted(os.path.basename(f) for f in glob.glob(os.path.join(majority_run["log"], "*.jsonl"))) == [
        "step_000001.rank0.jsonl", "step_000002.rank0.jsonl", "step_000003.rank0.jsonl"]
    assert [r["step"] for r in recs] == list(df["step"])
    assert [r["question_id"] for r in recs] == [prompt_id(p) for p in df["prompt"]]
    assert [r["reward"] for r in recs] == list(df["consensus_majority"])
    table = score(majority_run["out"], "--operators", "majority")
    ours = score(majority_run["log"], "--operators", "majority")
    assert [(g["step"], g["question_id"]) for g in table] == [(g["step"], g["question_id"]) for g in ours]
    # The known answer distribution's log-probs reached the log through rollout_func? Not here
    # (no with_logprobs): the log says nothing rather than a made-up confidence.
    assert all(r.get("mean_logprob") is None for r in recs)
    assert not any("token_logprobs" in r or "tokens" in r for r in recs)


def test_log_extra_columns_carry_label_and_gate(majority_run):
    _, df = parquet_rows(majority_run["out"])
    assert {"cl_label", "cl_gate", "cl_advantage"} <= set(df.columns)
    groups = score(majority_run["out"], "--operators", "majority")
    labels = [g["results"]["majority"]["label"] for g in groups for _ in range(N)]
    assert list(df["cl_label"]) == labels
    assert set(df["cl_gate"]) == {1.0}


def test_advantages_shown_are_the_trainers(majority_run):
    _, df = parquet_rows(majority_run["out"])
    groups = score(majority_run["out"], "--operators", "majority")
    shown = [a for g in groups for a in g["logged_advantages"]]
    assert max(abs(a - b) for a, b in zip(shown, df["advantage"])) <= 1e-9
    # The GRPO view defaults to TRL's formula, (r - mean) / (std + 1e-4) with the unbiased std;
    # TRL computes it in float32, so ours (float64) agrees to float32 precision.
    for g in groups:
        assert g["advantage_formula"] == {"framework": "trl", "eps": 1e-4, "std": "unbiased"}
        ours = g["results"]["majority"]["advantages"]
        assert max(abs(a - b) for a, b in zip(ours, g["logged_advantages"])) < 1e-6


def test_killed_worker_is_restarted_and_the_step_rescored(majority_run):
    assert len(majority_run["killed"]) == 1
    assert majority_run["reward"].worker.restarts == 1
    _, df = parquet_rows(majority_run["out"])
    step2 = df[df["step"] == 2]
    assert len(step2) == 2 * N and step2["consensus_majority"].notna().all()


def test_a_worker_that_cannot_come_back_fails_the_step_loudly(tmp_path):
    tok = tiny_tokenizer()
    worker = RewardWorker(operator="majority", max_restarts=0)
    reward = consensus_reward("majority", worker=worker)

    def kill(call):
        if call == 2:
            os.kill(worker.pid, signal.SIGKILL)

    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(str(tmp_path), steps=2),
                          train_dataset=dataset(), processing_class=tok, rollout_func=KnownAnswers(tok, before_return=kill))
    with pytest.raises(WorkerDied, match="died"):
        trainer.train()
    assert trainer.state.global_step == 1


def test_num_generations_not_the_trainers_is_refused(tmp_path):
    tok = tiny_tokenizer()
    with RewardWorker(operator="majority") as worker:
        reward = consensus_reward("majority", worker=worker, num_generations=3)
        trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(str(tmp_path), steps=1),
                              train_dataset=dataset(), processing_class=tok, rollout_func=KnownAnswers(tok))
        with pytest.raises(GroupError, match=r"num_generations=3"):
            trainer.train()
        assert worker.requests == 0


def test_core_with_confidence_from_rollout_func(tmp_path):
    tok = tiny_tokenizer()
    out, log = str(tmp_path / "trl"), str(tmp_path / "consensus")
    reward = consensus_reward("core", log_dir=log)
    rollouts = KnownAnswers(tok, seed=2)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(out, steps=2), train_dataset=dataset(),
                          processing_class=tok, rollout_func=with_logprobs(rollouts))
    trainer.train()
    reward.logger.close()
    reward.worker.close()
    _, df = parquet_rows(out)
    recs = log_records(log)
    # The confidence logged is the mean of the log-probs rollout_func returned.
    want = [sum(lp) / len(lp) for c in rollouts.calls for lp in c["logprobs"]]
    assert max(abs(r["mean_logprob"] - w) for r, w in zip(recs, want)) < 1e-12
    # score on our log (which has the confidences) gives the rewards TRL trained with (TRL keeps float32).
    groups = score(log, "--operators", "core")
    got = [r for g in groups for r in g["results"]["core"]["rewards"]]
    assert len(got) == len(df)
    assert max(abs(a - b) for a, b in zip(got, df["consensus_core"])) < 1e-6
    assert {g["results"]["core"].get("confidence") for g in groups} == {"used"}


def test_token_logprobs_and_their_text_reach_the_log(tmp_path):
    """Confidence on the text: the log keeps the sampler's per-token log-probs and each token's
    text, decoded from TRL's completion_ids by the trainer's processing_class, token for token."""
    tok = tiny_tokenizer()
    out, log = str(tmp_path / "trl"), str(tmp_path / "consensus")
    reward = consensus_reward("majority", log_dir=log)
    rollouts = KnownAnswers(tok, seed=3)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(out, steps=2), train_dataset=dataset(),
                          processing_class=tok, rollout_func=with_logprobs(rollouts))
    trainer.train()
    reward.logger.close()
    reward.worker.close()
    recs = log_records(log)
    want = [lp for c in rollouts.calls for lp in c["logprobs"]]
    texts = [t for c in rollouts.calls for t in c["texts"]]
    assert len(recs) == len(want) == 2 * 2 * N
    for r, lp, text in zip(recs, want, texts):
        assert r["token_logprobs"] == lp
        assert r["response"] == text
        # One string per log-prob, laid end to end they are the text (the eos token is "").
        assert len(r["tokens"]) == len(lp) and "".join(r["tokens"]) == text and r["tokens"][-1] == ""
    # token_logprobs=False: the mean only.
    log2 = str(tmp_path / "mean-only")
    reward2 = consensus_reward("majority", log_dir=log2, token_logprobs=False)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward2], args=config(str(tmp_path / "trl2"), steps=1),
                          train_dataset=dataset(), processing_class=tok, rollout_func=with_logprobs(KnownAnswers(tok, seed=3)))
    trainer.train()
    reward2.logger.close()
    reward2.worker.close()
    recs2 = log_records(log2)
    assert recs2 and all("tokens" not in r and "token_logprobs" not in r and r["mean_logprob"] is not None for r in recs2)


def test_logging_never_blocks_the_trainer(tmp_path):
    """The logger's writer is stuck (a disk that never answers): training still finishes, the
    steps that do not fit the queue are dropped and counted."""
    tok = tiny_tokenizer()
    release = threading.Event()
    with RewardWorker(operator="majority") as worker:
        lg = RunLogger(str(tmp_path / "log"), max_pending_steps=1, file_template="step_{step:06d}.rank{rank}.jsonl", records="rollout")
        reward = consensus_reward("majority", worker=worker, logger=lg)
        real_write = lg._write_step

        def stuck(step, records):
            release.wait()
            return real_write(step, records)

        lg._write_step = stuck
        trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(str(tmp_path / "trl"), steps=3),
                              train_dataset=dataset(), processing_class=tok, rollout_func=KnownAnswers(tok))
        trainer.train()
        assert trainer.state.global_step == 3
        s = lg.stats()
        assert s["steps_written"] == 0 and s["steps_dropped"] == 1  # one in the writer, one queued, one dropped
        release.set()
        s = lg.close()
        assert s["steps_written"] == 2


def test_the_table_and_our_log_in_one_output_dir_are_one_run(tmp_path):
    """One run, two logs: our log inside TRL's output_dir; score reads them as one run — one group
    per step and prompt, TRL's logged advantages on our log's roll-outs beside its confidence."""
    tok = tiny_tokenizer()
    out = str(tmp_path / "run")
    reward = consensus_reward("core", log_dir=os.path.join(out, "consensus"))
    rollouts = KnownAnswers(tok, seed=5)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=config(out, steps=2), train_dataset=dataset(),
                          processing_class=tok, rollout_func=with_logprobs(rollouts))
    trainer.train()
    trainer.save_state()
    reward.logger.close()
    reward.worker.close()
    _, df = parquet_rows(out)
    proc = subprocess.run(["node", CLI, "score", out, "--operators", "core"], check=True, capture_output=True, text=True, timeout=120)
    groups = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert "are one run: their groups are joined by step and prompt" in proc.stderr
    assert "TRL's table and the log" not in proc.stderr  # no group left unjoined
    assert len(groups) == len(df) // N == 2 * 2
    assert [(g["step"], g["question_id"]) for g in groups] == [(s, prompt_id(p)) for s, p in zip(df["step"][::N], df["prompt"][::N])]
    assert all("run" not in g for g in groups)
    shown = [a for g in groups for a in g["logged_advantages"]]
    assert max(abs(a - b) for a, b in zip(shown, df["advantage"])) <= 1e-9
    # Our log's confidence reached the joined group: core used it, and its rewards are TRL's.
    assert {g["results"]["core"].get("confidence") for g in groups} == {"used"}
    got = [r for g in groups for r in g["results"]["core"]["rewards"]]
    assert max(abs(a - b) for a, b in zip(got, df["consensus_core"])) < 1e-6
