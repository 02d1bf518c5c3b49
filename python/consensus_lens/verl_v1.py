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

import hashlib
import json
import math
from typing import Any, Dict, Mapping, Optional

from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop  # type: ignore
from verl.experimental.reward_loop.reward_manager import register  # type: ignore
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase  # type: ignore

from .records import token_texts
from .rendezvous import DEFAULT_GROUP_TIMEOUT, GroupRendezvous
from .verl import GroupError, _nt, _tolist, mean_logprobs, response_lengths, response_texts, token_logprob_rows

__all__ = ["ConsensusRewardManagerV1", "ConfidenceSingleTurnAgentLoop", "GroupRendezvous", "GroupError", "sample_from_data",
           "rendezvous_options"]

# The keys of ``consensus_lens.*`` this manager reads (the legacy hook's, less ``mode``, plus the bound).
_KEYS = {"operator", "params", "log_dir", "logprob_key", "group_key", "token_logprobs", "group_timeout"}


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
