"""TRL integration: a GRPOTrainer reward function that rewards with a consensus operator through
the reward worker and logs every step in the native format. Standard library only.

    from consensus_lens.trl import consensus_reward
    reward = consensus_reward(operator="majority", log_dir="runs/trl-ttrl")
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], args=GRPOConfig(num_generations=16, ...), ...)

GRPOTrainer calls reward functions with ``prompts``, ``completions`` and the dataset's columns as
keyword arguments (recent versions also ``trainer_state``, whose ``global_step`` is used as the
step). A group is the run of roll-outs with the same prompt in one call, as TRL's own completions
table groups them; the question id is ``kwargs[question_key]`` when the dataset has that column,
else a hash of the prompt. A dataset ``ground_truth``/``answer``/``solution`` column is written to
the log as a diagnostic and never sent to the operator.

TRL hands no log-probs to reward functions, so ``core`` runs as ``ec`` here (the results and the
extension say confidence "missing"); ``cisc`` needs confidence and is refused.
"""

import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .reward import RewardWorker

__all__ = ["consensus_reward"]

_TRUTH_COLUMNS = ("ground_truth", "answer", "solution")


def _text(x: Any) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, Sequence) and x and isinstance(x[-1], Mapping):  # conversational: messages
        return str(x[-1].get("content", ""))
    return str(x)


def _prompt_key(p: Any) -> str:
    return p if isinstance(p, str) else json.dumps(p, sort_keys=True, ensure_ascii=False, default=str)


def consensus_reward(
    operator: str = "majority",
    params: Optional[Mapping[str, Any]] = None,
    *,
    log_dir: Optional[str] = None,
    question_key: str = "question_id",
    command: Union[None, str, Sequence[str]] = None,
    worker: Optional[RewardWorker] = None,
    rank: Optional[int] = None,
) -> Callable[..., List[float]]:
    """A TRL reward function (``prompts, completions, **kwargs -> list[float]``).

    With several processes, each logs its own files (``{rank}`` in the file name, from ``rank`` or
    ``$RANK``) as roll-out records, which readers merge into groups across files.
    """
    w = worker if worker is not None else RewardWorker(command, operator=operator, params=params)
    logger = None
    if log_dir:
        from .logger import RunLogger
        r = int(os.environ.get("RANK", "0")) if rank is None else rank
        logger = RunLogger(log_dir, rank=r, file_template="step_{step:06d}.rank{rank}.jsonl", records="rollout")
    calls = [0]

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[float]:
        calls[0] += 1
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", calls[0])) if state is not None else calls[0]
        n = len(completions)
        if len(prompts) != n:
            raise ValueError("prompts has %d items, completions %d" % (len(prompts), n))
        ids = kwargs.get(question_key)
        order: List[str] = []
        members: Dict[str, List[int]] = {}
        qids: Dict[str, str] = {}
        for i in range(n):
            key = _prompt_key(prompts[i])
            if key not in members:
                members[key] = []
                order.append(key)
                if ids is not None and ids[i] is not None:
                    qids[key] = str(ids[i])
                else:
                    qids[key] = "prompt-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
            members[key].append(i)
        groups = []
        for key in order:
            idx = members[key]
            groups.append({"question_id": qids[key], "prompt": _text(prompts[idx[0]]),
                           "responses": [_text(completions[i]) for i in idx]})
        results = w.score(groups, operator, params, step=step)
        rewards = [0.0] * n
        for key, res in zip(order, results):
            for j, i in enumerate(members[key]):
                rewards[i] = float(res["rewards"][j])
        if logger is not None:
            for key, g in zip(order, groups):
                idx = members[key]
                g["rewards"] = [rewards[i] for i in idx]
                for col in _TRUTH_COLUMNS:
                    v = kwargs.get(col)
                    if v is not None and v[idx[0]] is not None:
                        g["ground_truth"] = str(v[idx[0]])
                        break
                g["extra"] = {"operator": operator}
            logger.log_step(step, groups)
        return rewards

    reward.__name__ = "consensus_%s" % operator  # TRL names the reward column after the function
    reward.logger = logger  # type: ignore[attr-defined]
    reward.worker = w  # type: ignore[attr-defined]
    return reward
