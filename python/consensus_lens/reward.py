"""Reward client: the training loop's rewards from the same engine the extension uses.

Standard library only, Python >= 3.9.

It starts ``consensus-lens serve --stdio`` once (docs/contract.md#command-line), sends one JSON line per batch of
groups and reads one JSON line back. If the worker dies it is restarted and the batch is sent
again (once); an answer that does not fit the request is an error, never a silent zero reward.
(A worker whose threads died too often exits, status 75, rather than refuse every later request:
any exit is a death here.)

Answers are never read for the wrong request: the whole batch is encoded (and so validated: NaN,
objects JSON cannot hold) before the first byte is sent; every request line carries an ``id``
that the worker echoes and the client checks; and any failure between sending and reading the
last answer (a timeout, a protocol error, an interrupt) kills the worker, so no stale answer can
be waiting in its output for the next call.
Ground truth is stripped from every group before it is sent: no operator ever sees it.

Two entry points:

- ``RewardWorker(...).score(groups, operator="core", params={...})`` → one result per group,
  ``{"step", "question_id", "label", "rewards", "gate", "advantages"}`` in request order.
- ``compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kw)`` → one float
  per roll-out, shaped like verl's batch reward function (``reward_model.reward_manager=batch``
  with ``custom_reward_function.path`` pointing at this file, ``name=compute_score``).
  Roll-outs are grouped by ``extra_info[group_key]`` (default ``"index"``, which verl's data
  preprocessors put in ``extra_info``); see docs/training-loop.md.

The worker command is, in order: the ``command`` argument; ``$CONSENSUS_LENS_WORKER`` (a shell
string, e.g. ``node /path/to/dist/cli.js``); the engine the installed wheel carries
(``packaged_engine``); ``consensus-lens`` on ``PATH``; ``node`` with the ``dist/cli.js`` of the
repository this file lives in. ``serve --stdio`` is appended.

MS-TTRL's three-state cache lives in the worker process, one run context per process: it
spans the steps a worker has scored, and a restart starts it afresh (``restarts`` counts them).
"""

import atexit
import json
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

try:
    from .records import ground_truth_value
    from .reward_worker import RewardWorker, WorkerDied, WorkerError, WorkerProtocolError, WorkerRequestError, default_command, packaged_engine
except ImportError:  # loaded by file path (verl's custom_reward_function.path): no package
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from consensus_lens.records import ground_truth_value  # type: ignore
    from consensus_lens.reward_worker import (  # type: ignore
        RewardWorker, WorkerDied, WorkerError, WorkerProtocolError, WorkerRequestError, default_command, packaged_engine,
    )

__all__ = [
    "RewardWorker", "WorkerError", "WorkerDied", "WorkerProtocolError", "WorkerRequestError",
    "compute_score", "default_command", "get_worker", "packaged_engine",
]

# ---- verl's batch reward function -----------------------------------------------------------

_workers: Dict[str, RewardWorker] = {}
_workers_lock = threading.Lock()
_step_counter = [0]


def get_worker(command: Union[None, str, Sequence[str]] = None, **kwargs: Any) -> RewardWorker:
    """The process-wide worker for ``command`` (started on first request, closed at exit)."""
    key = json.dumps(command if command is None or isinstance(command, str) else list(command))
    with _workers_lock:
        w = _workers.get(key)
        if w is None:
            w = RewardWorker(command, **kwargs)
            _workers[key] = w
        return w


@atexit.register
def _close_workers() -> None:
    for w in list(_workers.values()):
        try:
            w.close()
        except Exception:
            pass


_pools: Dict[Any, Any] = {}


def _get_pool(num_actors: int, command: Union[None, str, Sequence[str]]) -> Any:
    from .ray_pool import RewardPool

    key = (num_actors, json.dumps(command if command is None or isinstance(command, str) else list(command)))
    with _workers_lock:
        if key not in _pools:
            _pools[key] = RewardPool(num_actors=num_actors, command=command)
        return _pools[key]


def _extra_get(extra: Any, key: str) -> Any:
    if isinstance(extra, Mapping):
        return extra.get(key)
    return None


