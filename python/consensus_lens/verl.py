"""verl integration: turn a verl batch (``DataProto``) into consensus groups, log it, reward it.

Standard library only (torch is imported lazily, and only by ``ConsensusRewardManager`` when it
builds verl's reward tensor). Works on torch tensors, numpy arrays and nested lists alike.

Where verl keeps what the operators need, in ``data.batch`` / ``data.non_tensor_batch``:

- ``responses`` [B, L]: response token ids, right-padded; ``response_mask`` [B, L] marks the
  real tokens (older verl: the last L columns of ``attention_mask``).
- ``rollout_log_probs`` [B, L]: the sampler's token log-probs (present when
  ``actor_rollout_ref.rollout.calculate_log_probs=True``); ``old_log_probs`` [B, L]: the actor's
  recomputation, present after the ``old_log_prob`` stage (i.e. not yet at reward time).
  CoRE's confidence is the mean over the response mask (natural log, docs/contract.md#native-format).
- ``uid`` (non-tensor): one id per prompt, shared by its ``rollout.n`` samples: the group key.
  Rows of a group are not contiguous after ``trainer.balance_batch`` reorders the batch.
- ``data_source`` (``data.reward_fn_key``), ``extra_info`` (``index`` from verl's preprocessors:
  a stable question id across steps), ``reward_model["ground_truth"]`` (diagnostics only).
- ``token_level_scores`` [B, L]: the reward the reward function gave (its row sum), after the
  reward stage.
"""

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["groups_from_batch", "mean_logprobs", "response_texts", "ConsensusRewardManager", "register_with_verl"]


def _tolist(x: Any) -> Any:
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "cpu"):
        x = x.cpu()
    return x.tolist() if hasattr(x, "tolist") else list(x)


def _keys(batch: Any) -> List[str]:
    return list(batch.keys()) if hasattr(batch, "keys") else []


def _response_mask(data: Any) -> Any:
    b = data.batch
    if "response_mask" in _keys(b):
        return b["response_mask"]
    resp = b["responses"]
    length = resp.shape[-1] if hasattr(resp, "shape") else len(resp[0])
    am = b["attention_mask"]
    if hasattr(am, "shape"):
        return am[:, -length:]
    return [row[-length:] for row in am]


def response_lengths(data: Any) -> List[int]:
    """Number of real response tokens per row (the response mask's row sums)."""
    mask = _response_mask(data)
    if hasattr(mask, "sum") and hasattr(mask, "shape"):
        return [int(x) for x in _tolist(mask.sum(-1))]
    return [int(sum(row)) for row in mask]


def response_texts(data: Any, tokenizer: Any, lengths: Optional[Sequence[int]] = None) -> List[str]:
    """Decoded responses without padding and special tokens (as verl's reward managers decode them)."""
    lengths = response_lengths(data) if lengths is None else lengths
    resp = data.batch["responses"]
    return [tokenizer.decode(resp[i][: lengths[i]], skip_special_tokens=True) for i in range(len(lengths))]


def mean_logprobs(data: Any, key: Optional[str] = None) -> Optional[List[Optional[float]]]:
    """Per-row mean token log-prob over the response mask, from ``key`` (default:
    ``rollout_log_probs``, else ``old_log_probs``); None when the batch holds neither.
    Rows with no token, or a non-finite mean, get None (CoRE then runs as EC for that group)."""
    keys = _keys(data.batch)
    if key is None:
        key = next((k for k in ("rollout_log_probs", "old_log_probs") if k in keys), None)
        if key is None:
            return None
    elif key not in keys:
        raise KeyError("the batch has no %r (it has %s)" % (key, ", ".join(sorted(keys))))
    lp = data.batch[key]
    mask = _response_mask(data)
    if hasattr(lp, "shape") and hasattr(mask, "shape"):
        m = mask.to(lp.dtype) if hasattr(mask, "to") else mask
        sums = _tolist((lp * m).sum(-1))
        counts = _tolist(m.sum(-1))
    else:
        sums = [sum(a * b for a, b in zip(r, mr)) for r, mr in zip(lp, mask)]
        counts = [sum(mr) for mr in mask]
    out: List[Optional[float]] = []
    for s, c in zip(sums, counts):
        v = s / c if c else None
        out.append(v if v is not None and math.isfinite(v) else None)
    return out


def _nt(data: Any, key: str) -> Optional[List[Any]]:
    ntb = getattr(data, "non_tensor_batch", None) or {}
    if key not in ntb:
        return None
    v = ntb[key]
    return v.tolist() if hasattr(v, "tolist") else list(v)


