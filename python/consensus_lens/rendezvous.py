"""The rendezvous of a verl V1 trainer's consensus reward (``consensus_lens.verl_v1``): gathers the
samples of each uid as reward workers hand them in, scores a group once all its ``rollout.n``
sessions are in, and answers every waiting sample (docs/training-loop.md §3.0).

Standard library only: it runs as a Ray actor that imports no framework.
"""

import asyncio
import time
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .verl import GroupError

__all__ = ["GroupRendezvous", "DEFAULT_GROUP_TIMEOUT"]

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
        self._ready: List[Any] = []
        self._draining = False

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
            self._enqueue(uid, g)
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

    def _enqueue(self, uid: str, g: Dict[str, Any]) -> None:
        # Whole groups are scored by one task, in batches: the groups that became whole while the
        # previous request was out go together in the next (one request line per 4 groups).
        self._ready.append((uid, g))
        if not self._draining:
            self._draining = True
            asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            while self._ready:
                batch, self._ready = self._ready, []
                await self._score(batch)
        finally:
            self._draining = False

    async def _score(self, batch: List[Any]) -> None:
        keep = self.logger is not None and self.logger.keep_token_logprobs
        specs, sids_of = [], []
        for uid, g in batch:
            sids = sorted(g["samples"])
            spec = _group_spec(uid, [g["samples"][s] for s in sids], keep_tokens=keep)
            spec.setdefault("step", 0)
            specs.append(spec)
            sids_of.append(sids)
        try:
            results = await asyncio.get_running_loop().run_in_executor(
                None, lambda: self.worker.score(specs, self.operator, self.params))
        except BaseException as e:  # these groups get no reward: every waiting sample raises
            for uid, g in batch:
                msg = "uid %s: the consensus reward of its group failed: %s: %s" % (uid, type(e).__name__, e)
                self._fail(uid, msg)
            return
        by_step: Dict[int, List[Dict[str, Any]]] = {}
        for (uid, g), spec, sids, res in zip(batch, specs, sids_of, results):
            answers = {}
            for j, s in enumerate(sids):
                answers[s] = {"reward": float(res["rewards"][j]), "gate": float(res["gate"]), "label": res.get("label"),
                              "confidence": str(res.get("confidence", "")), "question_id": spec["question_id"], "step": spec["step"]}
            if self.logger is not None:
                spec["rewards"] = [answers[s]["reward"] for s in sids]
                spec["extra"] = dict(spec["extra"], operator=self.operator, label=res.get("label"), gate=float(res["gate"]))
                by_step.setdefault(spec["step"], []).append(spec)
            self.groups_scored += 1
            if self._pending.get(uid) is g:
                del self._pending[uid]
            self._done[uid] = answers
            while len(self._done) > _KEEP_DONE:
                self._done.popitem(last=False)
            if not g["future"].done():
                g["future"].set_result(answers)
        for step, groups in by_step.items():
            self.logger.log_step(step, groups)

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
