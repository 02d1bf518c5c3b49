"""Consensus Lens, Python side: log what test-time-RL operators need, and reward with the same engine.

Standard library only, Python >= 3.9.

- ``RunLogger``: writes the native format (docs/contract.md#native-format) from a training loop, one file per step.
- ``RewardWorker`` / ``compute_score``: the ``consensus-lens serve --stdio`` reward worker and a
  verl-shaped batch reward function on top of it (``consensus_lens.reward``).
- ``consensus_lens.verl``: turn a verl ``DataProto`` batch into groups (responses, mean
  log-probs from ``rollout_log_probs``/``old_log_probs`` under ``response_mask``, ``uid``), and
  ``ConsensusRewardManager``, a verl reward manager that rewards with confidence.
See docs/training-loop.md.
"""

from .logger import RunLogger
from .records import RecordError, group_record
from .reward import (
    RewardWorker,
    WorkerDied,
    WorkerError,
    WorkerProtocolError,
    WorkerRequestError,
    compute_score,
)

__all__ = [
    "RunLogger", "RecordError", "group_record", "RewardWorker", "WorkerError", "WorkerDied",
    "WorkerProtocolError", "WorkerRequestError", "compute_score",
]
__version__ = "0.1.0"
