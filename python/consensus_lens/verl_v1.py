"""Consensus rewards on verl 0.9.1's V1 trainer (``trainer.use_v1=True``, its default), whose rewards
are computed per sample as roll-outs finish (docs/training-loop.md#3-verl).

In V1, ``RewardLoopWorker`` Ray actors call the configured reward manager's ``run_single`` on one
sample at a time: the agent loop sends each finished trajectory to a randomly chosen worker
(``verl/experimental/agent_loop/agent_loop.py``, ``_compute_score``), and
``RewardLoopManager.compute_rm_score`` splits a batch into one chunk per worker, each chunk looped
over sample by sample (``verl/experimental/reward_loop/reward_loop.py``). No call sees a question's
``rollout.n`` roll-outs, which a consensus needs. So here:

- ``ConsensusRewardManagerV1`` (registered with verl's reward-manager registry as
  ``consensus_lens``) is the ``RewardManagerBase`` whose ``run_single`` hands its sample to a
  rendezvous keyed by the sample's ``uid`` and returns that sample's reward once the group is
  whole: the rewards of a group are computed once, from all its ``rollout.n`` samples, whatever
  worker each sample reached and in whatever order, by the reward worker
  (``consensus-lens serve --stdio``), with the operator and parameters of ``consensus_lens.*``.
- ``GroupRendezvous`` is that rendezvous: one named Ray actor per trainer (created by the first
  reward worker that needs it), which gathers the samples of each uid, scores a group when its
  ``rollout.n``-th distinct session arrives, logs it with ``RunLogger`` at the sample's
  ``global_steps``, and answers every waiting sample.
- Never a partial group: a uid whose group is not whole within ``consensus_lens.group_timeout``
  seconds of its first sample (a roll-out lost or failed, ``rollout.n`` mismatched, a reward worker
  restarted) raises ``GroupError`` naming the uid and the settings, in every call waiting for it
  and in any later one; no reward is given to any of its samples. The bound only turns a wait
  that would never end into that error; it never decides a reward.

Importing this module needs verl (it subclasses verl's ``RewardManagerBase``); the rest of the
package does not.
"""

import asyncio
import hashlib
import json
import math
import time
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, Optional, Sequence

from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop  # type: ignore
from verl.experimental.reward_loop.reward_manager import register  # type: ignore
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase  # type: ignore

from .records import token_texts
from .verl import GroupError, _nt, _tolist, mean_logprobs, response_lengths, response_texts, token_logprob_rows

__all__ = ["ConsensusRewardManagerV1", "ConfidenceSingleTurnAgentLoop", "GroupRendezvous", "GroupError", "sample_from_data",
           "rendezvous_options"]

# The keys of ``consensus_lens.*`` this manager reads (the legacy hook's, less ``mode``, plus the bound).
_KEYS = {"operator", "params", "log_dir", "logprob_key", "group_key", "token_logprobs", "group_timeout"}
DEFAULT_GROUP_TIMEOUT = 1800.0
# Groups whose answers are kept for late copies of their samples (RewardLoopManager.compute_rm_score
# pads a batch to a multiple of the worker count with copies of its first rows).
_KEEP_DONE = 65536


