"""TRL integration: a ``GRPOTrainer`` reward function that rewards whole groups with a consensus
operator through the reward worker, logs every step in the native format, and puts the
pseudo-label and gate into TRL's own completions table. Standard library only (``accelerate``,
which TRL brings, is imported only when the trainer runs on several processes).

    from consensus_lens.trl import consensus_reward
    reward = consensus_reward("majority", log_dir="runs/trl-ttrl/consensus")
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], args=GRPOConfig(num_generations=16, ...), ...)

How TRL calls it (``GRPOTrainer._calculate_rewards``, TRL 1.x): ``f(prompts, completions,
completion_ids, **dataset_columns, trainer_state, log_extra, log_metric)`` on the local process
slice of the generation batch, whose ``num_generations`` completions per prompt are consecutive
(TRL's advantages are computed on ``rewards.view(-1, num_generations)``).

- Groups are TRL's: blocks of ``num_generations`` consecutive rows (read from the trainer, or
  ``num_generations=``). A block holding two prompts, or a call whose size is not a multiple of
  ``num_generations``, is an error naming the setting: never half a group scored as a whole one.
- Several processes: the slices are gathered (``accelerate.utils.gather_object``, which every
  rank reaches because TRL calls reward functions on every rank at once), every rank scores the
  whole generation batch (identical numbers everywhere; MS-TTRL's cache sees every question) and
  keeps its slice; rank 0 alone logs.
- Step: the optimisation step this batch trains, ``trainer_state.global_step + 1`` (TRL
  increments ``global_step`` after the update; its completions table names the batch by the
  incremented value). In evaluation (``trainer.model.training`` false) it is ``global_step``, as
  TRL's eval table; evaluation batches are not logged (they would share the last training step's
  step and question ids). Without ``trainer_state`` (TRL's async GRPO ``_score_group``), the number of
  calls.
- Question id: the dataset's ``question_id`` column (``question_key``), else ``p-`` + the first
  12 hex digits of the SHA-1 of the prompt text, as the extension's TRL reader names a prompt, so
  this log and TRL's table of the same run name each question alike.
- Confidence (CoRE): TRL hands log-probs to reward functions only through extra keys a
  ``rollout_func`` returns; ``with_logprobs(rollout_func)`` copies its ``logprobs`` into
  ``cl_logprobs`` (``logprob_key``), whose per-token values are averaged. Without it ``core``
  runs as ``ec`` (the worker says confidence "missing").
- Confidence on the text: with those per-token log-probs, the log keeps them (``token_logprobs``)
  and each token's text (``tokens``), decoded from TRL's ``completion_ids`` by the trainer's
  ``processing_class``, so the extension shows the model's confidence on each roll-out's text
  (``token_logprobs=False``: the mean only, a smaller log). Log-probs that do not match the
  completion's token count are kept without the text (the panel then draws them as a curve).
- Self-certainty and token entropy (the confidence rewards ``selfcertainty``, ``entropy``):
  they need the full-vocabulary logits, which TRL 1.x never materialises (its fused LM head
  returns log-probs and entropies only). ``confidence_trainer()`` is a ``GRPOTrainer`` subclass
  that runs the policy's forward over each generation batch just before the rewards (the
  ``_calculate_rewards`` plug point) and hands every reward function ``cl_self_certainty``,
  ``cl_entropy``, ``cl_token_entropies`` and ``cl_logprobs`` (the sampled tokens' log-probs
  under the same distribution; a ``with_logprobs`` rollout_func's own are kept). This reward
  function sends them to the worker and logs them (``self_certainty``, ``entropy``,
  ``token_entropies`` per roll-out).
- ``log_extra`` (when TRL passes it) adds ``cl_label`` (the pseudo-label), ``cl_gate`` (CoRE's
  question gate) and ``cl_advantage`` columns to TRL's completions table, and with the
  subclass's values ``cl_self_certainty`` and ``cl_entropy``.
- A ``ground_truth``/``answer``/``solution`` column is logged as a diagnostic, never sent.
"""

