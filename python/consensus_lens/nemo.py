"""NeMo RL integration: consensus rewards on NeMo RL's data shapes. Standard library only
(torch is used when the batch holds tensors).

NeMo RL is not installable from the Python package index (``pip install nemo-rl`` gives a
0.0.0 placeholder without the library), so this module follows the shapes of its GRPO loop
(docs/training-loop.md, "NeMo RL"):

- ``shape_rewards(repeated_batch, ...)``: where ``apply_reward_shaping(repeated_batch, cfg)``
  runs, on the whole repeated batch (``batch.repeat_interleave(num_generations_per_prompt)``:
  a prompt's samples are consecutive) before the per-prompt baseline. It replaces
  ``total_reward`` with the operator's rewards (the verifier's kept as
  ``unshaped_total_reward``), reading each sample's response and ``generation_logprobs`` from
  its ``message_log``.
- ``ConsensusEnvironment.step(message_log_batch, metadata)``: an environment whose ``step``
  receives whole groups (the synchronous path hands an environment all its samples of a turn).

Self-certainty and token entropy need the full-vocabulary logits, which NeMo RL's message logs do
not hold: from ``generation_logprobs`` (the sampled tokens' log-probs) a group gets only the
approximation, each token's surprisal -log pi(y_t) as its ``token_entropies``, marked
``confidence_approximate`` (docs/training-loop.md, "Self-certainty and token entropy"), for the
worker and the log alike; never self-certainty.

Groups are blocks of ``num_generations_per_prompt`` consecutive samples; a block whose samples
do not share one prompt, or a batch that is not a multiple of it, is a ``GroupError`` naming
``grpo.num_generations_per_prompt``. The step logged is NeMo RL's own step number (the
``train_data_step{N}.jsonl`` file of that batch: pass ``step=``).
"""

import hashlib
import math
from collections import namedtuple
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .reward import RewardWorker

__all__ = ["shape_rewards", "ConsensusEnvironment", "EnvironmentReturn", "GroupError", "groups_from_message_logs"]


class GroupError(ValueError):
    """The batch is not whole groups of ``num_generations_per_prompt`` samples."""


# The fields of NeMo RL's nemo_rl.environments.interfaces.EnvironmentReturn, in order.
EnvironmentReturn = namedtuple("EnvironmentReturn", ["observations", "metadata", "next_stop_strings", "rewards", "terminateds", "answers"])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # content blocks
        return "".join(str(c.get("text", "")) if isinstance(c, Mapping) else str(c) for c in content)
    return str(content)


def _mean(t: Any) -> Optional[float]:
    if t is None:
        return None
    vals = t.tolist() if hasattr(t, "tolist") else list(t)
    vals = [float(v) for v in vals]
    return sum(vals) / len(vals) if vals else None


def _surprisals(t: Any) -> Optional[List[float]]:
    """Each generated token's -log pi(y_t) (the approximation of its entropy); None without log-probs
    or with a non-finite one."""
    if t is None:
        return None
    vals = t.tolist() if hasattr(t, "tolist") else list(t)
    out = [-float(v) for v in vals]
    return out if out and all(math.isfinite(v) for v in out) else None


def _split(log: Sequence[Mapping[str, Any]]):
    """(prompt text, last assistant message) of one sample's message log."""
    last = None
    for i, m in enumerate(log):
        if m.get("role") == "assistant":
            last = i
    if last is None:
        raise GroupError("a message log has no assistant message: nothing to reward")
    prompt = "".join(_text(m.get("content", "")) for m in log[:last] if m.get("role") != "assistant")
    return prompt, log[last]


def groups_from_message_logs(logs: Sequence[Sequence[Mapping[str, Any]]], n: int, *, step: int,
                             question_ids: Optional[Sequence[Any]] = None) -> List[Dict[str, Any]]:
    """Group specs from consecutive blocks of ``n`` message logs (NeMo RL's repeated batch)."""
    total = len(logs)
    if n < 1 or total % n:
        raise GroupError("the batch has %d samples, not a multiple of grpo.num_generations_per_prompt=%d" % (total, n))
    groups = []
    for lo in range(0, total, n):
        parts = [_split(logs[i]) for i in range(lo, lo + n)]
        prompt = parts[0][0]
        for k, (p, _) in enumerate(parts):
            if p != prompt:
                raise GroupError("samples %d-%d should be one prompt's grpo.num_generations_per_prompt=%d generations, but "
                                 "sample %d has another prompt" % (lo, lo + n - 1, n, lo + k))
        qid = str(question_ids[lo]) if question_ids is not None else "p-" + hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:12]
        g: Dict[str, Any] = {"question_id": qid, "prompt": prompt, "framework": "nemo-rl",
                             "responses": [_text(m.get("content", "")) for _, m in parts]}
        lps = [_mean(m.get("generation_logprobs")) for _, m in parts]
        if any(x is not None for x in lps):
            g["mean_logprobs"] = lps
        ents = [_surprisals(m.get("generation_logprobs")) for _, m in parts]
        if any(x is not None for x in ents):
            g["token_entropies"] = ents
            g["confidence_approximate"] = True
        groups.append(g)
    return groups