class GroupRendezvous:
    """Gathers each uid's samples; scores a group once all ``n`` sessions are in (module doc).

    Runs as a Ray actor (``rendezvous_handle``) or in-process (the dry run). ``submit`` is a
    coroutine: many calls wait at once, each for its own group.
    """

    def __init__(self, n: int, operator: str, params: Optional[Mapping[str, Any]] = None, *, group_timeout: float = DEFAULT_GROUP_TIMEOUT,
                 log_dir: Optional[str] = None, token_logprobs: bool = True, command: Any = None, worker: Any = None) -> None:
        from .reward import RewardWorker

        if n < 1:
            raise ValueError("actor_rollout_ref.rollout.n must be at least 1, got %r" % (n,))
        self.n = int(n)
        self.operator = operator
        self.params = dict(params or {})
        self.group_timeout = float(group_timeout)
        self.worker = worker if worker is not None else RewardWorker(command, operator=operator, params=self.params)
        self.logger = None
        if log_dir:
            from .logger import RunLogger

            self.logger = RunLogger(log_dir, keep_token_logprobs=token_logprobs)
        self._pending: Dict[str, Dict[str, Any]] = {}
        self._done: "OrderedDict[str, Dict[int, Dict[str, Any]]]" = OrderedDict()
        self._failed: "OrderedDict[str, str]" = OrderedDict()
        self.groups_scored = 0
        self._score_lock: Optional[asyncio.Lock] = None

    def _fail(self, uid: str, message: str) -> None:
        self._failed[uid] = message
        while len(self._failed) > _KEEP_DONE:
            self._failed.popitem(last=False)
        g = self._pending.pop(uid, None)
        if g is not None and not g["future"].done():
            g["future"].set_exception(GroupError(message))
            g["future"].exception()  # retrieved: no "never retrieved" warning when nobody waits any more

    async def submit(self, uid: str, sample: Mapping[str, Any]) -> Dict[str, Any]:
        """The consensus result of ``sample`` (its ``session`` in ``uid``'s group): reward, gate,
        label, confidence. Waits until the group is whole; ``GroupError`` when it cannot be."""
        uid = str(uid)
        sid = int(sample["session"])
        if uid in self._failed:
            raise GroupError(self._failed[uid])
        if uid in self._done:
            res = self._done[uid].get(sid)
            if res is None:
                raise GroupError("uid %s: session %d arrived after its group of actor_rollout_ref.rollout.n=%d was rewarded without it"
                                 % (uid, sid, self.n))
            return res
        if not 0 <= sid < self.n:
            msg = ("uid %s: session_id %d is outside 0..%d, but actor_rollout_ref.rollout.n=%d: the rollout produced "
                   "more roll-outs for this prompt than the consensus reward's group size (rollout.n mismatched, "
                   "or __rollout_n__ set per prompt, which this reward does not support)" % (uid, sid, self.n - 1, self.n))
            self._fail(uid, msg)
            raise GroupError(msg)
        loop = asyncio.get_running_loop()
        g = self._pending.get(uid)
        if g is None:
            g = {"samples": {}, "future": loop.create_future(), "t0": time.monotonic(), "scoring": False}
            self._pending[uid] = g
        # A second sample with a session already in is a copy (compute_rm_score's padding): it gets
        # the same answer as the first, and does not count towards the group.
        g["samples"].setdefault(sid, dict(sample))
        if len(g["samples"]) == self.n and not g["scoring"]:
            g["scoring"] = True
            asyncio.ensure_future(self._score(uid, g))
        remaining = g["t0"] + self.group_timeout - time.monotonic()
        try:
            answers = await asyncio.wait_for(asyncio.shield(g["future"]), timeout=max(remaining, 0.0))
        except asyncio.TimeoutError:
            if g["scoring"]:
                # Whole before the bound ran out: only the score is outstanding, which the reward
                # worker's own timeout bounds (its error fails the group, below).
                answers = await g["future"]
            else:
                if uid not in self._failed:
                    have = sorted(g["samples"])
                    self._fail(uid, (
                        "uid %s (question %s, step %s): %d of actor_rollout_ref.rollout.n=%d roll-outs (sessions %s) reached "
                        "the consensus reward within consensus_lens.group_timeout=%gs of the first; no reward is given to "
                        "any of its roll-outs (a roll-out lost or failed, rollout.n mismatched, or a reward worker restarted)"
                        % (uid, sample.get("question_id"), sample.get("step"), len(have), self.n, have, self.group_timeout)))
                raise GroupError(self._failed[uid]) from None
        return answers[sid]

    async def _score(self, uid: str, g: Dict[str, Any]) -> None:
        fut = g["future"]
        try:
            if self._score_lock is None:
                self._score_lock = asyncio.Lock()
            sids = sorted(g["samples"])
            samples = [g["samples"][s] for s in sids]
            spec = _group_spec(uid, samples, keep_tokens=self.logger is not None and self.logger.keep_token_logprobs)
            step = spec.get("step")
            async with self._score_lock:  # one request at a time on the worker, off the event loop
                results = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: self.worker.score([spec], self.operator, self.params, step=step))
            res = results[0]
            answers = {}
            for j, s in enumerate(sids):
                answers[s] = {"reward": float(res["rewards"][j]), "gate": float(res["gate"]), "label": res.get("label"),
                              "confidence": str(res.get("confidence", "")), "question_id": spec["question_id"], "step": step}
            if self.logger is not None:
                spec["rewards"] = [answers[s]["reward"] for s in sids]
                spec["extra"] = dict(spec["extra"], operator=self.operator, label=res.get("label"), gate=float(res["gate"]))
                self.logger.log_step(step if step is not None else 0, [spec])
            self.groups_scored += 1
        except BaseException as e:  # the group gets no reward: every waiting sample raises
            msg = "uid %s: the consensus reward of its group failed: %s: %s" % (uid, type(e).__name__, e)
            self._pending.pop(uid, None)
            self._failed[uid] = msg
            if not fut.done():
                fut.set_exception(GroupError(msg))
                fut.exception()
            return
        if self._pending.get(uid) is g:
            del self._pending[uid]
        self._done[uid] = answers
        while len(self._done) > _KEEP_DONE:
            self._done.popitem(last=False)
        if not fut.done():
            fut.set_result(answers)

    def stats(self) -> Dict[str, Any]:
        return {"groups_scored": self.groups_scored, "pending": {u: sorted(g["samples"]) for u, g in self._pending.items()},
                "failed": dict(self._failed)}

    def flush(self) -> bool:
        return self.logger.flush() if self.logger is not None else True

    def close(self) -> None:
        if self.logger is not None:
            self.logger.close()
        self.worker.close()


