"""TRL 1.16's async GRPO scores one whole group per call (_AsyncRolloutLoop._score_group, with
no trainer_state or log_extra): our reward function on that real code path."""
import asyncio

import numpy as np
from accelerate import PartialState
from trl.experimental.async_grpo.async_rollout_worker import RolloutGroup, TrainingSequence, _AsyncRolloutLoop

from consensus_lens.reward import RewardWorker
from consensus_lens.trl import consensus_reward

N = 4


def test_score_group_rewards_the_whole_group_with_the_consensus():
    PartialState()  # the rollout process has one: _score_group logs through accelerate
    with RewardWorker(operator="majority") as worker:
        reward = consensus_reward("majority", worker=worker, num_generations=N)
        loop = object.__new__(_AsyncRolloutLoop)  # the scoring state _score_group reads
        loop.reward_funcs = [reward]
        loop.reward_func_names = [reward.__name__]
        loop._env_reward_types = []
        answers = ["7", "8", "7", "7"]
        prompt = [{"role": "user", "content": "What is 3+4?"}]
        group = RolloutGroup(
            prompts=[prompt] * N,
            reward_kwargs={"answer": ["7"] * N},
            completions=[[{"role": "assistant", "content": "so \\boxed{%s}" % a}] for a in answers],
            completions_ids=[[1, 2, 3]] * N,
            completions_sequences=[[TrainingSequence([5, 1, 2, 3], [0, 1, 1, 1], [0.0, -0.1, -0.2, -0.3], "r%d" % i)] for i in range(N)],
            tool_call_counts=[0] * N, tool_failure_counts=[0] * N, model_version=3, group_id=0,
            env_rewards=[None] * N, rollout_rewards=[None] * N)
        samples = asyncio.run(loop._score_group(group))
        assert worker.requests == 1
    rewards = [s.metrics["reward"] for s in samples]
    assert rewards == [1.0, 0.0, 1.0, 1.0]
    # the async path's own advantage: population std and 1e-8 (not GRPOTrainer's formula)
    r = np.array(rewards)
    assert [s.advantage for s in samples] == list((r - r.mean()) / (r.std() + 1e-8))
