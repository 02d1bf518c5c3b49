"""Pretraining from scratch, generation and per-token log-probs of the tiny experiment's model."""
import json
import os
import random
import time
from typing import Dict, List, Sequence

import task


def setup_torch(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True, warn_only=True)


def token_logprobs(model, prompt_ids: Sequence[Sequence[int]], completion_ids: Sequence[Sequence[int]],
                   pad_id: int, batch: int = 64) -> List[List[float]]:
    """Each completion token's log-probability under ``model`` given the prompt and the tokens before
    it (temperature 1, the sampling distribution): one forward pass over prompt + completion,
    right-padded (padding after a token never changes a causal model's view of it)."""
    import torch

    out: List[List[float]] = []
    with torch.no_grad():
        for lo in range(0, len(prompt_ids), batch):
            ps, cs = prompt_ids[lo:lo + batch], completion_ids[lo:lo + batch]
            seqs = [list(p) + list(c) for p, c in zip(ps, cs)]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for i, s in enumerate(seqs):
                ids[i, :len(s)] = torch.tensor(s)
                mask[i, :len(s)] = 1
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            for i, (p, c) in enumerate(zip(ps, cs)):
                pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
                out.append(logp[i, pos, torch.tensor(list(c), dtype=torch.long)].tolist())
    return out


def generate(model, tok, prompts: Sequence[str], *, sample: bool, max_new: int, batch: int = 256) -> List[str]:
    """Completions of equal-length prompts (no padding), greedy or sampled at temperature 1 with the
    whole distribution (top_k 0, top_p 1), as the TTRL trainer samples."""
    import torch

    texts: List[str] = []
    was = model.training
    model.eval()
    with torch.no_grad():
        for lo in range(0, len(prompts), batch):
            enc = tok(list(prompts[lo:lo + batch]), return_tensors="pt")
            kw = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0} if sample else {"do_sample": False}
            gen = model.generate(**enc, max_new_tokens=max_new, eos_token_id=tok.eos_token_id,
                                 pad_token_id=tok.pad_token_id, **kw)
            texts.extend(tok.decode(g[enc["input_ids"].shape[1]:], skip_special_tokens=True) for g in gen)
    model.train(was)
    return texts


def accuracy(model, tok, questions, *, sample: bool, max_new: int, repeats: int = 1) -> float:
    prompts = [task.prompt(q) for q in questions for _ in range(repeats)]
    texts = generate(model, tok, prompts, sample=sample, max_new=max_new)
    qs = [q for q in questions for _ in range(repeats)]
    return sum(task.correct(t, q) for t, q in zip(texts, qs)) / len(texts)


def pretrain(out_dir: str, cfg: Dict, log=print) -> Dict:
    """Trains a fresh model on derivations of random questions (never a test or validation question)
    until its sampled per-roll-out accuracy on the validation questions reaches ``target_acc``
    (checked every ``check_every`` steps) or ``max_steps``; saves model, tokenizer and meta.json."""
    import torch

    tok = task.tokenizer()
    test, val = task.split(cfg["data_seed"], cfg["n_test"], cfg["n_val"])
    m = task.model(tok, cfg["size"], cfg["seed"])
    n_params = sum(p.numel() for p in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=cfg["lr"], weight_decay=0.01, betas=(0.9, 0.98))
    rng = random.Random(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    start = time.time()
    history = []
    step = 0
    m.train()
    while step < cfg["max_steps"]:
        step += 1
        for g in opt.param_groups:
            g["lr"] = cfg["lr"] * min(1.0, step / cfg["warmup"])
        qs = task.train_batch(rng, cfg["batch"], test + val)
        rows = []
        for q in qs:
            p = tok(task.prompt(q))["input_ids"]
            c = tok(task.derivation(q))["input_ids"] + [tok.eos_token_id]
            rows.append((p, c))
        width = max(len(p) + len(c) for p, c in rows)
        ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
        labels = torch.full((len(rows), width), -100, dtype=torch.long)
        for i, (p, c) in enumerate(rows):
            ids[i, :len(p) + len(c)] = torch.tensor(p + c)
            labels[i, len(p):len(p) + len(c)] = torch.tensor(c)
        loss = m(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        if step % cfg["check_every"] == 0:
            torch.manual_seed(cfg["seed"] + step)
            acc = accuracy(m, tok, val, sample=True, max_new=cfg["max_new"], repeats=2)
            history.append({"step": step, "loss": round(loss.item(), 4), "val_sampled_acc": acc})
            log("pretrain step %d loss %.3f val sampled acc %.3f (%.0f s)" % (step, loss.item(), acc, time.time() - start))
            if step >= cfg["min_steps"] and acc >= cfg["target_acc"]:
                break
    os.makedirs(out_dir, exist_ok=True)
    m.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    meta = {"config": cfg, "steps": step, "params": n_params, "history": history, "seconds": round(time.time() - start, 1)}
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def load(ckpt: str):
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast.from_pretrained(ckpt)
    return LlamaForCausalLM.from_pretrained(ckpt), tok