def _group_spec(uid: str, samples: Sequence[Mapping[str, Any]], keep_tokens: bool) -> Dict[str, Any]:
    """The group spec of a uid's samples, in session order (as ``groups_from_batch`` builds one)."""
    first = samples[0]
    g: Dict[str, Any] = {"question_id": first["question_id"], "responses": [s["text"] for s in samples], "framework": "verl"}
    if first.get("step") is not None:
        g["step"] = int(first["step"])
    if any(s.get("mean_logprob") is not None for s in samples):
        g["mean_logprobs"] = [s.get("mean_logprob") for s in samples]
    if keep_tokens and any(s.get("token_logprobs") is not None for s in samples):
        g["token_logprobs"] = [s.get("token_logprobs") or [] for s in samples]
        g["tokens"] = [s.get("tokens") for s in samples]
    if first.get("prompt") is not None:
        g["prompt"] = first["prompt"]
    if first.get("ground_truth") is not None:
        g["ground_truth"] = first["ground_truth"]
    g["extra"] = {"uid": uid}
    return g


def _scalar(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and getattr(v, "ndim", 0) == 0 else v


def sample_from_data(data: Any, tokenizer: Any, *, group_key: str = "uid", data_source_key: str = "data_source",
                     logprob_key: Optional[str] = None, token_logprobs: bool = False,
                     token_cache: Optional[Dict[int, str]] = None) -> Dict[str, Any]:
    """What the rendezvous needs of the sample ``run_single`` receives (its last output, as verl's
    managers reward a multi-output trajectory): uid, session, step, text, confidence, question id.

    Log-probs: ``rollout_log_probs`` (else ``old_log_probs``, or ``logprob_key``) in ``data.batch``,
    else ``extra_fields["rollout_log_probs"]`` of the output (``tool_extra_fields`` in the agent
    loop's reward call, which carries no log-prob tensor in verl 0.9.1); else none (CoRE runs as
    EC for that group, and its result says so)."""
    row = data[-1:]
    uids = _nt(row, group_key)
    sessions = _nt(row, "session_id")
    if not uids or uids[0] is None:
        raise GroupError("the sample has no non-tensor %r: the consensus reward groups roll-outs by it (V1's agent loop "
                         "passes uid and session_id with every sample; a colocated reward model's batch, "
                         "reward.reward_model.enable=True without enable_resource_pool, does not)" % group_key)
    if not sessions or sessions[0] is None:
        raise GroupError("uid %s: the sample has no non-tensor 'session_id' (its index among the prompt's rollout.n "
                         "roll-outs, which V1's agent loop passes with every sample)" % uids[0])
    uid = str(_scalar(uids[0]))
    lengths = response_lengths(row)
    text = response_texts(row, tokenizer, lengths)[0]
    keys = list(row.batch.keys())
    # mean_logprobs: None without rollout_log_probs / old_log_probs; a named key that is absent here
    # falls through to the output's extra_fields.
    means = mean_logprobs(row, logprob_key) if logprob_key is None or logprob_key in keys else None
    per_token = token_logprob_rows(row, logprob_key) if token_logprobs and means is not None else None
    mean = means[0] if means is not None else None
    tok_lp = per_token[0] if per_token is not None else None
    if means is None:
        extras = _nt(row, "tool_extra_fields") or [None]
        ef = extras[0] if isinstance(extras[0], Mapping) else {}
        lp = ef.get("rollout_log_probs")
        if lp is not None:
            vals = [float(x) for x in _tolist(lp)][: lengths[0]]
            m = sum(vals) / len(vals) if vals else None
            mean = m if m is not None and math.isfinite(m) else None
            if token_logprobs:
                tok_lp = [round(v, 4) for v in vals]
    tokens = None
    if tok_lp is not None and len(tok_lp) == lengths[0]:
        tokens = token_texts(tokenizer, _tolist(row.batch["responses"][0][: lengths[0]]), {} if token_cache is None else token_cache)
    src = (_nt(row, data_source_key) or [None])[0]
    extra = (_nt(row, "extra_info") or [None])[0]
    extra = extra if isinstance(extra, Mapping) else {}
    if extra.get("index") is not None:
        qid = "%s/%s" % (src, extra["index"]) if src is not None else str(extra["index"])
    else:
        qid = uid
    rm = (_nt(row, "reward_model") or [None])[0]
    steps = _nt(row, "global_steps")
    prompt = None
    if "prompts" in keys:
        prompt = tokenizer.decode(_tolist(row.batch["prompts"][0]), skip_special_tokens=True)
    return {
        "uid": uid, "session": int(_scalar(sessions[0])), "step": int(_scalar(steps[0])) if steps and steps[0] is not None else None,
        "text": text, "mean_logprob": mean, "token_logprobs": tok_lp, "tokens": tokens, "question_id": qid, "prompt": prompt,
        "ground_truth": str(rm["ground_truth"]) if isinstance(rm, Mapping) and rm.get("ground_truth") is not None else None,
    }


def rendezvous_options(config: Any) -> Dict[str, Any]:
    """``consensus_lens.*`` and ``actor_rollout_ref.rollout.n`` of a trainer config, checked: a
    misspelled key, or a validation group size other than ``rollout.n`` while validation runs, is
    an error naming the setting (a validation group would otherwise wait for roll-outs that never
    come)."""
    def get(path: str, default: Any = None) -> Any:
        node = config
        for part in path.split("."):
            if node is None:
                return default
            node = node.get(part, None) if hasattr(node, "get") else getattr(node, part, None)
        return default if node is None else node

    opts = dict(get("consensus_lens") or {})
    if "mode" in opts:
        raise ValueError("consensus_lens.mode=%s is the legacy trainer's hook setting (trainer.use_v1=False); the V1 "
                         "reward manager rewards with the operator's reward only" % (opts["mode"],))
    unknown = set(opts) - _KEYS
    if unknown:
        raise ValueError("unknown keys for the V1 consensus reward manager: %s (known: consensus_lens.{%s})"
                         % (", ".join("consensus_lens." + k for k in sorted(unknown)), ",".join(sorted(_KEYS))))
    n = int(get("actor_rollout_ref.rollout.n", 1))
    val_n = get("actor_rollout_ref.rollout.val_kwargs.n")
    validates = (get("trainer.test_freq", -1) or -1) > 0 or bool(get("trainer.val_before_train", False))
    if validates and val_n is not None and int(val_n) != n:
        raise ValueError(
            "actor_rollout_ref.rollout.val_kwargs.n=%d but actor_rollout_ref.rollout.n=%d: V1 rewards validation roll-outs "
            "with the same reward manager, and a consensus group has rollout.n roll-outs. Set val_kwargs.n=%d, or turn "
            "validation off (trainer.test_freq=-1 trainer.val_before_train=False)" % (int(val_n), n, n))
    params = opts.get("params")
    if params is not None and hasattr(params, "items"):
        params = {k: (v if not hasattr(v, "items") else dict(v)) for k, v in params.items()}
    timeout = float(opts.get("group_timeout", DEFAULT_GROUP_TIMEOUT))
    if not timeout > 0:
        raise ValueError("consensus_lens.group_timeout must be a positive number of seconds, got %r" % (opts.get("group_timeout"),))
    return {"n": n, "operator": str(opts.get("operator", "majority")), "params": dict(params or {}),
            "group_timeout": timeout, "log_dir": opts.get("log_dir"), "token_logprobs": bool(opts.get("token_logprobs", True)),
            "logprob_key": opts.get("logprob_key"), "group_key": str(opts.get("group_key", "uid"))}


def _actor_name(opts: Mapping[str, Any]) -> str:
    key = json.dumps({k: opts[k] for k in ("n", "operator", "params", "group_timeout", "log_dir", "token_logprobs")},
                     sort_keys=True, default=str)
    return "consensus_lens_rendezvous_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def rendezvous_handle(opts: Mapping[str, Any]) -> Any:
    """The trainer's rendezvous actor for these options: created by the first caller, found by the
    others (a named actor in the job's namespace; one per distinct configuration). It needs no CPU
    of its own: it waits, and its reward worker is a separate process."""
    import ray  # type: ignore

    cls = ray.remote(GroupRendezvous)
    return cls.options(name=_actor_name(opts), get_if_exists=True, num_cpus=0, max_concurrency=100000,
                       max_restarts=0).remote(opts["n"], opts["operator"], opts["params"], group_timeout=opts["group_timeout"],
                                              log_dir=opts["log_dir"], token_logprobs=opts["token_logprobs"])


@register("consensus_lens")
class ConsensusRewardManagerV1(RewardManagerBase):
    """verl 0.9.1's V1 reward manager for consensus rewards (module doc). Configure with
    ``reward.reward_manager.source=importlib reward.reward_manager.module.path=pkg://consensus_lens.verl_v1
    reward.reward_manager.name=ConsensusRewardManagerV1`` and ``+consensus_lens.operator=…``.

    ``run_single`` returns ``{"reward_score", "reward_extra_info": {cl_reward, cl_gate, cl_label,
    cl_confidence}}`` as verl's managers do. ``rendezvous``: a ``GroupRendezvous`` (or an object
    with its ``submit``) to use instead of the named Ray actor (the dry run)."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, reward_router_address: Any = None,
                 reward_model_tokenizer: Any = None, rendezvous: Any = None, **unused: Any) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.options = rendezvous_options(config)
        self._local = rendezvous
        self._actor: Any = None
        self._tokens: Dict[int, str] = {}

    def _submit(self, uid: str, sample: Dict[str, Any]) -> Any:
        if self._local is not None:
            return self._local.submit(uid, sample)
        if self._actor is None:
            self._actor = rendezvous_handle(self.options)
        return self._actor.submit.remote(uid, sample)

    async def run_single(self, data: Any) -> Dict[str, Any]:
        o = self.options
        sample = sample_from_data(data, self.tokenizer, group_key=o["group_key"], logprob_key=o["logprob_key"],
                                  token_logprobs=bool(o["log_dir"]) and o["token_logprobs"], token_cache=self._tokens)
        try:
            res = await self._submit(sample["uid"], sample)
        except GroupError:
            raise
        except Exception as e:
            from ray.exceptions import RayActorError  # type: ignore

            if isinstance(e, RayActorError):  # its pending groups are gone with it: no reward from a part
                raise GroupError("uid %s: the consensus rendezvous actor is gone (%s); the groups it held get no reward"
                                 % (sample["uid"], type(e).__name__)) from e
            raise
        return {"reward_score": res["reward"],
                "reward_extra_info": {"cl_reward": res["reward"], "cl_gate": res["gate"], "cl_label": res["label"],
                                      "cl_confidence": res["confidence"]}}


class ConfidenceSingleTurnAgentLoop(SingleTurnAgentLoop):
    """verl's single-turn agent loop, whose output also carries the sampler's token log-probs in
    ``extra_fields["rollout_log_probs"]``: V1's reward call (``AgentLoopWorker._compute_score``)
    sends the reward worker the output's ``extra_fields`` (as ``tool_extra_fields``) but no
    log-prob tensor, so without this CoRE has no confidence in V1. Name it in an
    ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` file
    (``- name: consensus_lens_single_turn`` / ``_target_: consensus_lens.verl_v1.ConfidenceSingleTurnAgentLoop``)
    and set ``actor_rollout_ref.rollout.agent.default_agent_loop=consensus_lens_single_turn`` with
    ``actor_rollout_ref.rollout.calculate_log_probs=True``."""

    async def run(self, sampling_params: Dict[str, Any], priority: int = 0, **kwargs: Any) -> Any:
        output = await super().run(sampling_params, priority=priority, **kwargs)
        if output.response_logprobs is not None:
            output.extra_fields["rollout_log_probs"] = [float(x) for x in output.response_logprobs]
        return output