def compute_score(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Optional[Sequence[Any]] = None,
    extra_infos: Optional[Sequence[Any]] = None,
    *,
    operator: Optional[str] = None,
    params: Optional[Mapping[str, Any]] = None,
    group_key: Union[str, Callable[[int, Any, Any], Any]] = "index",
    step: Optional[int] = None,
    command: Union[None, str, Sequence[str]] = None,
    return_dict: bool = False,
    log_dir: Optional[str] = None,
    num_actors: int = 1,
    **unused: Any,
) -> List[Any]:
    """verl-shaped batch reward: one reward per roll-out, in input order.

    - Groups: roll-outs with the same ``(data_source, extra_info[group_key])``; ``group_key``
      may be a callable ``(i, data_source, extra_info) -> key``. A roll-out without a key is an
      error (a silent wrong grouping would train on wrong rewards). Group order and roll-out
      order within a group follow the input.
    - ``operator`` defaults to ``$CONSENSUS_LENS_OPERATOR`` or ``"majority"``, ``params`` to
      ``$CONSENSUS_LENS_PARAMS`` (JSON). verl passes ``custom_reward_function.reward_kwargs``
      here as keyword arguments.
    - ``ground_truths`` is accepted for the signature and never sent to the operator; with
      ``log_dir`` it is written to the log as a diagnostic, together with the rewards used.
    - ``step``: written into the groups (the worker's MS-TTRL cache orders by it); default: the
      number of calls in this process.
    - ``return_dict``: return ``{"score", "cl_gate", "cl_advantage"}`` per roll-out instead of a
      float; verl's batch manager puts the extra keys in ``reward_extra_info``.
    - ``num_actors`` > 1: reward on a ``consensus_lens.ray.RewardPool`` of that many Ray actors
      (one per process, kept across calls) instead of the local worker (docs/scale.md).
    No log-probs pass through this signature: ``core`` runs as ``ec`` here (docs/contract.md#ec-and-core); feed
    ``mean_logprob`` through ``RewardWorker.score`` from a reward manager for CoRE with confidence.
    """
    n = len(solution_strs)
    if len(data_sources) != n:
        raise ValueError("data_sources has %d items, solution_strs %d" % (len(data_sources), n))
    if extra_infos is None:
        extra_infos = [None] * n
    if len(extra_infos) != n:
        raise ValueError("extra_infos has %d items, solution_strs %d" % (len(extra_infos), n))
    op = operator or os.environ.get("CONSENSUS_LENS_OPERATOR") or "majority"
    if params is None:
        env_params = os.environ.get("CONSENSUS_LENS_PARAMS")
        params = json.loads(env_params) if env_params else {}
    if step is None:
        _step_counter[0] += 1
        step = _step_counter[0]

    order: List[Any] = []
    members: Dict[Any, List[int]] = {}
    for i in range(n):
        ds = data_sources[i]
        ds = ds.item() if hasattr(ds, "item") else ds
        if callable(group_key):
            k = group_key(i, ds, extra_infos[i])
        else:
            k = _extra_get(extra_infos[i], group_key)
        if k is None:
            raise ValueError(
                "roll-out %d has no group key: extra_info[%r] is missing. Put a per-question id in "
                "extra_info (verl's preprocessors write 'index') or pass group_key=" % (i, group_key)
            )
        k = k.item() if hasattr(k, "item") else k
        key = (str(ds), str(k))
        if key not in members:
            members[key] = []
            order.append(key)
        members[key].append(i)

    specs = []
    for ds, k in order:
        idx = members[(ds, k)]
        spec: Dict[str, Any] = {
            "question_id": "%s/%s" % (ds, k) if ds not in ("None", "") else k,
            "responses": [str(solution_strs[i]) for i in idx],
        }
        specs.append(spec)
    worker: Any = get_worker(command) if num_actors <= 1 else _get_pool(num_actors, command)
    results = worker.score(specs, op, params, step=step)

    rewards: List[float] = [0.0] * n
    gates: List[float] = [1.0] * n
    advs: List[float] = [0.0] * n
    for (key, res) in zip(order, results):
        for j, i in enumerate(members[key]):
            rewards[i] = float(res["rewards"][j])
            advs[i] = float(res["advantages"][j])
            gates[i] = float(res["gate"])

    if log_dir:
        _log_step(log_dir, step, op, order, members, specs, rewards, ground_truths, extra_infos)

    if return_dict:
        return [{"score": rewards[i], "cl_gate": gates[i], "cl_advantage": advs[i]} for i in range(n)]
    return rewards


_loggers: Dict[str, Any] = {}


def _log_step(log_dir, step, op, order, members, specs, rewards, ground_truths, extra_infos) -> None:
    try:
        from .logger import RunLogger
    except ImportError:
        from consensus_lens.logger import RunLogger  # type: ignore
    lg = _loggers.get(log_dir)
    if lg is None:
        lg = _loggers[log_dir] = RunLogger(log_dir)
    groups = []
    for key, spec in zip(order, specs):
        idx = members[key]
        g = dict(spec)
        g["rewards"] = [rewards[i] for i in idx]
        if ground_truths is not None and ground_truth_value(ground_truths[idx[0]]) is not None:
            g["ground_truth"] = ground_truth_value(ground_truths[idx[0]])
        g["extra"] = {"operator": op}
        groups.append(g)
    lg.log_step(step, groups)
