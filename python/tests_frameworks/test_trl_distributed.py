"""A group split across two processes (torch.distributed, gloo, on the CPU): the reward function
gathers the slices, scores whole groups on every rank and returns each rank its own slice."""
import json
import os
import socket

import torch.distributed as dist
import torch.multiprocessing as mp

from consensus_lens.reward import RewardWorker
from consensus_lens.trl import consensus_reward

N = 4
# one generation batch of 2 questions × 4, split 3 / 5 between two ranks: both groups straddle
PROMPTS = ["What is 3+4?"] * N + ["What is 2*5?"] * N
ANSWERS = ["7", "7", "8", "7", "10", "25", "10", "7"]
SPLIT = {0: slice(0, 3), 1: slice(3, 8)}


def _rank(rank, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        with RewardWorker(operator="majority") as w:
            fn = consensus_reward("majority", worker=w, num_generations=N, log_dir=os.path.join(out, "log"))
            s = SPLIT[rank]
            got = fn(prompts=PROMPTS[s], completions=["\\boxed{%s}" % a for a in ANSWERS[s]])
            if fn.logger is not None:
                fn.logger.close()
        with open(os.path.join(out, "rank%d.json" % rank), "w") as f:
            json.dump(got, f)
    finally:
        dist.destroy_process_group()


def test_split_groups_are_gathered_across_ranks(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_rank, args=(port, str(tmp_path)), nprocs=2, join=True)
    r0 = json.load(open(tmp_path / "rank0.json"))
    r1 = json.load(open(tmp_path / "rank1.json"))
    assert r0 + r1 == [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]  # each group scored whole
    # rank 0 alone logs, the whole groups
    files = os.listdir(tmp_path / "log")
    assert files == ["step_000001.rank0.jsonl"]
    with open(tmp_path / "log" / files[0]) as f:
        assert len(f.readlines()) == 2 * N