import hashlib
import itertools
import json
import os
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .records import ground_truth_value, token_texts
from .reward import RewardWorker

__all__ = ["consensus_reward", "with_logprobs", "confidence_trainer", "prompt_text", "prompt_id", "GroupError"]

_TRUTH_COLUMNS = ("ground_truth", "answer", "solution")


class GroupError(ValueError):
    """The batch a reward function received is not made of whole groups."""


def _text(x: Any) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, Sequence) and x and isinstance(x[-1], Mapping):  # conversational: messages
        return str(x[-1].get("content", ""))
    return str(x)


def prompt_text(p: Any) -> str:
    """A prompt as the extension's TRL reader shows it: the string, the content of a single
    message, else the messages as compact JSON."""
    if isinstance(p, str):
        return p
    if isinstance(p, Sequence) and len(p) == 1 and isinstance(p[0], Mapping) and isinstance(p[0].get("content"), str):
        return p[0]["content"]
    return json.dumps(p, ensure_ascii=False, separators=(",", ":"), default=str)


def prompt_id(p: Any) -> str:
    """The question id the extension's TRL reader gives a prompt (``p-`` + 12 hex of its SHA-1)."""
    return "p-" + hashlib.sha1(prompt_text(p).encode("utf-8")).hexdigest()[:12]


def with_logprobs(rollout_func: Callable[..., Mapping[str, Any]], key: str = "cl_logprobs") -> Callable[..., Dict[str, Any]]:
    """Wraps a TRL ``rollout_func`` so its per-token ``logprobs`` also reach reward functions
    (TRL forwards a rollout_func's extra keys to them, but not ``logprobs`` itself)."""

    def wrapped(prompts: Any, trainer: Any) -> Dict[str, Any]:
        out = dict(rollout_func(prompts, trainer))
        out[key] = [list(x) for x in out["logprobs"]]
        return out

    wrapped.__name__ = getattr(rollout_func, "__name__", "rollout_func")
    return wrapped


def _mean(v: Any) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    vals = [float(x) for x in v if x is not None]
    return sum(vals) / len(vals) if vals else None


def _world(trainer: Any) -> int:
    acc = getattr(trainer, "accelerator", None)
    n = getattr(acc, "num_processes", None)
    if isinstance(n, int):
        return n
    dist = sys.modules.get("torch.distributed")  # not imported: not initialized either
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


def _rank(trainer: Any, default: int) -> int:
    acc = getattr(trainer, "accelerator", None)
    if isinstance(getattr(acc, "process_index", None), int):
        return acc.process_index
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return default


