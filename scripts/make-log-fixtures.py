#!/usr/bin/env python3
"""Writes the real-writer log fixtures under test/fixtures/logs/writers/, each made the way the
framework's own writer code makes it (docs/log-formats.md names the code read for each):

  verl-legacy/      verl ≤ 0.4 `_dump_generations`: rollout/<step>.jsonl (input, output, gts, score,
                    step, reward extra-info keys acc/pred; no uid), lines in `_balance_batch` order;
                    val/<step>.jsonl validation dumps (4 samples a prompt, a `reward` key, dataset order).
  verl-uid/         verl ≥ 0.5: the same plus `uid` (uuid4 per prompt), `gts` lists of accepted forms.
  verl-v1/          verl V1 `_dump_rollout_data`: uid `{uuid}_{session}_{output}`, sorted by it;
                    multi-turn sessions (every turn's output is a line; the last one is the roll-out).
  ttrl/             TTRL's fork of verl: its own `_dump_generations` without `gts`; `score` is the
                    reward against the majority label (apply_ttrl_gt); 32 of 64 votes a prompt dumped.
  ttrl-dapo/        a TTRL port to verl ≥ 0.6 with verl's math_dapo reward (score, acc, pred) and the
                    majority label in `gts`: nothing in the keys says TTRL.
  trl-0.2x/         TRL ≤ 0.2x `log()`: completions/completions_<step:05d>.parquet with step, prompt,
                    completion only (pandas + pyarrow when importable, else skipped).
  trl-1x-pandas<N>/ TRL ≥ 1.0 `log()`: completions/train/completions_<step:05d>.parquet with mode,
                    step, prompt, completion, the reward columns, the log_extra columns (sorted),
                    advantage; 1,024 rows (64 prompts × 16) a file; NaN rewards; trainer_state.json in
                    checkpoint-2/ with the `rewards/<name>/mean` metric keys.
  (wandb-trl/ and wandb-verl/ are written by the real wandb: scripts/make-wandb-fixtures.py.)
  nemo-rl/          NeMo RL `log_batched_dict_as_jsonl`: logs/exp_001/train_data_step<N>.jsonl and
                    val_data_step<N>.jsonl, a micro-batch of one per line (`[value]`), with
                    generation_logprobs over the padded sequence (0 at prompt and padding).

Deterministic (seeded). Run with any python3 for everything but parquet; the parquet fixtures need
pandas + pyarrow: `python -m venv v && v/bin/pip install pandas pyarrow && v/bin/python
scripts/make-log-fixtures.py` (the pandas major version names the folder: run it once with pandas 2
and once with pandas 3 to write both).
"""
import hashlib
import json
import math
import os
import random
import sys
import uuid

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "logs", "writers")
rng = random.Random(20260101)

QUESTIONS = [
    {"prompt": "What is 7 * 8?", "truth": "56", "wrong": ["54", "58"], "forms": ["56"]},
    {"prompt": "Simplify 6/8.", "truth": "\\frac{3}{4}", "wrong": ["0.7", "\\frac{2}{3}"], "forms": ["\\frac{3}{4}", "0.75"]},
    {"prompt": "How many primes are below 20?", "truth": "8", "wrong": ["7", "9"], "forms": ["8"]},
    {"prompt": "Compute 2^10.", "truth": "1024", "wrong": ["512", "2048"], "forms": ["1024"]},
    {"prompt": "What is the sum of the first 10 positive integers?", "truth": "55", "wrong": ["45", "50"], "forms": ["55"]},
    {"prompt": "Solve x + 3 = 10 for x.", "truth": "7", "wrong": ["13", "6"], "forms": ["7"]},
]


def new_uuid():
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def answer_for(q, p_correct):
    return q["truth"] if rng.random() < p_correct else rng.choice(q["wrong"])


def response(q, a, i):
    if i % 3 == 0:
        return f"Let me compute carefully. The result is \\boxed{{{a}}}."
    return f'Working step by step for "{q["prompt"]}" gives {a}, so the answer is \\boxed{{{a}}}.'


def write_jsonl_verl(path, entries):
    # verl: json.dumps(entry, ensure_ascii=False) per line, "\n".join(lines) + "\n", one open("w")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n")


def dump_generations(path, step, inputs, outputs, gts, scores, reward_extra_infos_dict):
    """verl RayPPOTrainer._dump_generations, as written."""
    n = len(inputs)
    base_data = {"input": inputs, "output": outputs, "gts": gts, "score": scores, "step": [step] * n}
    for k, v in reward_extra_infos_dict.items():
        if len(v) == n:
            base_data[k] = v
    entries = [{k: v[i] for k, v in base_data.items()} for i in range(n)]
    write_jsonl_verl(path, entries)


