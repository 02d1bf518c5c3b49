"""``python -m consensus_lens.verl --dry-run``: what verl's trainer would receive from the consensus
reward, on a made-up batch through verl's own classes (docs/training-loop.md §3). Kept apart from
the hooks in ``verl.py``: it needs torch and verl, which the hooks import only when called."""

from typing import Any, List, Optional, Sequence

from .verl import GroupError, use_consensus


class _CharTokenizer:
    """Ids are character codes (0: padding): enough to decode the dry run's made-up responses."""

    pad_token_id = 0

    def encode(self, text: str) -> List[int]:
        return [ord(c) for c in text]

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join(chr(i) for i in ids if i != 0)


def _dry_run(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m consensus_lens.verl --dry-run [--config ppo.yaml] [key=value ...]``: builds a
    made-up batch (verl's DataProto, uids) and prints what the trainer receives, with the settings
    under ``consensus_lens.*``. The V1 trainer (``trainer.use_v1=True``, verl 0.9.1's default): each
    sample goes alone, in shuffled order, through ``consensus_lens.verl_v1``'s reward manager
    (``run_single``), which meets its uid group at the rendezvous (in-process here, a named Ray
    actor in the trainer); then verl's ``assemble_rm_scores`` and ``compute_advantage`` (GRPO). The
    legacy trainer (``trainer.use_v1=False``): the consensus hook on the whole batch through verl's
    own ``extract_reward`` and ``compute_advantage``."""
    import argparse

    import numpy as np
    import torch
    from omegaconf import OmegaConf  # type: ignore
    from verl import DataProto  # type: ignore
    from verl.trainer.ppo.core_algos import AdvantageEstimator  # type: ignore
    from verl.trainer.ppo.ray_trainer import compute_advantage  # type: ignore
    from verl.trainer.ppo.reward import extract_reward  # type: ignore

    ap = argparse.ArgumentParser(prog="python -m consensus_lens.verl", description=_dry_run.__doc__)
    ap.add_argument("--dry-run", action="store_true", required=True)
    ap.add_argument("--config", help="a YAML file of your trainer config (the keys used: actor_rollout_ref.rollout.n, consensus_lens.*)")
    ap.add_argument("overrides", nargs="*", help="Hydra-style overrides, e.g. +consensus_lens.operator=core actor_rollout_ref.rollout.n=8")
    a = ap.parse_args(argv)
    cfg = OmegaConf.load(a.config) if a.config else OmegaConf.create({})
    cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist([o.lstrip("+") for o in a.overrides]))
    n = int(OmegaConf.select(cfg, "actor_rollout_ref.rollout.n", default=4))
    use_v1 = bool(OmegaConf.select(cfg, "trainer.use_v1", default=True))
    if "consensus_lens" not in cfg:
        cfg.consensus_lens = {}
    OmegaConf.update(cfg, "actor_rollout_ref.rollout.n", n, force_add=True)
    tok = _CharTokenizer()
    answers = ["7", "7", "8", "7", "12", "7", "8", "8"]
    texts = ["so the answer is \\boxed{%s}" % answers[i % len(answers)] for i in range(2 * n)]
    width = max(len(t) for t in texts) + 1
    resp = torch.zeros((2 * n, width), dtype=torch.long)
    for i, t in enumerate(texts):
        resp[i, :len(t)] = torch.tensor(tok.encode(t))
    mask = (resp != 0).long()
    prompts = torch.tensor([tok.encode("What is %d+4?" % (3 + i // n)) for i in range(2 * n)])
    data = DataProto.from_dict(
        tensors={"prompts": prompts, "responses": resp, "response_mask": mask,
                 "attention_mask": torch.cat([torch.ones_like(prompts), mask], 1),
                 "rollout_log_probs": torch.where(mask.bool(), torch.tensor(-0.3), torch.tensor(0.0))},
        non_tensors={"uid": np.array(["uid-%d" % (i // n) for i in range(2 * n)], dtype=object),
                     "data_source": np.array(["lighteval/MATH"] * (2 * n), dtype=object),
                     "reward_model": np.array([{"ground_truth": str(7 + i // n), "style": "rule"} for i in range(2 * n)], dtype=object),
                     "extra_info": np.array([{"index": i // n} for i in range(2 * n)], dtype=object)})

    if use_v1:
        return _dry_run_v1(cfg, n, data, texts, tok)

    class Trainer:
        config = cfg
        tokenizer = tok
        global_steps = 1

    try:
        with use_consensus(Trainer()) as hook:
            import verl.trainer.ppo.ray_trainer as rt  # type: ignore

            reward_tensor, extra = rt.extract_reward(data)
            hook.worker.close()
    except (GroupError, ValueError) as e:
        print("the trainer would stop with: %s: %s" % (type(e).__name__, e))
        return 2
    data.batch["token_level_scores"] = reward_tensor
    data.batch["token_level_rewards"] = reward_tensor
    data = compute_advantage(data, adv_estimator=AdvantageEstimator.GRPO, num_repeat=n, norm_adv_by_std_in_grpo=True,
                             config=OmegaConf.create({}))
    print("consensus_lens: %s; actor_rollout_ref.rollout.n=%d; step logged = trainer.global_steps (1 here)"
          % (OmegaConf.to_container(cfg.consensus_lens), n))
    keys = sorted(extra)
    print("%-6s %-30s %6s %9s  %s" % ("uid", "response", "reward", "advantage", "  ".join(keys)))
    for i in range(len(texts)):
        rm = data.non_tensor_batch["reward_model"][i]
        adv = float(data.batch["advantages"][i][0])
        print("%-6s %-30s %6.3f %9.4f  %s   ground_truth=%s%s" % (
            data.non_tensor_batch["uid"][i], texts[i], float(reward_tensor[i].sum()), adv,
            "  ".join(str(extra[k][i]) for k in keys), rm.get("ground_truth"),
            " (original_gt=%s)" % rm["original_gt"] if "original_gt" in rm else ""))
    return 0


def _dry_run_v1(cfg: Any, n: int, data: Any, texts: List[str], tok: Any) -> int:
    import asyncio
    import random

    import numpy as np
    from omegaconf import OmegaConf  # type: ignore
    from verl.trainer.ppo.core_algos import AdvantageEstimator  # type: ignore
    from verl.trainer.ppo.ray_trainer import compute_advantage  # type: ignore

    from .verl_v1 import ConsensusRewardManagerV1, GroupRendezvous, rendezvous_options

    b = len(texts)
    # What V1's agent loop passes with every sample: its prompt's uid, its session, the step, and
    # the output's extra_fields, where ConfidenceSingleTurnAgentLoop puts the token log-probs (the
    # reward call carries no log-prob tensor).
    data.non_tensor_batch["session_id"] = np.array([i % n for i in range(b)], dtype=object)
    data.non_tensor_batch["global_steps"] = np.array([1] * b, dtype=object)
    lp, mask = data.batch["rollout_log_probs"], data.batch["response_mask"]
    data.non_tensor_batch["tool_extra_fields"] = np.array(
        [{"rollout_log_probs": [float(x) for x, m in zip(lp[i].tolist(), mask[i].tolist()) if m]} for i in range(b)], dtype=object)
    del data.batch["rollout_log_probs"]
    try:
        opts = rendezvous_options(cfg)
    except ValueError as e:
        print("the trainer would stop with: %s: %s" % (type(e).__name__, e))
        return 2
    rdv = GroupRendezvous(opts["n"], opts["operator"], opts["params"], group_timeout=opts["group_timeout"],
                          log_dir=opts["log_dir"], token_logprobs=opts["token_logprobs"])
    manager = ConsensusRewardManagerV1(cfg, tok, None, rendezvous=rdv)
    order = list(range(b))
    random.Random(0).shuffle(order)

    async def reward_all() -> List[Any]:
        return list(await asyncio.gather(*[manager.run_single(data[i:i + 1]) for i in order]))

    try:
        outs = asyncio.run(reward_all())
    except (GroupError, ValueError) as e:
        print("the trainer would stop with: %s: %s" % (type(e).__name__, e))
        return 2
    finally:
        rdv.close()
    by_row = dict(zip(order, outs))
    scores = [float(by_row[i]["reward_score"]) for i in range(b)]
    rm_scores = ConsensusRewardManagerV1.assemble_rm_scores(data, scores)  # verl's placement
    data.batch["token_level_scores"] = rm_scores
    data.batch["token_level_rewards"] = rm_scores
    data = compute_advantage(data, adv_estimator=AdvantageEstimator.GRPO, num_repeat=n, norm_adv_by_std_in_grpo=True,
                             config=OmegaConf.create({}))
    print("V1 trainer (trainer.use_v1=True, verl's default): reward.reward_manager.name=ConsensusRewardManagerV1; consensus_lens: %s; "
          "actor_rollout_ref.rollout.n=%d; samples rewarded one by one in the order %s, met by uid; step logged = global_steps (1 here)"
          % (OmegaConf.to_container(cfg.consensus_lens), n, order))
    keys = sorted(outs[0]["reward_extra_info"])
    print("%-6s %-7s %-30s %6s %9s  %s" % ("uid", "session", "response", "reward", "advantage", "  ".join(keys)))
    for i in range(b):
        extra = by_row[i]["reward_extra_info"]
        print("%-6s %-7d %-30s %6.3f %9.4f  %s" % (
            data.non_tensor_batch["uid"][i], i % n, texts[i], float(rm_scores[i].sum()), float(data.batch["advantages"][i][0]),
            "  ".join(str(extra[k]) for k in keys)))
    cl = OmegaConf.to_container(cfg.consensus_lens)
    flat: List[str] = []
    for k, v in cl.items():
        flat += ["+consensus_lens.params.%s=%s" % (pk, pv) for pk, pv in v.items()] if isinstance(v, dict) else ["+consensus_lens.%s=%s" % (k, v)]
    print("on a GPU node (verl 0.9.1 with its verl-core extra, TransferQueue): python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
          "actor_rollout_ref.rollout.n=%d actor_rollout_ref.rollout.calculate_log_probs=True "
          "actor_rollout_ref.rollout.agent.agent_loop_config_path=consensus_lens_agent_loops.yaml "
          "actor_rollout_ref.rollout.agent.default_agent_loop=consensus_lens_single_turn "
          "reward.reward_manager.source=importlib reward.reward_manager.module.path=pkg://consensus_lens.verl_v1 "
          "reward.reward_manager.name=ConsensusRewardManagerV1 %s ..." % (n, " ".join(flat)))
    print("  consensus_lens_agent_loops.yaml: - {name: consensus_lens_single_turn, _target_: consensus_lens.verl_v1.ConfidenceSingleTurnAgentLoop}")
    return 0
