#!/usr/bin/env python3
"""Writes the prime-rl and SkyRL log fixtures under test/fixtures/logs/writers/ with each framework's
own writer code (docs/log-formats.md names the versions):

  skyrl/      skyrl-train 0.3.1 (PyPI) `skyrl_train.utils.trainer_utils.dump_per_dataset_eval_results`
              and `sanitize_data_source`: export/dumped_evals/global_step_<N>_evals/<data_source>.jsonl
              and aggregated_results.jsonl. The package's module imports ray, torch and transformers
              at the top, so the two functions are taken from the installed file's syntax tree and run
              as they are (`json`, `Path` and loguru's `logger` are what they use); the tokenizer is a
              byte-level stand-in (`decode` of UTF-8 byte ids).
  slime/      dump/rollout_data/<id>.pt as slime's save_debug_rollout_data writes it (torch.save of
              Sample.to_dict() dicts; slime is not on PyPI), and native/: those converted by
              consensus_lens.convert (needs torch).
  miles/      dump/trajectory/<id>.jsonl and eval_<id>.jsonl as miles' save_debug_trajectory_data
              writes them (written from the code read: miles is not on PyPI), and
              dump/dashboard_columns/rollout_<id>.parquet by save_dashboard_columns' code with the
              real polars 2.1.0 (pip install polars==2.1.0).
  trackio/    db/cl-fixture.db written by the real trackio 0.43.0 (traces as slime's --use-trackio
              logs them), and native/: converted by consensus_lens.convert.
  prime-rl/   prime-rl is not on PyPI: its writer at PrimeIntellect-ai/prime-rl b194a6ed2 is
              `save_rollouts` (src/prime_rl/orchestrator/vf_utils.py), which json.dumps each
              `vf.RolloutOutput` with `default=make_serializable` into
              rollouts/step_<N>/train_rollouts.jsonl and eval_rollouts.jsonl. The records are made
              by verifiers' own `state_to_output` (PyPI verifiers 0.1.14, run from the installed
              package) from States as prime-rl's environments leave them (state columns
              `trajectory` with `tokens.completion_logprobs` and `sampling_args`); `save_rollouts`'
              four lines are reproduced from that commit.

Run: python3.12 -m venv /tmp/v && /tmp/v/bin/pip install --no-deps skyrl-train==0.3.1 &&
/tmp/v/bin/pip install verifiers==0.1.14 loguru && /tmp/v/bin/python scripts/make-framework-fixtures.py
Deterministic (seeded).
"""
import ast
import importlib.util
import json
import os
import random
import shutil
import sys
from pathlib import Path

# CONSENSUS_LENS_FIXTURES_OUT: another folder (the framework stage writes them again there and compares)
ROOT = Path(os.environ.get("CONSENSUS_LENS_FIXTURES_OUT") or Path(__file__).resolve().parent.parent / "test" / "fixtures" / "logs" / "writers")
rng = random.Random(20261206)

QUESTIONS = [
    ("What is 7 × 8?", "56"),
    ("Résous x + 3 = 10.", "7"),
    ("求 1+2+…+10 的和", "55"),
    ("Compute 2^10.", "1024"),
    ("What is 3/4 as a decimal?", "0.75"),
]


def answers_for(truth, n):
    """n sampled answers: mostly the truth, some wrong ones (a contested vote)."""
    out = []
    for i in range(n):
        r = rng.random()
        out.append(truth if r < 0.55 else str(int(rng.random() * 20)) if r < 0.9 else "")
    return out


def installed_functions(module, names):
    """The named top-level functions of an installed module's file, compiled without importing it."""
    spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None:
        raise SystemExit(f"{module} is not installed")
    path = Path(spec.submodule_search_locations[0]).joinpath(*module.split(".")[1:]).with_suffix(".py")
    tree = ast.parse(path.read_text(), str(path))
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    if {n.name for n in body} != set(names):
        raise SystemExit(f"{path}: missing {set(names) - {n.name for n in body}}")
    from typing import Any, Dict, List

    from loguru import logger

    ns = {"json": json, "Path": Path, "logger": logger, "List": List, "Dict": Dict, "Any": Any, "AutoTokenizer": object, "GeneratorOutput": dict}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), ns)
    return ns


class ByteTokenizer:
    """A byte-level tokenizer: token ids are UTF-8 bytes."""

    def encode(self, text):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return bytes(ids).decode("utf-8", errors="replace")


