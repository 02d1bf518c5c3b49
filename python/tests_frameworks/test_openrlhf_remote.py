"""OpenRLHF's own remote-reward path loads consensus_lens/openrlhf.py and rewards with it.

openrlhf 0.11.2 pins deepspeed and flash-attn (a CUDA build), so scripts/test-frameworks.sh
installs it with --no-deps; its `openrlhf.utils.agent` needs only aiohttp, torch, sympy and
pylatexenc of this stage's packages. `SingleTurnAgentExecutor(remote_rm_url=FILE.py)` loads the
file as OpenRLHF does, and `execute` — tokenize, generate, decode the query, call `reward_func`
in a thread — runs unchanged against a stand-in engine (the one part that needs a GPU: vLLM);
the engine's `generate_responses` gathers a prompt's samples the same way here.
"""
import asyncio
import json
import os
import subprocess
import types

import pytest

agent = pytest.importorskip("openrlhf.utils.agent")  # installed by scripts/test-frameworks.sh
torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")
HOOK = os.path.join(ROOT, "python", "consensus_lens", "openrlhf.py")
N = 4


class CharTokenizer:
    """What `execute` calls of a Hugging Face tokenizer: a character per token."""

    def __call__(self, text, add_special_tokens=False, return_tensors="pt"):
        return {"input_ids": torch.tensor([[ord(c) for c in text]])}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids)


class Engine:
    """vLLM's part of `RolloutRayActor`: `generate` answers each prompt's samples in turn."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = {}

    async def generate(self, prompt_token_ids, params, multi_modal_data=None):
        prompt = "".join(chr(i) for i in prompt_token_ids)
        k = self.calls.get(prompt, 0)
        self.calls[prompt] = k + 1
        await asyncio.sleep(0.01 * ((k * 7) % 5))  # samples finish out of order
        text = "Let me see... \\boxed{%s}" % self.answers[prompt][k]
        out = types.SimpleNamespace(token_ids=[ord(c) for c in text], finish_reason="stop", logprobs=None)
        return types.SimpleNamespace(outputs=[out])


def test_openrlhf_loads_the_hook_and_gets_the_rewards_score_computes_on_its_log(tmp_path, monkeypatch):
    log = tmp_path / "consensus"
    monkeypatch.setenv("CONSENSUS_LENS_OPERATOR", "majority")
    monkeypatch.setenv("CONSENSUS_LENS_N_SAMPLES", str(N))
    monkeypatch.setenv("CONSENSUS_LENS_LOG_DIR", str(log))
    monkeypatch.setenv("CONSENSUS_LENS_WORKER", "node %s" % CLI)
    answers = {"Q: 3+4? ": ["7", "7", "8", "7"], "Q: 2*6? ": ["12", "11", "11", "12"], "Q: 9-1? ": ["8", "8", "8", "6"]}
    engine = Engine(answers)
    tok = CharTokenizer()
    params = types.SimpleNamespace(max_tokens=64, logprobs=None)

    async def run():
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=[HOOK])  # loads the file: spec_from_file_location("reward_func", …)
        assert executor.reward_func is not None and executor.reward_func.__module__ == "reward_func"
        # RolloutRayActor.generate_responses: a prompt's N samples gathered together; prompts side by side
        per_prompt = [asyncio.gather(*[executor.execute(prompt=p, label=answers[p][0], sampling_params=params, max_length=256,
                                                        hf_tokenizer=tok, llm_engine=engine) for _ in range(N)]) for p in answers]
        return executor, await asyncio.gather(*per_prompt)

    executor, outs = asyncio.run(run())
    mod = executor.reward_func.__globals__
    mod["_default"].close()
    for p, samples in zip(answers, outs):
        for s in samples:
            assert s["prompt"] == p and s["reward"] is not None, s
    got = {p: sorted(float(torch.as_tensor(s["reward"]).flatten()[0]) for s in samples) for p, samples in zip(answers, outs)}
    # the log, scored by the command line
    res = subprocess.run(["node", CLI, "score", str(log), "--operators", "majority"], check=True, capture_output=True, text=True, timeout=120)
    groups = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert len(groups) == 3 and all(g["step"] == 1 for g in groups)
    recs = [json.loads(line) for f in sorted(os.listdir(log)) for line in open(log / f)]
    for g, rec in zip(groups, recs):
        assert g["question_id"] == rec["question_id"]
        assert got[rec["prompt"]] == sorted(g["results"]["majority"]["rewards"])
        assert rec["ground_truth"] == answers[rec["prompt"]][0]
        assert sorted(r["response"] for r in rec["rollouts"]) == sorted("Let me see... \\boxed{%s}" % a for a in answers[rec["prompt"]])
    # the vote: 7, 12 (first of the tie 12/11 by first member), 8
    assert got == {"Q: 3+4? ": [0.0, 1.0, 1.0, 1.0], "Q: 2*6? ": [0.0, 0.0, 1.0, 1.0], "Q: 9-1? ": [0.0, 1.0, 1.0, 1.0]}
