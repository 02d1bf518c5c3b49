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

Confidence on the text: with per-token log-probs in the batch, the groups carry them
(``token_logprobs``, the response mask's tokens) and each token's text (``tokens``, decoded one id
at a time by the tokenizer, cached per id), and the loggers the hook and the reward manager make
keep them (``token_logprobs=False``: the mean only; they add about 8 bytes per token to the log).
"""

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .records import ground_truth_value, token_texts

__all__ = [
    "groups_from_batch", "mean_logprobs", "response_texts", "ConsensusRewardManager", "register_with_verl",
    "GroupError", "ConsensusHook", "consensus_trainer", "use_consensus", "apply_consensus_gt",
]


class GroupError(ValueError):
    """The batch does not hold every question's ``rollout.n`` roll-outs."""


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


def token_logprob_rows(data: Any, key: Optional[str] = None) -> Optional[List[List[float]]]:
    """Per row, the log-probs of its real response tokens (``key`` as in ``mean_logprobs``), rounded
    to 1e-4 (they are for display; the mean CoRE uses is computed exactly); None without any."""
    keys = _keys(data.batch)
    if key is None:
        key = next((k for k in ("rollout_log_probs", "old_log_probs") if k in keys), None)
    if key is None or key not in keys:
        return None
    lp = _tolist(data.batch[key])
    mask = _tolist(_response_mask(data))
    return [[round(float(v), 4) for v, m in zip(row, mr) if m] for row, mr in zip(lp, mask)]


def _masked_rows(values: Any, mask: Any) -> List[List[float]]:
    """Per row, the values at the mask's real tokens (float, in order)."""
    vals, m = _tolist(values), _tolist(mask)
    return [[float(v) for v, k in zip(row, mr) if k] for row, mr in zip(vals, m)]


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
    token_logprobs: bool = False,
    token_cache: Optional[Dict[int, str]] = None,
) -> Tuple[List[Dict[str, Any]], List[List[int]]]:
    """The batch's groups as group specs (for ``RunLogger.log_step`` and ``RewardWorker.score``),
    and, per group, the batch rows it came from (in batch order).

    question_id: ``"{data_source}/{extra_info['index']}"`` when the dataset has an index (stable
    across steps, as MS-TTRL's cache and the extension's per-question view need), else the
    ``group_key`` value (verl's ``uid`` is fresh every step).
    ``token_logprobs``: also each roll-out's per-token log-probs and tokens' text (``token_cache``:
    the id -> text memo of ``records.token_texts``, kept across steps).
    """
    keys = _tolist(_nt(data, group_key) or [])
    n = len(data.batch["responses"])
    if len(keys) != n:
        raise KeyError("the batch has no non-tensor %r per row: cannot form groups" % group_key)
    lengths = response_lengths(data)
    texts = response_texts(data, tokenizer, lengths)
    means = mean_logprobs(data, logprob_key)
    per_token = token_logprob_rows(data, logprob_key) if token_logprobs else None
    resp = data.batch["responses"] if per_token is not None else None
    memo: Dict[int, str] = {} if token_cache is None else token_cache
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
        g["framework"] = "verl"
        if means is not None:
            g["mean_logprobs"] = [means[i] for i in idx]
        if per_token is not None:
            g["token_logprobs"] = [per_token[i] for i in idx]
            # The response mask's tokens are a prefix (right padding), as response_texts decodes them.
            g["tokens"] = [token_texts(tokenizer, _tolist(resp[i][: lengths[i]]), memo)
                           if len(per_token[i]) == lengths[i] else None for i in idx]
        if scores is not None:
            g["rewards"] = [scores[i] for i in idx]
        if prompts is not None:
            g["prompt"] = tokenizer.decode(prompts[i0], skip_special_tokens=True)
        rm = rms[i0]
        if isinstance(rm, Mapping) and ground_truth_value(rm.get("ground_truth")) is not None:
            g["ground_truth"] = ground_truth_value(rm["ground_truth"])
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
    log_dir (also log every step there with RunLogger), token_logprobs (that log keeps per-token
    log-probs and tokens' text, default True), worker (a RewardWorker to share),
    num_actors (> 1: a ``consensus_lens.ray.RewardPool`` of that many Ray actors instead of one
    local worker; ``+reward_model.reward_kwargs.num_actors=8``).
    ``__call__(data, return_dict=False)`` returns the reward tensor (the reward on each
    response's last real token, as verl's managers place it), or with ``return_dict`` also
    ``reward_extra_info`` with ``cl_gate`` (CoRE's question gate, docs/contract.md#ec-and-core: a loss weight verl
    does not apply by itself) and ``cl_confidence``.
    """

    def __init__(self, tokenizer: Any, num_examine: int = 0, compute_score: Any = None, reward_fn_key: str = "data_source",
                 *, operator: str = "core", params: Optional[Mapping[str, Any]] = None, group_key: str = "uid",
                 logprob_key: Optional[str] = None, log_dir: Optional[str] = None, worker: Any = None, num_actors: int = 1,
                 token_logprobs: bool = True, **unused: Any) -> None:
        from .reward import RewardWorker
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        self.operator = operator
        self.params = dict(params or {})
        self.group_key = group_key
        self.logprob_key = logprob_key
        if worker is None and num_actors > 1:
            from .ray import RewardPool

            worker = RewardPool(num_actors=num_actors, operator=operator, params=self.params)
        self.worker = worker if worker is not None else RewardWorker(operator=operator, params=self.params)
        self.steps = 0
        self.logger = None
        self.token_logprobs = token_logprobs
        self._tokens: Dict[int, str] = {}
        if log_dir:
            from .logger import RunLogger
            self.logger = RunLogger(log_dir, keep_token_logprobs=token_logprobs)

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        if "rm_scores" in _keys(data.batch):
            t = data.batch["rm_scores"]
            return {"reward_tensor": t} if return_dict else t
        self.steps += 1
        step = int(data.meta_info.get("global_steps", self.steps)) if isinstance(getattr(data, "meta_info", None), Mapping) else self.steps
        groups, rows = groups_from_batch(data, self.tokenizer, step=step, group_key=self.group_key,
                                         data_source_key=self.reward_fn_key, logprob_key=self.logprob_key, rewards_key=None,
                                         token_logprobs=self.token_logprobs and self.logger is not None, token_cache=self._tokens)
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


# ---- verl 0.9.x: the batch hook between reward extraction and compute_advantage -------------

_EXTRA_KEYS = ("cl_label", "cl_gate", "cl_reward", "cl_confidence")


def _verl_compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any) -> float:
    from verl.utils.reward_score import default_compute_score  # type: ignore

    r = default_compute_score(data_source, solution_str, ground_truth, extra_info)
    return float(r["score"] if isinstance(r, Mapping) else r)


class ConsensusHook:
    """Rewards a whole verl batch (``DataProto``) with a consensus operator: call it on the batch
    between verl's reward extraction and ``compute_advantage``, where every uid group is complete
    (after ``balance_batch``'s reordering, which this follows by uid).

    - ``mode="reward"``: the operator's reward is the reward (``rm_scores``, on each response's
      last real token, as verl's reward managers place it).
    - ``mode="ttrl"`` (TTRL's ``apply_ttrl_gt`` pattern, any operator): the pseudo-label is written
      into ``reward_model["ground_truth"]`` (the dataset's kept as ``original_gt``) and the stock
      per-sample verifier (``compute_score``, default verl's ``default_compute_score``) rewards each
      response against it.
    Either way ``reward_extra_info`` gets ``cl_label``, ``cl_gate`` (CoRE's question gate, a loss
    weight verl does not apply), ``cl_reward`` (the operator's graded reward) and
    ``cl_confidence``; the step logged is the trainer's ``global_steps``.

    ``n``: the group size (``actor_rollout_ref.rollout.n``); a uid with another count is a
    ``GroupError`` naming that setting, never a reward. ``token_logprobs`` (default True): the log
    keeps each roll-out's per-token log-probs and tokens' text (module doc). ``entropies``: the
    step's log waits for ``add_entropies`` (the actor's ``entropys``, which verl computes after the
    reward stage), so each roll-out's ``entropy`` and ``token_entropies`` are logged with it.
    """

    def __init__(self, tokenizer: Any, *, operator: str = "majority", params: Optional[Mapping[str, Any]] = None,
                 mode: str = "reward", n: Optional[int] = None, worker: Any = None, log_dir: Optional[str] = None,
                 logger: Any = None, compute_score: Any = None, group_key: str = "uid", logprob_key: Optional[str] = None,
                 data_source_key: str = "data_source", token_logprobs: bool = True, entropies: bool = False) -> None:
        if mode not in ("reward", "ttrl"):
            raise ValueError('mode must be "reward" or "ttrl", got %r' % (mode,))
        from .reward import RewardWorker
        self.tokenizer = tokenizer
        self.operator = operator
        self.params = dict(params or {})
        self.mode = mode
        self.n = n
        self.worker = worker if worker is not None else RewardWorker(operator=operator, params=self.params)
        if logger is None and log_dir:
            from .logger import RunLogger
            logger = RunLogger(log_dir, keep_token_logprobs=token_logprobs)
        self.logger = logger
        self.token_logprobs = token_logprobs
        self._tokens: Dict[int, str] = {}
        self.compute_score = compute_score or _verl_compute_score
        self.group_key = group_key
        self.logprob_key = logprob_key
        self.data_source_key = data_source_key
        self.entropies = entropies
        self.extra_info: Optional[Dict[str, Any]] = None  # the step's reward_extra_info (use_consensus sets it)
        self._pending: Any = None

    def __call__(self, data: Any, step: int) -> Any:
        import numpy as np
        import torch

        groups, rows = groups_from_batch(data, self.tokenizer, step=step, group_key=self.group_key,
                                         data_source_key=self.data_source_key, logprob_key=self.logprob_key, rewards_key=None,
                                         token_logprobs=self.token_logprobs and self.logger is not None, token_cache=self._tokens)
        if self.n is not None:
            for g, idx in zip(groups, rows):
                if len(idx) != self.n:
                    raise GroupError(
                        "uid %s (question %s) has %d roll-outs in the batch at step %d, but actor_rollout_ref.rollout.n=%d: "
                        "a consensus reward needs every group whole (was the batch filtered or padded before the hook?)"
                        % (g["extra"]["uid"], g["question_id"], len(idx), step, self.n))
        results = self.worker.score(groups, self.operator, self.params, step=step)
        b = len(data.batch["responses"])
        texts: List[str] = [""] * b
        labels: List[Any] = [None] * b
        gates = [1.0] * b
        graded = [0.0] * b
        conf = [""] * b
        for g, res, idx in zip(groups, results, rows):
            for j, i in enumerate(idx):
                texts[i] = g["responses"][j]
                labels[i] = res.get("label")
                gates[i] = float(res["gate"])
                graded[i] = float(res["rewards"][j])
                conf[i] = str(res.get("confidence", ""))
        if self.mode == "reward":
            scores = list(graded)
        else:
            scores = self._ttrl(data, texts, labels)
        lengths = response_lengths(data)
        rm = torch.zeros_like(data.batch["responses"], dtype=torch.float32)
        for i, length in enumerate(lengths):
            if length > 0:
                rm[i, length - 1] = scores[i]
        data.batch["rm_scores"] = rm
        extra = {"cl_label": labels, "cl_gate": gates, "cl_reward": graded, "cl_confidence": conf}
        for k, v in extra.items():
            data.non_tensor_batch[k] = np.array(v, dtype=object)
        keys = list(data.meta_info.get("reward_extra_keys", []))
        data.meta_info["reward_extra_keys"] = keys + [k for k in _EXTRA_KEYS if k not in keys]
        if self.logger is not None:
            for g, res, idx in zip(groups, results, rows):
                g["rewards"] = [scores[i] for i in idx]
                g["extra"] = dict(g["extra"], operator=self.operator, mode=self.mode, label=res.get("label"), gate=float(res["gate"]))
        self.flush_log()  # a step whose entropies never came (no old_log_prob stage) is logged without them
        self._pending = (step, groups, rows)
        if not self.entropies:
            self.flush_log()
        return data

    def add_entropies(self, data: Any, entropys: Any, extra_info: Optional[Dict[str, Any]] = None) -> None:
        """The actor's per-token entropies of this step's batch (verl's ``entropys`` [B, L] from the
        ``old_log_prob`` stage: the full-vocabulary entropy of each response token at the rollout
        temperature): each roll-out's ``entropy`` (mean over the response mask) and
        ``token_entropies`` go into the step's log, and into ``extra_info`` (the step's
        ``reward_extra_info``, which verl copies into the batch and its rollout dump) as
        ``cl_entropy`` and ``cl_token_entropies``. Rows follow ``data``'s order (the batch the hook saw)."""
        import numpy as np

        rows_ent = _masked_rows(entropys, _response_mask(data))
        means = [sum(r) / len(r) if r else None for r in rows_ent]
        if extra_info is not None:
            te = np.empty(len(rows_ent), dtype=object)
            for i, r in enumerate(rows_ent):
                te[i] = r
            extra_info["cl_entropy"] = np.array([m if m is not None else float("nan") for m in means], dtype=np.float64)
            extra_info["cl_token_entropies"] = te
        if self._pending is not None:
            _, groups, rows = self._pending
            for g, idx in zip(groups, rows):
                g["entropies"] = [means[i] for i in idx]
                g["token_entropies"] = [rows_ent[i] for i in idx]
        self.flush_log()

    def flush_log(self) -> None:
        """Writes the step held for its entropies (``add_entropies``), if any."""
        pending, self._pending = self._pending, None
        if pending is not None and self.logger is not None:
            self.logger.log_step(pending[0], pending[1])

    def _ttrl(self, data: Any, texts: List[str], labels: List[Any]) -> List[float]:
        """TTRL's pattern: the pseudo-label becomes the ground truth the per-sample verifier checks."""
        ntb = data.non_tensor_batch
        b = len(texts)
        rms = ntb.get("reward_model")
        sources = ntb.get(self.data_source_key)
        extras = ntb.get("extra_info")
        out = []
        new_rm = []
        for i in range(b):
            old = rms[i] if rms is not None and isinstance(rms[i], Mapping) else {}
            rm = dict(old)
            if "original_gt" not in rm:
                rm["original_gt"] = old.get("ground_truth")
            rm["ground_truth"] = labels[i]
            new_rm.append(rm)
            if labels[i] is None:  # no roll-out gave an answer: nothing to agree with
                out.append(0.0)
            else:
                src = sources[i] if sources is not None else None
                ext = extras[i] if extras is not None else None
                out.append(self.compute_score(src, texts[i], labels[i], ext))
        import numpy as np

        ntb["reward_model"] = np.array(new_rm, dtype=object)
        return out


def _hook_from_config(trainer: Any) -> ConsensusHook:
    cfg = trainer.config
    opts = dict(cfg.get("consensus_lens", None) or {})
    params = opts.pop("params", None)
    unknown = set(opts) - {"operator", "mode", "log_dir", "logprob_key", "group_key", "token_logprobs", "entropies"}
    if unknown:
        raise ValueError("unknown consensus_lens.* keys: %s (known: operator, mode, params, log_dir, logprob_key, group_key, token_logprobs, "
                         "entropies)"
                         % ", ".join(sorted(unknown)))
    return ConsensusHook(trainer.tokenizer, params=dict(params) if params else None,
                         n=int(cfg.actor_rollout_ref.rollout.n), **opts)


class use_consensus:
    """While active, verl's ``extract_reward`` (called by ``RayPPOTrainer.fit`` right after the
    reward stage, before ``compute_advantage``) returns the consensus rewards of ``hook`` for the
    trainer's current ``global_steps``."""

    def __init__(self, trainer: Any, hook: Optional[ConsensusHook] = None) -> None:
        self.trainer = trainer
        self.hook = hook

    def __enter__(self) -> ConsensusHook:
        import verl.trainer.ppo.ray_trainer as rt  # type: ignore

        if self.hook is None:
            self.hook = _hook_from_config(self.trainer)
        self._rt = rt
        self._orig = rt.extract_reward
        hook, trainer, orig = self.hook, self.trainer, rt.extract_reward

        def extract_reward(batch: Any) -> Any:
            out = orig(hook(batch, int(trainer.global_steps)))
            hook.extra_info = out[1] if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict) else None
            return out

        rt.extract_reward = extract_reward
        return hook

    def __exit__(self, *exc: Any) -> None:
        self._rt.extract_reward = self._orig
        if self.hook is not None:
            self.hook.flush_log()


def consensus_trainer(base: Any = None) -> Any:
    """A subclass of verl's ``RayPPOTrainer`` (or ``base``) whose ``fit`` rewards with the
    consensus hook configured under ``consensus_lens.*`` (``+consensus_lens.operator=core``,
    ``+consensus_lens.mode=ttrl``, ``+consensus_lens.params.kappa=0.1``, ``+consensus_lens.log_dir=...``;
    ``+consensus_lens.entropies=true``: log each roll-out's entropy and token entropies from the
    actor's ``entropys``, and add them to the rollout dump as ``cl_entropy``/``cl_token_entropies``)."""
    if base is None:
        from verl.trainer.ppo.ray_trainer import RayPPOTrainer  # type: ignore

        base = RayPPOTrainer

    class ConsensusRayPPOTrainer(base):  # type: ignore[misc, valid-type]
        def fit(self) -> Any:
            with use_consensus(self) as hook:
                self._cl_hook = hook
                try:
                    return super().fit()
                finally:
                    self._cl_hook = None

        def _compute_old_log_prob(self, batch: Any) -> Any:
            # verl's actor entropy path: the old_log_prob stage computes every response token's
            # entropy from the full logits (calculate_entropy=True) and fit() drops it after its
            # metric; with consensus_lens.entropies the hook takes it first.
            out = super()._compute_old_log_prob(batch)
            hook = getattr(self, "_cl_hook", None)
            if hook is not None and hook.entropies:
                old = out[0] if isinstance(out, tuple) else out
                hook.add_entropies(batch, old.batch["entropys"], getattr(hook, "extra_info", None))
            return out

    return ConsensusRayPPOTrainer



def apply_consensus_gt(batch: Any, gen_batch_output: Any, n: int, tokenizer: Any, *, operator: str = "core",
                       params: Optional[Mapping[str, Any]] = None, step: Optional[int] = None, worker: Any = None,
                       logger: Any = None, data_source_key: str = "data_source") -> Any:
    """TTRL's ``apply_ttrl_gt(batch, gen_batch_output, n, tokenizer)`` with any operator: same
    arguments, same effect on ``batch`` (one row per prompt; ``gen_batch_output`` holds each
    prompt's ``n`` roll-outs, consecutively): ``reward_model["ground_truth"]`` becomes the
    operator's pseudo-label, the dataset's is kept as ``original_gt``. The operator's graded
    reward, gate and label go into ``gen_batch_output.non_tensor_batch`` as ``cl_reward``,
    ``cl_gate``, ``cl_label`` (they reach the training batch with TTRL's ``batch.union``).
    A ``logger`` made with ``keep_token_logprobs=True`` also gets per-token log-probs and text.
    A batch whose size is not ``n`` × prompts is a ``GroupError`` naming ``ttrl.n_votes_per_prompt``."""
    import numpy as np

    from .reward import get_worker

    total = len(gen_batch_output.batch["responses"])
    prompts = len(batch.batch) if getattr(batch, "batch", None) is not None else len(batch)
    if n < 1 or total != n * prompts:
        raise GroupError("gen_batch_output has %d roll-outs for %d prompts, but ttrl.n_votes_per_prompt=%d" % (total, prompts, n))
    texts = response_texts(gen_batch_output, tokenizer)
    means = mean_logprobs(gen_batch_output)
    ntb = batch.non_tensor_batch
    rms = ntb.get("reward_model")
    extras = ntb.get("extra_info")
    sources = ntb.get(data_source_key)
    st = int(step) if step is not None else int(gen_batch_output.meta_info.get("global_steps", 0))
    groups = []
    for p in range(prompts):
        ex = extras[p] if extras is not None and isinstance(extras[p], Mapping) else {}
        src = sources[p] if sources is not None else None
        qid = ("%s/%s" % (src, ex["index"]) if src is not None else str(ex["index"])) if ex.get("index") is not None else "prompt-%d" % p
        g: Dict[str, Any] = {"question_id": qid, "framework": "verl", "responses": texts[p * n:(p + 1) * n]}
        if means is not None:
            g["mean_logprobs"] = means[p * n:(p + 1) * n]
        groups.append(g)
    if logger is not None and getattr(logger, "keep_token_logprobs", False):
        # What the logger keeps: the roll-outs' per-token log-probs and tokens' text.
        per_token = token_logprob_rows(gen_batch_output)
        if per_token is not None:
            lengths = response_lengths(gen_batch_output)
            resp = gen_batch_output.batch["responses"]
            memo: Dict[int, str] = {}
            for p, g in enumerate(groups):
                rows = range(p * n, (p + 1) * n)
                g["token_logprobs"] = [per_token[i] for i in rows]
                g["tokens"] = [token_texts(tokenizer, _tolist(resp[i][: lengths[i]]), memo) if len(per_token[i]) == lengths[i] else None
                               for i in rows]
    w = worker if worker is not None else get_worker(None, operator=operator, params=params)
    results = w.score(groups, operator, params, step=st)
    new_rm = []
    for p, res in enumerate(results):
        old = rms[p] if rms is not None and isinstance(rms[p], Mapping) else {}
        rm = dict(old)
        if "original_gt" not in rm:
            rm["original_gt"] = old.get("ground_truth")
        rm["ground_truth"] = res.get("label")
        new_rm.append(rm)
    ntb["reward_model"] = np.array(new_rm, dtype=object)
    gntb = gen_batch_output.non_tensor_batch
    gntb["cl_reward"] = np.array([float(x) for res in results for x in res["rewards"]], dtype=object)
    gntb["cl_gate"] = np.array([float(res["gate"]) for res in results for _ in range(n)], dtype=object)
    gntb["cl_label"] = np.array([res.get("label") for res in results for _ in range(n)], dtype=object)
    if logger is not None:
        for p, (g, res) in enumerate(zip(groups, results)):
            g["rewards"] = [float(x) for x in res["rewards"]]
            if ground_truth_value(new_rm[p].get("original_gt")) is not None:
                g["ground_truth"] = ground_truth_value(new_rm[p]["original_gt"])
            g["extra"] = {"operator": operator, "mode": "ttrl", "label": res.get("label"), "gate": float(res["gate"])}
        logger.log_step(st, groups)
    return batch


if __name__ == "__main__":
    import sys

    from .verl_dry_run import _dry_run

    sys.exit(_dry_run())
