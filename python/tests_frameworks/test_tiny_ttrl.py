"""The tiny test-time RL experiment (experiments/tiny-ttrl) in its smoke mode: a model pretrained
here, TRL's GRPOTrainer sampling its own roll-outs, rewarded by consensus_reward and logged by the
project's logger. The logged per-token log-probs must be the model's: a forward pass of the
pretrained checkpoint over the same tokens gives them back (the first step's roll-outs are sampled
before any update)."""
import glob
import json
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXP = os.path.join(ROOT, "experiments", "tiny-ttrl")
CLI = os.path.join(ROOT, "dist", "cli.js")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("tiny-ttrl"))
    env = dict(os.environ, CONSENSUS_LENS_WORKER="node " + CLI, PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    subprocess.run([sys.executable, os.path.join(EXP, "experiment.py"), "--smoke", "--out", os.path.join(out, "runs"),
                    "--cache", os.path.join(out, "cache"), "--no-tables"], check=True, env=env, timeout=1500)
    with open(os.path.join(out, "runs", "manifest.json")) as f:
        man = json.load(f)
    return {"out": os.path.join(out, "runs"), "manifest": man, "ckpt": os.path.join(out, "runs", man["checkpoint"])}


def records(run_dir, step=None):
    recs = []
    for f in sorted(glob.glob(os.path.join(run_dir, "consensus", "*.jsonl"))):
        with open(f) as fh:
            recs.extend(json.loads(line) for line in fh if line.strip())
    return [r for r in recs if step is None or r["step"] == step]


def run_dirs(smoke):
    return {r["operator"]: os.path.join(smoke["out"], "runs", r["name"]) for r in smoke["manifest"]["runs"]}


def test_every_operator_logged_sixteen_sampled_rollouts_per_question_with_token_logprobs(smoke):
    dirs = run_dirs(smoke)
    assert set(dirs) == {"majority", "core"}
    cfg = smoke["manifest"]["ttrl"]
    for op, d in dirs.items():
        recs = records(d)
        steps = sorted({r["step"] for r in recs})
        assert steps == list(range(1, cfg["steps"] + 1))
        by_q = {}
        for r in recs:
            by_q.setdefault((r["step"], r["question_id"]), []).append(r)
            assert r["extra"]["operator"] == op
            assert len(r["token_logprobs"]) == len(r["tokens"]) >= 1
            assert abs(r["mean_logprob"] - sum(r["token_logprobs"]) / len(r["token_logprobs"])) < 1e-9
        assert all(len(g) == cfg["num_generations"] >= 16 for g in by_q.values())
        assert len(by_q) == cfg["steps"] * cfg["questions_per_step"]


def test_logged_token_logprobs_are_a_forward_pass_of_the_model_over_the_same_tokens(smoke):
    sys.path.insert(0, EXP)
    import lm

    model, tok = lm.load(smoke["ckpt"])
    model.eval()
    checked = 0
    for op, d in run_dirs(smoke).items():
        with open(os.path.join(d, "sampled_ids.jsonl")) as f:
            batch = next(json.loads(line) for line in f if json.loads(line)["step"] == 1)
        recs = records(d, step=1)
        assert len(recs) == len(batch["completion_ids"])
        for r, pids, cids in zip(recs, batch["prompt_ids"], batch["completion_ids"]):
            # The ids are the ones the log names: the prompt's, and the completion's token by token.
            assert pids == tok(r["prompt"])["input_ids"]
            assert [tok.decode([t], skip_special_tokens=True) for t in cids] == r["tokens"]
            assert len(cids) == len(r["token_logprobs"])
            with torch.no_grad():  # one sequence, no padding, no batching: independent of the logging path
                logits = model(input_ids=torch.tensor([pids + cids])).logits[0].double()
            logp = torch.log_softmax(logits, dim=-1)
            want = [logp[len(pids) - 1 + i, t].item() for i, t in enumerate(cids)]
            assert max(abs(a - b) for a, b in zip(want, r["token_logprobs"])) < 1e-4
            checked += 1
    assert checked >= 2 * 16


def test_same_seed_same_first_step_across_operators(smoke):
    dirs = run_dirs(smoke)
    firsts = [[(r["question_id"], r["response"], r["token_logprobs"]) for r in records(d, step=1)] for d in dirs.values()]
    assert firsts[0] == firsts[1]


def test_ground_truth_is_logged_but_not_the_reward(smoke, tmp_path):
    for op, d in run_dirs(smoke).items():
        recs = records(d)
        assert all(r.get("ground_truth") not in (None, "") for r in recs)
        # The same roll-outs without the truth, scored by the engine: the rewards the trainer got.
        blind = tmp_path / op
        blind.mkdir()
        with open(blind / "log.jsonl", "w") as f:
            for r in recs:
                f.write(json.dumps({k: v for k, v in r.items() if k != "ground_truth"}) + "\n")
        out = subprocess.run(["node", CLI, "score", str(blind), "--operators", op, "--no-cache"], capture_output=True,
                             text=True, timeout=300, check=True)
        scored = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        got = {(g["step"], g["question_id"]): g["results"][op]["rewards"] for g in scored}
        for (step, qid), rewards in got.items():
            logged = [r["reward"] for r in recs if r["step"] == step and r["question_id"] == qid]
            assert max(abs(a - b) for a, b in zip(rewards, logged)) < 1e-9
        assert len(got) == len({(r["step"], r["question_id"]) for r in recs})


def test_report_and_health_open_the_runs(smoke):
    for d in run_dirs(smoke).values():
        for cmd in ("report", "health"):
            out = subprocess.run(["node", CLI, cmd, os.path.join(d, "consensus"), "--json", "--no-cache"],
                                 capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stderr
            doc = json.loads(out.stdout)
            assert doc["groups"] if cmd == "health" else doc["total"]["groups"]