def shape_rewards(repeated_batch: Any, *, num_generations: int, step: int, operator: str = "majority",
                  params: Optional[Mapping[str, Any]] = None, worker: Optional[RewardWorker] = None,
                  logger: Any = None) -> Any:
    """Consensus rewards for NeMo RL's repeated batch, in place of (or after) ``apply_reward_shaping``:
    ``total_reward`` becomes the operator's reward, ``unshaped_total_reward`` keeps the one before,
    ``cl_gate`` holds CoRE's question gate per sample. Returns the batch."""
    w = worker if worker is not None else RewardWorker(operator=operator, params=params)
    logs = repeated_batch["message_log"]
    groups = groups_from_message_logs(logs, num_generations, step=step)
    results = w.score(groups, operator, params, step=step)
    rewards: List[float] = []
    gates: List[float] = []
    for res in results:
        rewards.extend(float(x) for x in res["rewards"])
        gates.extend([float(res["gate"])] * len(res["rewards"]))
    before = repeated_batch["total_reward"]
    if hasattr(before, "clone"):
        import torch

        repeated_batch["unshaped_total_reward"] = before.clone()
        repeated_batch["total_reward"] = torch.tensor(rewards, dtype=before.dtype, device=before.device)
        repeated_batch["cl_gate"] = torch.tensor(gates, dtype=before.dtype, device=before.device)
    else:
        repeated_batch["unshaped_total_reward"] = list(before)
        repeated_batch["total_reward"] = rewards
        repeated_batch["cl_gate"] = gates
    if logger is not None:
        for g, res in zip(groups, results):
            g["rewards"] = [float(x) for x in res["rewards"]]
            g["extra"] = {"operator": operator, "label": res.get("label"), "gate": float(res["gate"])}
        logger.log_step(step, groups)
    return repeated_batch


class ConsensusEnvironment:
    """A NeMo RL environment (``step(message_log_batch, metadata) -> EnvironmentReturn``) whose
    reward is the consensus of each prompt's ``num_generations`` samples, which arrive together on
    the synchronous path. Every sample terminates after this turn; ``answers`` are the pseudo-labels."""

    def __init__(self, num_generations: int, operator: str = "majority", params: Optional[Mapping[str, Any]] = None,
                 worker: Optional[RewardWorker] = None) -> None:
        self.num_generations = num_generations
        self.operator = operator
        self.params = dict(params or {})
        self.worker = worker if worker is not None else RewardWorker(operator=operator, params=self.params)
        self.calls = 0

    def step(self, message_log_batch: Sequence[Sequence[Mapping[str, Any]]], metadata: Sequence[Any]) -> EnvironmentReturn:
        self.calls += 1
        ids = [m.get("question_id") if isinstance(m, Mapping) else None for m in metadata]
        groups = groups_from_message_logs(message_log_batch, self.num_generations, step=self.calls,
                                          question_ids=ids if all(i is not None for i in ids) else None)
        results = self.worker.score(groups, self.operator, self.params, step=self.calls)
        rewards: List[float] = []
        answers: List[Any] = []
        for res in results:
            rewards.extend(float(x) for x in res["rewards"])
            answers.extend([res.get("label")] * len(res["rewards"]))
        try:
            import torch

            r: Any = torch.tensor(rewards, dtype=torch.float32)
            done: Any = torch.ones(len(rewards), dtype=torch.bool)
        except ImportError:
            r, done = rewards, [True] * len(rewards)
        obs = [{"role": "environment", "content": "consensus reward %g" % x} for x in rewards]
        return EnvironmentReturn(obs, list(metadata), [None] * len(rewards), r, done, answers)

    def shutdown(self) -> None:
        self.worker.close()