def balance_batch_order(lengths, k_partitions=4):
    """verl `_balance_batch`: get_seqlen_balanced_partitions(equal_size=True), then the batch is
    reordered partition by partition. The Karmarkar–Karp split is approximated by a greedy
    longest-first assignment to the lightest partition of equal size (the same kind of shuffle)."""
    n = len(lengths)
    size = n // k_partitions
    order = sorted(range(n), key=lambda i: -lengths[i])
    parts = [[] for _ in range(k_partitions)]
    load = [0] * k_partitions
    for i in order:
        j = min((p for p in range(k_partitions) if len(parts[p]) < size), key=lambda p: load[p])
        parts[j].append(i)
        load[j] += lengths[i]
    return [i for p in parts for i in sorted(p)]


def verl_train_step(step, n, with_uid, list_gts, p_correct):
    """One training step as RayPPOTrainer.fit builds it: uid per prompt, repeat(interleave=True),
    _balance_batch, reward fn extra infos (acc, pred as math_dapo / gsm8k return them)."""
    qs = QUESTIONS[:4]
    rows = []
    for q in qs:
        uid = new_uuid()
        for i in range(n):
            a = answer_for(q, p_correct)
            rows.append({"q": q, "uid": uid, "a": a, "out": response(q, a, i)})
    order = balance_batch_order([len(r["out"]) + 7 * k for k, r in enumerate(rows)])
    rows = [rows[i] for i in order]
    inputs = [r["q"]["prompt"] for r in rows]
    outputs = [r["out"] for r in rows]
    gts = [r["q"]["forms"] if list_gts else r["q"]["truth"] for r in rows]
    scores = [1.0 if r["a"] == r["q"]["truth"] else 0.0 for r in rows]
    extra = {"acc": [s == 1.0 for s in scores], "pred": [r["a"] for r in rows]}
    if with_uid:
        extra["uid"] = [r["uid"] for r in rows]
    return inputs, outputs, gts, scores, extra


def verl_val_step(step, n):
    """RayPPOTrainer._validate: dataset order, each prompt repeated val_kwargs.n times (interleaved),
    reward_extra_infos_dict gets "reward" (the scores) next to the reward fn's extras."""
    inputs, outputs, gts, scores = [], [], [], []
    extra = {"reward": [], "acc": [], "pred": []}
    for q in QUESTIONS:
        for i in range(n):
            a = answer_for(q, 0.7)
            inputs.append(q["prompt"])
            outputs.append(response(q, a, i))
            gts.append(q["truth"])
            s = 1.0 if a == q["truth"] else 0.0
            scores.append(s)
            extra["reward"].append(s)
            extra["acc"].append(s == 1.0)
            extra["pred"].append(a)
    return inputs, outputs, gts, scores, extra


def make_verl():
    for name, with_uid, list_gts in (("verl-legacy", False, False), ("verl-uid", True, True)):
        base = os.path.join(ROOT, name)
        for step in (1, 2, 3):
            ins, outs, gts, scores, extra = verl_train_step(step, 8, with_uid, list_gts, 0.4 + 0.15 * step)
            dump_generations(os.path.join(base, "rollout", f"{step}.jsonl"), step, ins, outs, gts, scores, extra)
        for step in (0, 2):
            ins, outs, gts, scores, extra = verl_val_step(step, 4)
            dump_generations(os.path.join(base, "val", f"{step}.jsonl"), step, ins, outs, gts, scores, extra)


def make_verl_v1():
    """verl V1 `_dump_rollout_data`: keys `{uuid}_{session}_{output}`, sorted by (uuid, int, int);
    reward_extra_infos_dict = {"uid": keys}. A multi-turn session writes one line per turn output."""
    base = os.path.join(ROOT, "verl-v1")
    for step in (1, 2):
        keyed = []
        for q in QUESTIONS[:3]:
            # a uuid with underscores on purpose: verl splits from the right
            u = new_uuid().replace("-", "_", 1)
            for session in range(4):
                turns = 1 + (session % 3)
                final = answer_for(q, 0.6)
                for out in range(turns):
                    a = final if out == turns - 1 else rng.choice(q["wrong"])
                    text = response(q, a, out) if out == turns - 1 else f"Turn {out}: calling the calculator... partial result {a}"
                    keyed.append((f"{u}_{session}_{out}", q, text, 1.0 if (out == turns - 1 and a == q["truth"]) else 0.0))
        rng.shuffle(keyed)  # arrival order from the replay buffer
        sort_keys = []
        for key, *_ in keyed:
            parts = key.rsplit("_", 2)
            sort_keys.append((parts[0], int(parts[1]), int(parts[2])))
        idx = sorted(range(len(keyed)), key=lambda i: sort_keys[i])
        keyed = [keyed[i] for i in idx]
        dump_generations(
            os.path.join(base, "rollout", f"{step}.jsonl"),
            step,
            [k[1]["prompt"] for k in keyed],
            [k[2] for k in keyed],
            [k[1]["truth"] for k in keyed],
            [k[3] for k in keyed],
            {"uid": [k[0] for k in keyed]},
        )