def groups_from_batch(
    data: Any,
    tokenizer: Any,
    *,
    step: Optional[int] = None,
    group_key: str = "uid",
    data_source_key: str = "data_source",
    logprob_key: Optional[str] = None,
    include_prompt: bool = True,
    rewards_key: Optional[str] = "token_level_scores",
) -> Tuple[List[Dict[str, Any]], List[List[int]]]:
    """The batch's groups as group specs (for ``RunLogger.log_step`` and ``RewardWorker.score``),
    and, per group, the batch rows it came from (in batch order).

    question_id: ``"{data_source}/{extra_info['index']}"`` when the dataset has an index (stable
    across steps, as MS-TTRL's cache and the extension's per-question view need), else the
    ``group_key`` value (verl's ``uid`` is fresh every step).
    """
    keys = _tolist(_nt(data, group_key) or [])
    n = len(data.batch["responses"])
    if len(keys) != n:
        raise KeyError("the batch has no non-tensor %r per row: cannot form groups" % group_key)
    lengths = response_lengths(data)
    texts = response_texts(data, tokenizer, lengths)
    means = mean_logprobs(data, logprob_key)
    sources = _nt(data, data_source_key) or [None] * n
    extras = _nt(data, "extra_info") or [None] * n
    rms = _nt(data, "reward_model") or [None] * n
    scores = None
    if rewards_key and rewards_key in _keys(data.batch):
        t = data.batch[rewards_key]
        scores = _tolist(t.sum(-1)) if hasattr(t, "sum") and hasattr(t, "shape") else [sum(r) for r in t]
    prompts = data.batch["prompts"] if include_prompt and "prompts" in _keys(data.batch) else None

    order: List[Any] = []
    rows: Dict[Any, List[int]] = {}
    for i, k in enumerate(keys):
        if k not in rows:
            rows[k] = []
            order.append(k)
        rows[k].append(i)

    groups: List[Dict[str, Any]] = []
    for k in order:
        idx = rows[k]
        i0 = idx[0]
        extra = extras[i0] if isinstance(extras[i0], Mapping) else {}
        src = sources[i0]
        if extra.get("index") is not None:
            qid = "%s/%s" % (src, extra["index"]) if src is not None else str(extra["index"])
        else:
            qid = str(k)
        g: Dict[str, Any] = {"question_id": qid, "responses": [texts[i] for i in idx]}
        if step is not None:
            g["step"] = step
        if means is not None:
            g["mean_logprobs"] = [means[i] for i in idx]
        if scores is not None:
            g["rewards"] = [scores[i] for i in idx]
        if prompts is not None:
            g["prompt"] = tokenizer.decode(prompts[i0], skip_special_tokens=True)
        rm = rms[i0]
        if isinstance(rm, Mapping) and rm.get("ground_truth") is not None:
            g["ground_truth"] = str(rm["ground_truth"])
        g["extra"] = {"uid": str(k)}
        groups.append(g)
    return groups, [rows[k] for k in order]


class ConsensusRewardManager:
    """A verl reward manager (the ``reward_fn`` verl calls with a ``DataProto``) that rewards with
    a consensus operator through the reward worker, with CoRE's confidence from
    ``rollout_log_probs`` (set ``actor_rollout_ref.rollout.calculate_log_probs=True``).

    Constructor arguments follow verl's reward managers (tokenizer, num_examine, compute_score,
    reward_fn_key) plus: operator, params, group_key ("uid"), logprob_key (None: rollout, else
    old log-probs; without either, core runs as ec and the results say confidence "missing"),
    log_dir (also log every step there with RunLogger), worker (a RewardWorker to share).
    ``__call__(data, return_dict=False)`` returns the reward tensor (the reward on each
    response's last real token, as verl's managers place it), or with ``return_dict`` also
    ``reward_extra_info`` with ``cl_gate`` (CoRE's question gate, docs/contract.md#ec-and-core: a loss weight verl
    does not apply by itself) and ``cl_confidence``.
    """

    def __init__(self, tokenizer: Any, num_examine: int = 0, compute_score: Any = None, reward_fn_key: str = "data_source",
                 *, operator: str = "core", params: Optional[Mapping[str, Any]] = None, group_key: str = "uid",
                 logprob_key: Optional[str] = None, log_dir: Optional[str] = None, worker: Any = None, **unused: Any) -> None:
        from .reward import RewardWorker
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        self.operator = operator
        self.params = dict(params or {})
        self.group_key = group_key
        self.logprob_key = logprob_key
        self.worker = worker if worker is not None else RewardWorker(operator=operator, params=self.params)
        self.steps = 0
        self.logger = None
        if log_dir:
            from .logger import RunLogger
            self.logger = RunLogger(log_dir)

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        if "rm_scores" in _keys(data.batch):
            t = data.batch["rm_scores"]
            return {"reward_tensor": t} if return_dict else t
        self.steps += 1
        step = int(data.meta_info.get("global_steps", self.steps)) if isinstance(getattr(data, "meta_info", None), Mapping) else self.steps
        groups, rows = groups_from_batch(data, self.tokenizer, step=step, group_key=self.group_key,
                                         data_source_key=self.reward_fn_key, logprob_key=self.logprob_key, rewards_key=None)
        results = self.worker.score(groups, self.operator, self.params, step=step)
        n = len(data.batch["responses"])
        rewards = [0.0] * n
        gates = [1.0] * n
        conf = [""] * n
        for res, idx in zip(results, rows):
            for j, i in enumerate(idx):
                rewards[i] = float(res["rewards"][j])
                gates[i] = float(res["gate"])
                conf[i] = str(res.get("confidence", ""))
        if self.logger is not None:
            for g, idx in zip(groups, rows):
                g["rewards"] = [rewards[i] for i in idx]
                g["extra"] = dict(g.get("extra", {}), operator=self.operator)
            self.logger.log_step(step, groups)
        tensor = self._reward_tensor(data, rewards)
        if return_dict:
            return {"reward_tensor": tensor, "reward_extra_info": {"cl_gate": gates, "cl_confidence": conf}}
        return tensor

    def _reward_tensor(self, data: Any, rewards: List[float]) -> Any:
        import torch  # verl's reward tensor: zeros, the reward on each response's last real token

        resp = data.batch["responses"]
        out = torch.zeros_like(resp, dtype=torch.float32)
        for i, length in enumerate(response_lengths(data)):
            if length > 0:
                out[i, length - 1] = rewards[i]
        return out


def register_with_verl(name: str = "consensus_lens") -> None:
    """Registers ConsensusRewardManager under ``reward_model.reward_manager=<name>`` (verl versions
    with ``verl.workers.reward_manager.register``). Call it in the process that builds the trainer."""
    from verl.workers.reward_manager import register  # type: ignore

    register(name)(ConsensusRewardManager)