def _default_gather(trainer: Any) -> Callable[[List[Any]], List[Any]]:
    if getattr(trainer, "accelerator", None) is not None:
        from accelerate.utils import gather_object  # type: ignore

        return gather_object
    import torch.distributed as dist  # type: ignore

    def gather(xs: List[Any]) -> List[Any]:
        parts: List[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(parts, xs)
        return [x for part in parts for x in part]

    return gather


def consensus_reward(
    operator: str = "majority",
    params: Optional[Mapping[str, Any]] = None,
    *,
    log_dir: Optional[str] = None,
    question_key: str = "question_id",
    num_generations: Optional[int] = None,
    logprob_key: str = "cl_logprobs",
    token_logprobs: bool = True,
    log_extra_columns: bool = True,
    command: Union[None, str, Sequence[str]] = None,
    worker: Optional[RewardWorker] = None,
    rank: Optional[int] = None,
    gather: Optional[Callable[[List[Any]], List[Any]]] = None,
    logger: Any = None,
) -> Callable[..., List[float]]:
    """A TRL reward function (``prompts, completions, **kwargs -> list[float]``), named
    ``consensus_<operator>`` (TRL names its reward column after the function).

    ``num_generations``: the group size; default the trainer's (``num_generations``, or
    ``num_generations_eval`` in evaluation). ``gather``: collects a list from every process in
    rank order (default ``accelerate.utils.gather_object`` when the trainer runs on several).
    ``logger``: a ``RunLogger`` to log to instead of one made for ``log_dir`` (rank 0 only).
    ``token_logprobs``: log the per-token log-probs (``logprob_key``) and each token's text.
    """
    w = worker if worker is not None else RewardWorker(command, operator=operator, params=params)
    r = int(os.environ.get("RANK", "0")) if rank is None else rank
    # Rank 0 alone logs (the gathered, whole groups); the rank is known for sure only once the
    # trainer (or torch.distributed) is up, at the first call.
    state: Dict[str, Any] = {"logger": logger, "decided": logger is not None or not log_dir}

    def get_logger(trainer: Any) -> Any:
        if not state["decided"]:
            state["decided"] = True
            me = rank if rank is not None else _rank(trainer, r)
            if me == 0:
                from .logger import RunLogger
                state["logger"] = RunLogger(log_dir, rank=0, file_template="step_{step:06d}.rank{rank}.jsonl", records="rollout",
                                            keep_token_logprobs=token_logprobs)
            reward.logger = state["logger"]  # type: ignore[attr-defined]
        return state["logger"]

    calls = itertools.count(1)
    decoded: Dict[int, str] = {}  # token id -> text, shared across steps (token_texts)

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[float]:
        call = next(calls)
        n = len(completions)
        if len(prompts) != n:
            raise ValueError("prompts has %d items, completions %d" % (len(prompts), n))
        log_extra = kwargs.get("log_extra")
        trainer = getattr(log_extra, "__self__", None)  # TRL passes the trainer's bound method
        model = getattr(trainer, "model", None)
        training = bool(getattr(model, "training", True))
        tstate = kwargs.get("trainer_state")
        if tstate is not None:
            step = int(tstate.global_step) + (1 if training else 0)
        else:
            step = call
        g_size = num_generations
        setting = "consensus_reward(num_generations=%s)" % num_generations
        if g_size is None and trainer is not None:
            attr = "num_generations" if training else "num_generations_eval"
            g_size = getattr(trainer, attr, None) or getattr(trainer, "num_generations", None)
            setting = "GRPOConfig.%s=%s" % (attr, g_size)

        ids = kwargs.get(question_key)
        lps = kwargs.get(logprob_key)
        scs, ents, tents = kwargs.get("cl_self_certainty"), kwargs.get("cl_entropy"), kwargs.get("cl_token_entropies")
        cids = kwargs.get("completion_ids") if token_logprobs and lps is not None else None
        truths = next((kwargs[c] for c in _TRUTH_COLUMNS if kwargs.get(c) is not None), None)
        local = [{
            "prompt": prompts[i],
            "completion": _text(completions[i]),
            "qid": str(ids[i]) if ids is not None and ids[i] is not None else None,
            "lp": _mean(lps[i]) if lps is not None else None,
            "truth": ground_truth_value(truths[i]) if truths is not None else None,
            # Per-token values travel only when they are logged (rank 0 decodes the ids).
            "tlp": [float(x) for x in lps[i]] if token_logprobs and lps is not None and lps[i] is not None and not isinstance(lps[i], (int, float)) else None,
            "ids": [int(x) for x in cids[i]] if cids is not None and cids[i] is not None else None,
            "sc": scs[i] if scs is not None else None,
            "ent": ents[i] if ents is not None else None,
            "tent": tents[i] if tents is not None else None,
        } for i in range(n)]

        world = _world(trainer)
        offset = 0
        items = local
        if world > 1 or gather is not None:
            gat = gather or _default_gather(trainer)
            sizes = [int(x) for x in gat([n])]
            items = gat(local)
            me = rank if rank is not None else _rank(trainer, r)
            offset = sum(sizes[:me])
            world = len(sizes)
            if len(items) != sum(sizes):
                raise GroupError("gathered %d completions from %d processes, expected %d" % (len(items), world, sum(sizes)))

        blocks = _blocks(items, g_size, setting, world)
        groups = []
        seen: Dict[str, int] = {}
        for lo, hi in blocks:
            it = items[lo:hi]
            qid = it[0]["qid"] or prompt_id(it[0]["prompt"])
            seen[qid] = seen.get(qid, 0) + 1
            if seen[qid] > 1:  # the same prompt twice in one batch: two groups, as the reader names them
                qid = "%s#%d" % (qid, seen[qid])
            g: Dict[str, Any] = {"question_id": qid, "prompt": prompt_text(it[0]["prompt"]), "framework": "trl",
                                 "responses": [x["completion"] for x in it]}
            if any(x["lp"] is not None for x in it):
                g["mean_logprobs"] = [x["lp"] for x in it]
            # The logit-derived values go to the worker too: the confidence operators reward with them.
            for key, col in (("sc", "self_certainties"), ("ent", "entropies"), ("tent", "token_entropies")):
                if any(x.get(key) is not None for x in it):
                    g[col] = [x.get(key) for x in it]
            groups.append(g)
        results = w.score(groups, operator, params, step=step)

        rewards: List[float] = []
        labels: List[Optional[str]] = []
        gates: List[float] = []
        advs: List[float] = []
        for res in results:
            rewards.extend(float(x) for x in res["rewards"])
            advs.extend(float(x) for x in res["advantages"])
            labels.extend([res.get("label")] * len(res["rewards"]))
            gates.extend([float(res["gate"])] * len(res["rewards"]))
        mine = slice(offset, offset + n)
        if log_extra is not None and log_extra_columns:
            log_extra("cl_label", labels[mine])
            log_extra("cl_gate", gates[mine])
            log_extra("cl_advantage", advs[mine])
            if scs is not None:
                log_extra("cl_self_certainty", [x["sc"] for x in local])
            if ents is not None:
                log_extra("cl_entropy", [x["ent"] for x in local])
        # Evaluation batches are rewarded, not logged: TRL's step for them is the last training step,
        # whose roll-outs the log already holds under the same step and question ids.
        lg = get_logger(trainer) if training else None
        if lg is not None:
            tok = getattr(trainer, "processing_class", None)
            tok = tok if hasattr(tok, "decode") else getattr(tok, "tokenizer", None)
            for g, res, (lo, hi) in zip(groups, results, blocks):
                g["rewards"] = [float(x) for x in res["rewards"]]
                it = items[lo:hi]
                if any(x["tlp"] is not None for x in it):
                    g["token_logprobs"] = [x["tlp"] for x in it]
                    if tok is not None:
                        g["tokens"] = [token_texts(tok, x["ids"], decoded) if x["tlp"] is not None and x["ids"] is not None
                                       and len(x["ids"]) == len(x["tlp"]) else None for x in it]
                truth = items[lo]["truth"]
                if truth is not None:
                    g["ground_truth"] = truth
                g["extra"] = {"operator": operator, "label": res.get("label"), "gate": float(res["gate"])}
                if "self_certainties" in g or "entropies" in g:  # the distribution they were computed on
                    g["extra"]["temperature"] = float(getattr(trainer, "temperature", 1.0))
            lg.log_step(step, groups)
        return rewards[mine]

    reward.__name__ = "consensus_%s" % operator
    reward.logger = logger  # type: ignore[attr-defined]  # set at the first call when made from log_dir
    reward.worker = w  # type: ignore[attr-defined]
    return reward


def confidence_trainer(base: Any = None) -> Any:
    """A subclass of TRL's ``GRPOTrainer`` (or ``base``) that computes, for every generation batch,
    each roll-out's self-certainty and token entropies from the policy's full-vocabulary logits
    (``consensus_lens.confidence``, at the trainer's ``temperature``) before the rewards, and hands
    them to every reward function as ``cl_self_certainty`` (float), ``cl_entropy`` (float),
    ``cl_token_entropies`` (list) and ``cl_logprobs`` (the sampled tokens' log-probs, unless a
    rollout_func gave its own)::

        from consensus_lens.trl import confidence_trainer, consensus_reward
        trainer = confidence_trainer()(model=..., reward_funcs=[consensus_reward("selfcertainty", log_dir=...)], ...)

    The forward is TRL's own model call without its fused head (``logits_to_keep`` = completion
    length + 1, position ids from the attention mask as generation counts them, no gradient, micro-batches of ``per_device_train_batch_size``, the logits of one
    micro-batch in memory at a time; ``confidence_batch_size`` in the constructor lowers it).
    Text-only: a batch with images is refused (the forward would need TRL's multimodal inputs)."""
    if base is None:
        from trl import GRPOTrainer  # type: ignore

        base = GRPOTrainer

    class ConfidenceGRPOTrainer(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, confidence_batch_size: Optional[int] = None, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.confidence_batch_size = confidence_batch_size
            self._cl_ids: Any = None

        def _generate(self, prompts: Any) -> Any:
            out = super()._generate(prompts)
            self._cl_ids = (out[0], out[1])  # prompt_ids_list, completion_ids_list (TRL 1.x order)
            return out

        def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
            if self._cl_ids is None or len(self._cl_ids[1]) != len(inputs):
                raise RuntimeError("confidence_trainer: the generation batch's token ids were not seen (TRL's _generate changed?)")
            if any(x.get("image") is not None or x.get("images") for x in inputs):
                raise ValueError("confidence_trainer: batches with images are not supported (text-only forward)")
            prompt_ids, completion_ids = self._cl_ids
            self._cl_ids = None
            stats = self._cl_confidence(prompt_ids, completion_ids)
            for inp, st in zip(inputs, stats):
                inp["cl_self_certainty"] = st["self_certainty"]
                inp["cl_entropy"] = st["entropy"]
                inp["cl_token_entropies"] = st["token_entropies"]
                if inp.get("cl_logprobs") is None:
                    inp["cl_logprobs"] = st["token_logprobs"]
            return super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)

        def _cl_confidence(self, prompt_ids: Sequence[Sequence[int]], completion_ids: Sequence[Sequence[int]]) -> List[Dict[str, Any]]:
            import torch

            from .confidence import rollout_stats

            device = self.accelerator.device
            pad_id = self.processing_class.pad_token_id if getattr(self.processing_class, "pad_token_id", None) is not None \
                else self.processing_class.tokenizer.pad_token_id
            mode = "train" if self.model.training else "eval"
            bs = self.confidence_batch_size or (self.args.per_device_train_batch_size if mode == "train" else self.args.per_device_eval_batch_size)
            out: List[Dict[str, Any]] = []
            for lo in range(0, len(completion_ids), bs):
                p = [list(x) for x in prompt_ids[lo:lo + bs]]
                c = [list(x) for x in completion_ids[lo:lo + bs]]
                pl, cl = max(len(x) for x in p), max(max(len(x) for x in c), 1)
                # Prompts left-padded, completions right-padded: TRL's layout for its own forward.
                ids = torch.tensor([[pad_id] * (pl - len(a)) + a + b + [pad_id] * (cl - len(b)) for a, b in zip(p, c)], device=device)
                att = torch.tensor([[0] * (pl - len(a)) + [1] * (len(a) + len(b)) + [0] * (cl - len(b)) for a, b in zip(p, c)], device=device)
                mask = att[:, pl:]
                # Positions from the attention mask, as generation numbers them: the values do not
                # depend on how much left padding a micro-batch happens to need.
                pos = (att.cumsum(-1) - 1).clamp(min=0)
                with torch.no_grad(), self.accelerator.autocast():
                    logits = self.model(input_ids=ids, attention_mask=att, position_ids=pos, logits_to_keep=cl + 1,
                                        use_cache=False).logits
                out.extend(rollout_stats(logits[:, :-1, :], ids[:, pl:], mask, self.temperature))
                del logits
            return out

    ConfidenceGRPOTrainer.__name__ = ConfidenceGRPOTrainer.__qualname__ = "Confidence" + getattr(base, "__name__", "GRPOTrainer")
    return ConfidenceGRPOTrainer


def _blocks(items: List[Dict[str, Any]], g_size: Optional[int], setting: str, world: int) -> List[Any]:
    """The groups as (start, end) row ranges: TRL's blocks of ``g_size`` rows, each one prompt."""
    n = len(items)
    if g_size is None:
        # Called outside a trainer without num_generations: runs of identical prompts.
        out = []
        lo = 0
        for i in range(1, n + 1):
            if i == n or prompt_text(items[i]["prompt"]) != prompt_text(items[lo]["prompt"]):
                out.append((lo, i))
                lo = i
        return out
    where = "the %s batch" % ("gathered" if world > 1 else "reward function's")
    if g_size < 1 or n % g_size:
        raise GroupError(
            "%s has %d completions, not a multiple of the group size (%s): a consensus reward needs every group "
            "whole. Make the per-process generation batch (per_device_train_batch_size × steps_per_generation) a "
            "multiple of num_generations, or pass num_generations= to consensus_reward matching the trainer"
            % (where, n, setting))
    out = []
    for lo in range(0, n, g_size):
        first = prompt_text(items[lo]["prompt"])
        for i in range(lo + 1, lo + g_size):
            if prompt_text(items[i]["prompt"]) != first or items[i]["qid"] != items[lo]["qid"]:
                raise GroupError(
                    "rows %d-%d of %s should be one group of %d (%s) but row %d has another prompt: the batch is "
                    "not whole groups (a group split across processes, or num_generations not the trainer's)"
                    % (lo, lo + g_size - 1, where, g_size, setting, i))
        out.append((lo, lo + g_size))
    return out


def _dry_run(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m consensus_lens.trl --dry-run``: calls the reward function the way GRPOTrainer
    does, on a made-up batch, through the real reward worker, and prints what the trainer gets."""
    import argparse
    import types

    ap = argparse.ArgumentParser(prog="python -m consensus_lens.trl", description=_dry_run.__doc__)
    ap.add_argument("--dry-run", action="store_true", required=True)
    ap.add_argument("--operator", default="majority")
    ap.add_argument("--params", default="{}", help="operator parameters as JSON, e.g. '{\"kappa\": 0.1}'")
    ap.add_argument("--num-generations", type=int, default=4, help="GRPOConfig.num_generations")
    ap.add_argument("--per-device-train-batch-size", type=int, default=8, help="GRPOConfig.per_device_train_batch_size")
    ap.add_argument("--steps-per-generation", type=int, default=1, help="GRPOConfig.steps_per_generation")
    ap.add_argument("--global-step", type=int, default=0, help="trainer_state.global_step when the batch is scored")
    a = ap.parse_args(argv)
    rows = a.per_device_train_batch_size * a.steps_per_generation
    answers = ["7", "7", "8", "7", "12", "7", "8", "8"]
    prompts = ["What is %d+4?" % (3 + i // a.num_generations) for i in range(rows)]
    completions = ["so the answer is \\boxed{%s}" % answers[i % len(answers)] for i in range(rows)]
    extra: Dict[str, List[Any]] = {}

    class Trainer:  # what the reward function reads of GRPOTrainer
        num_generations = a.num_generations
        num_generations_eval = a.num_generations
        model = types.SimpleNamespace(training=True)

        def log_extra(self, column: str, values: List[Any]) -> None:
            extra.setdefault(column, []).extend(values)

    t = Trainer()
    fn = consensus_reward(a.operator, json.loads(a.params))
    try:
        out = fn(prompts=prompts, completions=completions, trainer_state=types.SimpleNamespace(global_step=a.global_step),
                 log_extra=t.log_extra, log_metric=lambda *x: None)
    except GroupError as e:
        print("the trainer would stop with: GroupError: %s" % e)
        return 2
    finally:
        fn.worker.close()
    print("reward function %s, step %d (TRL's completions table names this batch step %d)" % (fn.__name__, a.global_step + 1, a.global_step + 1))
    print("%-14s %-32s %8s  %s" % ("prompt", "completion", "reward", "  ".join(sorted(extra))))
    for i in range(rows):
        print("%-14s %-32s %8.4f  %s" % (prompts[i], completions[i], out[i], "  ".join(str(extra[k][i]) for k in sorted(extra))))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_dry_run())