def majority(answers):
    counts = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return max(counts.items(), key=lambda kv: kv[1])[0]


def make_ttrl():
    """TTRL (PRIME-RL/TTRL, verl fork): apply_ttrl_gt votes over n_votes_per_prompt samples and writes
    the majority label into reward_model.ground_truth; select_top_k_per_prompt keeps the first
    n_samples_per_prompt. Its fit() dumps after apply_original_gt with its own
    `_dump_generations(inputs, outputs, scores, reward_extra_infos_dict, dump_path)`: no `gts` key,
    `score` is the pseudo-label reward, lines in _balance_batch order, no uid.
    The port (ttrl-dapo) runs on verl ≥ 0.6's own dump with verl's math_dapo reward (score ±1,
    acc, pred) and the majority label in reward_model.ground_truth, so `gts` is the vote."""
    for name, dapo in (("ttrl", False), ("ttrl-dapo", True)):
        base = os.path.join(ROOT, name)
        for step in (1, 2):
            rows = []
            # TTRL's defaults: n_votes_per_prompt 64, n_samples_per_prompt 32; the port votes over
            # the roll-outs it trains on (n = 8)
            n_votes, n_samples = (8, 8) if dapo else (64, 32)
            for q in QUESTIONS:
                votes = [answer_for(q, 0.45) for _ in range(n_votes)]
                label = majority(votes)
                uid = new_uuid()
                for i, a in enumerate(votes[:n_samples]):
                    rows.append({"q": q, "a": a, "label": label, "uid": uid, "out": response(q, a, i)})
            order = balance_batch_order([len(r["out"]) + 3 * k for k, r in enumerate(rows)])
            rows = [rows[i] for i in order]
            ins = [r["q"]["prompt"] for r in rows]
            outs = [r["out"] for r in rows]
            if dapo:
                scores = [1.0 if r["a"] == r["label"] else -1.0 for r in rows]
                extra = {"acc": [r["a"] == r["label"] for r in rows], "pred": [r["a"] for r in rows], "uid": [r["uid"] for r in rows]}
                dump_generations(os.path.join(base, "rollout", f"{step}.jsonl"), step, ins, outs, [r["label"] for r in rows], scores, extra)
            else:
                scores = [1.0 if r["a"] == r["label"] else 0.0 for r in rows]
                n = len(ins)
                base_data = {"input": ins, "output": outs, "score": scores, "step": [step] * n}
                write_jsonl_verl(os.path.join(base, "rollout", f"{step}.jsonl"), [{k: v[i] for k, v in base_data.items()} for i in range(n)])


