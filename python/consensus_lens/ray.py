"""Consensus Lens on a Ray cluster (docs/scale.md).

- ``RewardPool(num_actors=…, operator=…, params=…)``: rewards from a pool of Ray actors, each
  holding one reward worker (``serve --stdio``). A question always goes to the same actor (its
  id's bucket, as ``--shard``), so MS-TTRL's outcome cache sees each question in step order; each
  actor has at most ``max_in_flight`` requests outstanding. ``score`` has the signature and the
  results of ``RewardWorker.score``.
- ``python -m consensus_lens.ray sweep|score PATH --address ADDR [consensus-lens flags]``: the
  output of ``consensus-lens sweep|score PATH …``, computed by Ray tasks, one per bucket of
  questions (``--shard i/K``), merged on the driver: sweep from counts and sums, score in run
  order, streamed.

Failures (docs/scale.md#what-is-and-is-not-guaranteed): an actor that dies mid-step has its groups re-scored on a
replacement actor, which gives identical results for every operator but MS-TTRL; with MS-TTRL
the actor's outcome cache is gone, so the step fails (``ActorLost``) and so does every later
MS-TTRL step until ``reset()``: never a reward from a cache that silently started afresh. A sweep
or score task lost with its node (or its worker process, or its engine process) is retried by
Ray (``max_retries``); its output is a function of the run alone, so the merged result is the
same.

Ray is imported on first use: ``pip install "consensus-lens[ray]"`` or any Ray the cluster runs.
"""

import os
import sys

from .ray_pool import ActorLost, PoolError, RewardPool, question_bucket
from .ray_shards import exit_status, main, merge_sweep, run_score, run_sweep, sweep_line

__all__ = ["RewardPool", "ActorLost", "PoolError", "question_bucket", "run_sweep", "run_score", "main", "exit_status", "merge_sweep", "sweep_line"]


def cli() -> int:
    """``python -m consensus_lens.ray``: stdout carries the result lines and nothing else. Ray's
    driver prints what it hears from the cluster (a node marked dead, a worker's error) to its
    standard output; here that goes to stderr, and the results to the original stdout."""
    sys.stdout.flush()
    result = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1 << 16)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        return main(sys.argv[1:], result, sys.stderr)
    finally:
        try:
            result.flush()
        except BrokenPipeError:
            pass


if __name__ == "__main__":
    # Run as `python -m consensus_lens.ray`: call the package module's own entry (the tasks Ray
    # ships are functions of consensus_lens.ray_shards, imported on the workers, not of __main__).
    from consensus_lens.ray import cli as _cli

    sys.exit(_cli())