def make_skyrl():
    rng.seed(20261206)
    out = ROOT / "skyrl"
    shutil.rmtree(out, ignore_errors=True)
    fns = installed_functions("skyrl_train.utils.trainer_utils", ["sanitize_data_source", "dump_per_dataset_eval_results"])
    tok = ByteTokenizer()
    n = 4  # eval_n_samples_per_prompt
    for step in (0, 5):
        prompt_ids, response_ids, rewards, stops, sources, envs, extras = [], [], [], [], [], [], []
        for qi, (q, truth) in enumerate(QUESTIONS):
            source = "openai/gsm8k" if qi < 3 else "aime"
            chat = f"<|im_start|>user\n{q} Put the answer in \\boxed{{}}.<|im_end|>\n<|im_start|>assistant\n"
            for a in answers_for(truth, n):
                prompt_ids.append(tok.encode(chat))
                response_ids.append(tok.encode(f"Let me think step by step… so the answer is \\boxed{{{a}}}.<|im_end|>"))
                rewards.append(1.0 if a == truth else 0.0)
                stops.append("stop")
                sources.append(source)
                envs.append("gsm8k" if qi < 3 else "aime")
                extras.append({"reward_spec": {"method": "rule", "ground_truth": truth}, "extra_info": {"index": qi}})
        # a per-token reward list (SkyRL's token-level rewards): its sum is the sequence reward
        rewards[-1] = [0.0] * 3 + [float(rewards[-1])]
        d = out / "export" / "dumped_evals" / f"global_step_{step}_evals"
        d.mkdir(parents=True, exist_ok=True)
        gen = {"prompt_token_ids": prompt_ids, "response_ids": response_ids, "rewards": rewards, "stop_reasons": stops}
        fns["dump_per_dataset_eval_results"](d, tok, gen, sources, envs, extras, {f"eval/all/pass_at_{n}": 1.0, "eval/all/avg_score": 0.5})


def make_prime_rl():
    rng.seed(20261206)
    out = ROOT / "prime-rl"
    shutil.rmtree(out, ignore_errors=True)
    from verifiers.utils.save_utils import make_serializable, state_to_output

    def save_rollouts(rollouts, path):
        # prime-rl b194a6ed2 src/prime_rl/orchestrator/vf_utils.py save_rollouts
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            for rollout in rollouts:
                json.dump(rollout, f, default=make_serializable)
                f.write("\n")

    tok = ByteTokenizer()
    n = 4  # rollouts_per_example
    for step in (1, 2, 3):
        for kind in ("train", "eval"):
            if kind == "eval" and step != 2:
                continue
            outputs = []
            for ex, (q, truth) in enumerate(QUESTIONS):
                prompt = [{"role": "system", "content": "Answer in \\boxed{}."}, {"role": "user", "content": q}]
                for a in answers_for(truth, n):
                    text = f"Reasoning… the answer is \\boxed{{{a}}}."
                    completion = [{"role": "assistant", "content": text}]
                    ids = tok.encode(text)
                    lps = [round(-rng.random() * (0.2 if a == truth else 1.5), 4) for _ in ids]
                    reward = 1.0 if a == truth else 0.0
                    state = {
                        "example_id": ex,
                        "task": "math",
                        "prompt": prompt,
                        "completion": completion,
                        "answer": truth,
                        "info": {},
                        "reward": reward,
                        "metrics": {"correct_answer": reward, "num_turns": 1.0},
                        "timing": {"start_time": 0.0, "generation_ms": 12.0, "scoring_ms": 1.0, "total_ms": 13.0},
                        "is_completed": True,
                        "is_truncated": False,
                        "stop_condition": "has_final_env_response",
                        "sampling_args": {"temperature": 1.0, "max_tokens": 512, "logprobs": True},
                        "trajectory": [
                            {
                                "prompt": prompt,
                                "completion": completion,
                                "response": None,
                                "tokens": {
                                    "prompt_ids": tok.encode(q),
                                    "prompt_mask": [0] * len(tok.encode(q)),
                                    "completion_ids": ids,
                                    "completion_mask": [1] * len(ids),
                                    "completion_logprobs": lps,
                                    "overlong_prompt": False,
                                    "is_truncated": False,
                                },
                                "reward": None,
                                "advantage": None,
                                "is_truncated": False,
                                "trajectory_id": f"t{step}-{ex}-{len(outputs)}",
                                "extras": {},
                            }
                        ],
                    }
                    outputs.append(state_to_output(state, ["trajectory", "sampling_args"]))
            save_rollouts(outputs, out / "outputs" / "rollouts" / f"step_{step}" / f"{kind}_rollouts.jsonl")


