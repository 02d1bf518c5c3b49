"""Consensus Lens, Python side: log what test-time-RL operators need, and reward with the same engine.

Standard library only, Python >= 3.9.

- ``RunLogger``: writes the native format (docs/contract.md#native-format) from a training loop, one file per step.
- ``RewardWorker`` / ``compute_score``: the ``consensus-lens serve --stdio`` reward worker and a
  verl-shaped batch reward function on top of it (``consensus_lens.reward``).
- ``consensus_lens.verl_v1``: verl 0.9.1's V1 trainer (its default): a reward manager whose
  per-sample ``run_single`` meets its uid group at a Ray rendezvous (imports verl).
- ``consensus_lens.verl``: verl 0.9.1's legacy-trainer consensus hook between ``extract_reward`` and
  ``compute_advantage`` (``consensus_trainer``, ``ConsensusHook``), TTRL's swap
  (``apply_consensus_gt``), and ``groups_from_batch`` (a ``DataProto`` batch as groups).
- ``consensus_lens.trl``: a ``GRPOTrainer`` reward function on TRL's own groups and steps.
- ``consensus_lens.nemo``: NeMo RL's reward shaping and environment step, on its data shapes.
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