def make_trl():
    try:
        import pandas as pd  # noqa: F401
    except ImportError:
        print("pandas/pyarrow not importable: TRL parquet fixtures skipped", file=sys.stderr)
        return
    import pandas as pd

    major = pd.__version__.split(".")[0]
    # TRL ≤ 0.2x: table = {"step", "prompt", "completion"}; pd.DataFrame(table).to_parquet(path)
    if major == "2":
        base = os.path.join(ROOT, "trl-0.2x", "completions")
        os.makedirs(base, exist_ok=True)
        for step in (1, 2):
            prompts, completions = [], []
            for q in QUESTIONS[:3]:
                for i in range(4):
                    prompts.append(q["prompt"])
                    completions.append(response(q, answer_for(q, 0.5), i))
            pd.DataFrame({"step": [step] * len(prompts), "prompt": prompts, "completion": completions}).to_parquet(
                os.path.join(base, f"completions_{step:05d}.parquet")
            )
    # TRL ≥ 1.0: {"mode", "step", "prompt", "completion", **rewards, **extra, "advantage"}
    out = os.path.join(ROOT, f"trl-1x-pandas{major}")
    base = os.path.join(out, "completions", "train")
    os.makedirs(base, exist_ok=True)
    reward_func_names = ["format_reward", "accuracy_reward"]  # the trainer's order, not sorted
    log_history = []
    for step in (1, 2):
        prompts, completions, acc, fmt = [], [], [], []
        extra = {"num_tokens": [], "entropy": []}  # log_extra columns, flushed in sorted() order
        for p in range(64):
            q = QUESTIONS[p % len(QUESTIONS)]
            prompt = f"{q['prompt']} (variant {p})"
            for i in range(16):
                a = answer_for(q, 0.5)
                text = response(q, a, i)
                prompts.append(prompt)
                completions.append(text)
                acc.append(float("nan") if (p == 5 and i == 3) else (1.0 if a == q["truth"] else 0.0))
                fmt.append(0.5)
                extra["num_tokens"].append(100 + len(text))
                extra["entropy"].append(round(0.2 + 0.01 * i, 4))
        rewards = {"format_reward": fmt, "accuracy_reward": acc}
        adv = []
        for g in range(0, len(prompts), 16):
            tot = [sum(v for v in (fmt[k], acc[k]) if not math.isnan(v)) for k in range(g, g + 16)]
            mean = sum(tot) / 16
            std = (sum((t - mean) ** 2 for t in tot) / 15) ** 0.5
            adv += [(t - mean) / (std + 1e-4) for t in tot]
        table = {
            "mode": ["train"] * len(prompts),
            "step": [step] * len(prompts),
            "prompt": prompts,
            "completion": completions,
            **{name: rewards[name] for name in reward_func_names},
            **{k: extra[k] for k in sorted(extra)},
            "advantage": adv,
        }
        pd.DataFrame(table).to_parquet(os.path.join(base, f"completions_{step:05d}.parquet"))
        log_history.append({"step": step, "reward": 1.0, **{f"rewards/{n}/mean": 0.5 for n in reward_func_names}, **{f"rewards/{n}/std": 0.1 for n in reward_func_names}})
    os.makedirs(os.path.join(out, "checkpoint-2"), exist_ok=True)
    with open(os.path.join(out, "checkpoint-2", "trainer_state.json"), "w") as f:
        json.dump({"global_step": 2, "log_history": log_history}, f, indent=2)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"model_type": "qwen2", "vocab_size": 151936}, f, indent=2)


def make_nemo():
    """NeMo RL grpo: log_data = {content, rewards, generation_logprobs, prev_logprobs, input_lengths}
    (newer: token_loss_mask); Logger.log_batched_dict_as_jsonl writes each micro-batch of one as
    json.dumps({**sample, "idx": i})."""
    base = os.path.join(ROOT, "nemo-rl", "logs", "exp_001")
    os.makedirs(base, exist_ok=True)
    for kind, steps, n in (("train", (1, 2), 8), ("val", (2,), 2)):
        for step in steps:
            lines = []
            i = 0
            for q in QUESTIONS[:4]:
                for j in range(n):  # repeat_interleave(num_generations_per_prompt)
                    a = answer_for(q, 0.5)
                    text = response(q, a, j)
                    prompt_len = 12
                    gen = [-(0.05 + 0.3 * ((k * 7 + j) % 5) / 5) for k in range(8 + j)]
                    pad = 4
                    lp = [0.0] * prompt_len + gen + [0.0] * pad
                    mask = [0] * prompt_len + [1] * len(gen) + [0] * pad
                    sample = {
                        "content": [[q["prompt"], text]],
                        "rewards": [1.0 if a == q["truth"] else 0.0],
                        "generation_logprobs": [lp],
                        "prev_logprobs": [[x * 1.01 for x in lp]],
                        "input_lengths": [prompt_len + len(gen)],
                    }
                    if step == 2:
                        sample["token_loss_mask"] = [mask]
                    lines.append(json.dumps({**sample, "idx": i}))
                    i += 1
            with open(os.path.join(base, f"{kind}_data_step{step}.jsonl"), "w") as f:
                for line in lines:
                    f.write(line + "\n")


if __name__ == "__main__":
    only = set(sys.argv[1:])
    steps = {"verl": make_verl, "verl-v1": make_verl_v1, "ttrl": make_ttrl, "trl": make_trl, "nemo": make_nemo}
    for name, fn in steps.items():
        if not only or name in only:
            rng.seed(f"{name}-20260101")
            fn()
    print(f"wrote {os.path.normpath(ROOT)}")