def make_slime():
    """slime / miles --dump-details: rollout_data/{rollout_id}.pt as slime's save_debug_rollout_data
    writes it (THUDM/slime 624b824a slime/observability/rollout_data_utils.py:
    torch.save({"rollout_id", "samples": [Sample.to_dict()]}); Sample.to_dict is the dataclass's
    __dict__ with status as its value and spec_info / prefix_cache_info as dicts, slime/utils/types.py),
    then converted by consensus_lens.convert into native/."""
    import torch

    rng.seed(20261206)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    from consensus_lens.convert import convert_slime

    out = ROOT / "slime"
    shutil.rmtree(out, ignore_errors=True)
    d = out / "dump" / "rollout_data"
    d.mkdir(parents=True)
    tok = ByteTokenizer()
    n = 4  # n_samples_per_prompt
    paths = []
    for rollout_id in (0, 1):
        samples = []
        for gi, (q, truth) in enumerate(QUESTIONS[:3]):
            for a in answers_for(truth, n):
                response = f"Step by step… \\boxed{{{a}}}"
                prompt_ids, resp_ids = tok.encode(q), tok.encode(response)
                samples.append({
                    "group_index": gi, "index": len(samples), "rollout_id": rollout_id,
                    "prompt": [{"role": "user", "content": q}], "tokens": prompt_ids + resp_ids,
                    "multimodal_inputs": None, "multimodal_train_inputs": None, "multimodal_train_input_id": None,
                    "apply_chat_template_kwargs": {}, "response": response, "response_length": len(resp_ids),
                    "label": truth, "reward": 1.0 if a == truth else 0.0, "loss_mask": [1] * len(resp_ids),
                    "weight_versions": ["1"], "rollout_log_probs": [round(-rng.random() * (0.3 if a == truth else 1.2), 4) for _ in resp_ids],
                    "rollout_top_p_token_ids": None, "rollout_top_p_token_offsets": None, "rollout_routed_experts": None,
                    "remove_sample": False, "teacher_log_probs": None, "status": "completed",
                    "metadata": {}, "generate_function_path": None, "custom_rm_path": None, "train_metadata": None,
                    "session_id": None, "non_generation_time": 0.0,
                    "spec_info": {"spec_accept_token_num": 0, "spec_draft_token_num": 0, "spec_verify_ct": 0, "completion_token_num": 0},
                    "prefix_cache_info": {"cached_tokens": 0, "total_prompt_tokens": 0},
                })
        path = d / f"{rollout_id}.pt"
        torch.save({"rollout_id": rollout_id, "samples": samples}, path)
        paths.append(str(path))
    convert_slime(paths, str(out / "native"))


def make_miles():
    """miles --dump-details trajectory/{rollout_id}.jsonl (radixark/miles 31f1ca96,
    miles/ray/rollout/debug_data.py): `trajectory_rows` keeps the samples whose metadata holds
    "messages" (the multi-turn path, miles/rollout/generate_hub/multi_turn.py: the prompt messages,
    then each assistant turn and the tools' replies) and `save_debug_trajectory_data` writes them,
    one json.dumps(row, separators=(",", ":")) line each. miles is not on PyPI: written from the code
    read, not run."""
    rng.seed(20261206)
    out = ROOT / "miles"
    shutil.rmtree(out, ignore_errors=True)
    n = 4
    for rollout_id, evaluation in ((0, False), (1, False), (1, True)):
        rows = []
        index = 0
        for gi, (q, truth) in enumerate(QUESTIONS[:3]):
            prompt = [{"role": "system", "content": "Use the calculator tool."}, {"role": "user", "content": q}]
            for a in answers_for(truth, n):
                messages = list(prompt)
                messages.append({"role": "assistant", "content": '<tool_call>{"name": "calc", "arguments": {"q": "%s"}}</tool_call>' % q})
                messages.append({"role": "tool", "content": "result: %s" % truth})
                messages.append({"role": "assistant", "content": "The tool says %s, so \\boxed{%s}." % (truth, a)})
                rows.append(dict(sample_index=index, group_index=gi, status="completed",
                                 reward=1.0 if a == truth else 0.0, prompt=prompt, messages=messages))
                index += 1
        path = out / "dump" / "trajectory" / ("%s%d.jsonl" % ("eval_" if evaluation else "", rollout_id))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            f.write("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
        save_dashboard_columns(rows, out / "dump" / "dashboard_columns" / ("rollout_%s%d.parquet" % ("eval_" if evaluation else "", rollout_id)))


def save_dashboard_columns(rows, path):
    """miles 31f1ca96 miles/ray/rollout/debug_data.py `save_dashboard_columns`, run with the real
    polars (2.1.0): one row per sample, its schema, `write_parquet(tmp, row_group_size=8)`. The
    samples' tokens, loss mask and log-probs are made up here (seeded; the tool's reply is masked
    out, as the multi-turn path masks it), one token per character of each turn."""
    import polars as pl

    lp_rng = random.Random(rollout_seed(path.name))
    samples = []
    for row in rows:
        prompt_len = sum(len(m["content"]) for m in row["prompt"])
        tokens, mask, lps = [], [], []
        for m in row["messages"][len(row["prompt"]):]:
            n = len(m["content"])
            tokens += [ord(c) % 50000 for c in m["content"]]
            policy = m["role"] == "assistant"
            mask += [1 if policy else 0] * n
            lps += [round(-lp_rng.expovariate(4.0), 4) if policy else 0.0 for _ in range(n)]
        samples.append(dict(index=row["sample_index"], response_length=len(tokens), tokens=[ord(c) % 50000 for c in "x" * prompt_len] + tokens,
                            loss_mask=mask, rollout_log_probs=lps))
    schema = dict(
        sample_index=pl.Int32,
        response_length=pl.Int32,
        total_length=pl.Int32,
        tokens=pl.List(pl.Int32),
        loss_mask=pl.List(pl.Int8),
        rollout_log_probs=pl.List(pl.Float32),
    )
    frame = pl.DataFrame(
        [
            dict(
                sample_index=s["index"],
                response_length=s["response_length"],
                total_length=len(s["tokens"]),
                tokens=list(s["tokens"]),
                loss_mask=s["loss_mask"],
                rollout_log_probs=s["rollout_log_probs"],
            )
            for s in samples
        ],
        schema=schema,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    frame.write_parquet(tmp, row_group_size=8)
    tmp.replace(path)


def rollout_seed(name):
    return sum(map(ord, name))


def make_trackio():
    """Trackio's project database, written by the real trackio (PyPI 0.43.0): traces logged as
    slime's --use-trackio logs them (THUDM/slime b2b3cfa5 slime/utils/trackio_utils.py
    `log_rollout_traces`: `{split}/trajectories`, the first trackio_max_traces_per_rollout samples,
    metadata split, rollout_id, step, sample_index, group_index, status, reward, ...), then
    converted by consensus_lens.convert into native/."""
    import tempfile

    rng.seed(20261206)
    out = ROOT / "trackio"
    shutil.rmtree(out, ignore_errors=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    from consensus_lens.convert import convert_trackio

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACKIO_DIR"] = tmp  # read when trackio is imported
        import trackio

        trackio.init(project="cl-fixture", name="slime-rank-0")
        n, max_traces = 4, 10  # trackio_max_traces_per_rollout: the batch's 12 samples are cut to 10
        for rollout_id in (0, 1):
            traces = []
            index = 0
            for gi, (q, truth) in enumerate(QUESTIONS[:3]):
                for a in answers_for(truth, n):
                    response = f"Let me compute… \\boxed{{{a}}}"
                    traces.append(trackio.Trace(
                        messages=[{"role": "user", "content": q}, {"role": "assistant", "content": response}],
                        metadata={"split": "train", "rollout_id": rollout_id, "step": rollout_id, "sample_index": index,
                                  "group_index": gi, "status": "completed", "reward": 1.0 if a == truth else 0.0,
                                  "response_length": len(response), "effective_response_length": len(response),
                                  "metadata": {}, "trace": None, "trackio_max_traces_per_rollout": max_traces},
                    ))
                    index += 1
            trackio.log({"train/trajectories": traces[:max_traces]}, step=rollout_id)
        trackio.finish()
        (out / "db").mkdir(parents=True)
        shutil.copy(Path(tmp) / "cl-fixture.db", out / "db" / "cl-fixture.db")
        # converted from the copy: a read-only open of a WAL database makes -wal / -shm files beside it
        convert_trackio(str(Path(tmp) / "cl-fixture.db"), str(out / "native"))


if __name__ == "__main__":
    which = sys.argv[1:] or ["skyrl", "prime-rl", "slime", "miles", "trackio"]
    if "skyrl" in which:
        make_skyrl()
    if "prime-rl" in which:
        make_prime_rl()
    if "slime" in which:
        make_slime()
    if "miles" in which:
        make_miles()
    if "trackio" in which:
        make_trackio()
