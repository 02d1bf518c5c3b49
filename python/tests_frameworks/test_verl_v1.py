"""consensus_lens.verl_v1 on verl 0.9.1's V1 reward loop, on a real local Ray cluster: the reward
manager loaded by verl's own loader in verl's ``RewardLoopWorker`` actors (two of them), fed
samples as V1's agent loop builds them (one per call, to a random worker, shuffled, two steps
interleaved) and a batch through ``RewardLoopManager.compute_rm_score`` (split across the two
workers, padded); the rewards equal ``consensus-lens score`` on the logged groups, a group with a
sample missing fails by name within the bound, and verl's GRPO advantage runs on the rewards."""
import asyncio
import glob
import json
import os
import random
import subprocess
import time
import uuid

import numpy as np
import pytest
import ray
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopManager, RewardLoopWorker
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
from verl.trainer.ppo.core_algos import AdvantageEstimator
from verl.trainer.ppo.ray_trainer import compute_advantage

from consensus_lens.verl import GroupError
from consensus_lens.verl_v1 import ConsensusRewardManagerV1, rendezvous_options
from tiny import QUESTIONS, KnownAnswers, tiny_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")
SOURCE = "lighteval/MATH"
# A raylet waits for its node's agent before it registers; on a loaded machine that outlasts Ray's default.
os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("tokenizer"))
    tiny_tokenizer().save_pretrained(d)
    return d


def trainer_config(tok_dir, n, **consensus):
    """The keys of verl 0.9.1's trainer config that RewardLoopManager, RewardLoopWorker and
    load_reward_manager read, with the reward manager named as a user names it."""
    return OmegaConf.create({
        "actor_rollout_ref": {"model": {"path": tok_dir, "tokenizer_path": None},
                              "rollout": {"n": n, "val_kwargs": {"n": 1}, "prompt_length": 64, "response_length": 64}},
        "trainer": {"test_freq": -1, "val_before_train": False},
        "reward": {
            "num_workers": 2,
            "reward_model": {"enable": False, "enable_resource_pool": False},
            "custom_reward_function": {"path": None, "name": None},
            "reward_manager": {"source": "importlib", "name": "ConsensusRewardManagerV1",
                               "module": {"path": "pkg://consensus_lens.verl_v1", "name": "custom_reward_manager"}},
        },
        "consensus_lens": consensus,
    })


def rollouts(tok, n, step, seed, questions=QUESTIONS[:3]):
    """Per question: a fresh uid and n roll-outs (known answer distribution, per-token log-probs)."""
    gen = KnownAnswers(tok, seed=seed)
    out = []
    for q in questions:
        uid = str(uuid.uuid4())
        g = gen([q["prompt"]] * n, None)
        for s in range(n):
            out.append({"uid": uid, "session": s, "step": step, "q": q, "prompt_ids": g["prompt_ids"][s],
                        "completion_ids": g["completion_ids"][s], "logprobs": g["logprobs"][s]})
    return out


def non_tensors(rs):
    return {
        "uid": np.array([r["uid"] for r in rs], dtype=object),
        "session_id": np.array([r["session"] for r in rs], dtype=object),
        "global_steps": np.array([r["step"] for r in rs], dtype=object),
        "data_source": np.array([SOURCE] * len(rs), dtype=object),
        "reward_model": np.array([{"ground_truth": r["q"]["answer"], "style": "rule"} for r in rs], dtype=object),
        "extra_info": np.array([{"index": QUESTIONS.index(r["q"]), "split": "train"} for r in rs], dtype=object),
    }


def agent_loop_sample(r, logprobs):
    """One sample as V1's agent loop sends it to a reward worker (agent_loop.py, _compute_score):
    unpadded prompt and response, attention mask over both, the prompt's fields per row, the
    output's extra_fields as tool_extra_fields. logprobs: "tensor" (rollout_log_probs), or
    "extra_fields" (where an agent loop's output can carry them: 0.9.1 sends no log-prob tensor)."""
    p = torch.tensor([r["prompt_ids"]])
    c = torch.tensor([r["completion_ids"]])
    tensors = {"prompts": p, "responses": c, "input_ids": torch.cat([p, c], 1),
               "attention_mask": torch.ones((1, p.shape[1] + c.shape[1]), dtype=torch.long)}
    extra = {"turn_scores": [], "tool_rewards": []}
    if logprobs == "tensor":
        tensors["rollout_log_probs"] = torch.tensor([r["logprobs"]], dtype=torch.float32)
    elif logprobs == "extra_fields":
        extra["rollout_log_probs"] = list(r["logprobs"])
    nt = non_tensors([r])
    nt["tool_extra_fields"] = np.array([extra], dtype=object)
    return DataProto.from_dict(tensors=tensors, non_tensors=nt)


def padded_batch(rs, pad_id):
    """A batch of rows (left-padded prompts, right-padded responses, as verl's batches)."""
    b = len(rs)
    P = max(len(r["prompt_ids"]) for r in rs)
    R = max(len(r["completion_ids"]) for r in rs) + 2
    prompts = torch.full((b, P), pad_id, dtype=torch.long)
    resp = torch.full((b, R), pad_id, dtype=torch.long)
    pm = torch.zeros((b, P), dtype=torch.long)
    rm = torch.zeros((b, R), dtype=torch.long)
    for i, r in enumerate(rs):
        p, c = r["prompt_ids"], r["completion_ids"]
        prompts[i, P - len(p):] = torch.tensor(p)
        pm[i, P - len(p):] = 1
        resp[i, :len(c)] = torch.tensor(c)
        rm[i, :len(c)] = 1
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": resp, "input_ids": torch.cat([prompts, resp], 1),
                 "attention_mask": torch.cat([pm, rm], 1), "response_mask": rm},
        non_tensors=non_tensors(rs))


def cli_score(log_dir, *args):
    out = subprocess.run(["node", CLI, "score", log_dir, "--no-cache", *args], check=True, capture_output=True, text=True,
                         timeout=120)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def logged(log_dir):
    """(step, question_id) -> the logged group record."""
    out = {}
    for f in sorted(glob.glob(os.path.join(log_dir, "*.jsonl"))):
        with open(f) as fh:
            for line in fh:
                r = json.loads(line)
                out[(r["step"], r["question_id"])] = r
    return out


def flush(opts):
    """The rendezvous actor's log, written (it is the actor the workers found by name)."""
    from consensus_lens.verl_v1 import _actor_name

    actor = ray.get_actor(_actor_name(opts))
    assert ray.get(actor.flush.remote())
    return actor


def test_registered_and_configured_as_verl_loads_it(tok_dir):
    import consensus_lens.verl_v1  # noqa: F401  (importing registers it)

    assert get_reward_manager_cls("consensus_lens") is ConsensusRewardManagerV1
    with pytest.raises(ValueError, match="consensus_lens.kapa"):
        rendezvous_options(trainer_config(tok_dir, 4, operator="core", kapa=0.1))
    cfg = trainer_config(tok_dir, 4, operator="core")
    cfg.trainer.test_freq = 5
    with pytest.raises(ValueError, match=r"val_kwargs.n=1 but actor_rollout_ref.rollout.n=4"):
        rendezvous_options(cfg)


BOUND = 12.0


@pytest.fixture(scope="module")
def core(cluster, tok_dir, tmp_path_factory):
    """Two of verl's RewardLoopWorker actors configured for CoRE (rollout.n=4), as V1 starts them."""
    log_dir = str(tmp_path_factory.mktemp("core"))
    cfg = trainer_config(tok_dir, 4, operator="core", params={"kappa": 0.2, "tau": 0.5}, log_dir=log_dir, group_timeout=BOUND)
    workers = [ray.remote(RewardLoopWorker).remote(cfg) for _ in range(2)]
    yield {"cfg": cfg, "opts": rendezvous_options(cfg), "workers": workers, "log_dir": log_dir, "n": 4}
    for w in workers:
        ray.kill(w)


def qid(r):
    return "%s/%d" % (SOURCE, QUESTIONS.index(r["q"]))


def check_core_rewards(core, rs, got):
    """Each sample's reward and extra info equal consensus-lens score's on the logged group."""
    flush(core["opts"])
    records = logged(core["log_dir"])
    scored = {(g["step"], g["question_id"]): g
              for g in cli_score(core["log_dir"], "--operators", "core", "--kappa", "0.2", "--tau", "0.5")}
    assert set(records) == set(scored)
    for r, res in zip(rs, got):
        key = (r["step"], qid(r))
        rec = records[key]
        assert rec["extra"]["uid"] == r["uid"]
        want = scored[key]["results"]["core"]
        assert want["confidence"] == "used"  # CoRE's confidence from the samples' log-probs
        assert abs(res["reward_score"] - want["rewards"][r["session"]]) <= 1e-9
        assert res["reward_extra_info"]["cl_gate"] == pytest.approx(want["gate"], abs=1e-9)
        assert res["reward_extra_info"]["cl_confidence"] == "used"
        ro = rec["rollouts"][r["session"]]
        assert abs(ro["mean_logprob"] - sum(r["logprobs"]) / len(r["logprobs"])) <= 1e-6
        assert ro["reward"] == res["reward_score"]  # the log keeps what was trained on
        assert len(ro["token_logprobs"]) == len(r["logprobs"]) and "".join(ro["tokens"]) == ro["response"]
    # CoRE's rewards here are not those of majority (the test would pass on a vote otherwise).
    maj = {(g["step"], g["question_id"]): g for g in cli_score(core["log_dir"], "--operators", "majority")}
    assert any(abs(res["reward_score"] - maj[(r["step"], qid(r))]["results"]["majority"]["rewards"][r["session"]]) > 1e-3
               for r, res in zip(rs, got))


def test_streamed_core_with_logprobs_equals_the_cli(core):
    n, workers = core["n"], core["workers"]
    tok = tiny_tokenizer()
    # Two steps' groups, their samples shuffled together, each to a worker chosen at random, as
    # V1's agent loop does when roll-outs finish (samples of one uid reach different workers).
    rs = rollouts(tok, n, step=1, seed=1) + rollouts(tok, n, step=2, seed=2)
    rng = random.Random(7)
    rng.shuffle(rs)
    picks = [rng.randrange(2) for _ in rs]
    assert len({(r["uid"], p) for r, p in zip(rs, picks)}) > len({r["uid"] for r in rs})  # some uid is split
    got = ray.get([workers[p].compute_score.remote(agent_loop_sample(r, "tensor" if i % 2 else "extra_fields"))
                   for i, (r, p) in enumerate(zip(rs, picks))], timeout=120)
    check_core_rewards(core, rs, got)
    assert len(logged(core["log_dir"])) >= 6


def test_the_agent_loop_carries_logprobs_through_verls_reward_call(core):
    """ConfidenceSingleTurnAgentLoop.run (verl's single-turn loop on a stand-in server) then verl's
    own AgentLoopWorker._compute_score, which sends the output to a random reward worker."""
    import types

    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, DictConfigWrap
    from verl.workers.rollout.replica import TokenOutput

    from consensus_lens.verl_v1 import ConfidenceSingleTurnAgentLoop

    n = core["n"]
    tok = tiny_tokenizer()
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    rs = rollouts(tok, n, step=4, seed=5, questions=QUESTIONS[1:3])
    random.Random(11).shuffle(rs)

    class Server:  # the rollout engine's answer: the known roll-out and its token log-probs
        def __init__(self, r):
            self.r = r

        async def generate(self, **kw):
            return TokenOutput(token_ids=self.r["completion_ids"], log_probs=self.r["logprobs"])

    fake = types.SimpleNamespace(reward_loop_worker_handles=core["workers"], processor=None, mm_processor_kwargs={})
    for name in ("_compute_score", "_compute_multi_modal_inputs", "_compute_position_ids", "_get_mm_processor_kwargs"):
        setattr(fake, name, types.MethodType(getattr(AgentLoopWorker, name), fake))

    async def one(r):
        loop = ConfidenceSingleTurnAgentLoop(trainer_config=DictConfigWrap(core["cfg"]), server_manager=Server(r), tokenizer=tok,
                                             processor=None, dataset_cls=None, data_config=DictConfigWrap(OmegaConf.create({})))
        kwargs = {k: v[0] for k, v in non_tensors([r]).items()}
        kwargs["raw_prompt"] = [{"role": "user", "content": r["q"]["prompt"]}]
        out = await loop.run({"temperature": 1.0}, **kwargs)
        assert out.response_ids == r["completion_ids"]
        await fake._compute_score([out], kwargs=kwargs)
        return {"reward_score": out.reward_score, "reward_extra_info": out.extra_fields["reward_extra_info"]}

    async def all_():
        return await asyncio.gather(*[one(r) for r in rs])

    got = asyncio.run(all_())
    check_core_rewards(core, rs, got)


def test_a_group_with_a_sample_missing_fails_by_name_within_the_bound(core):
    n, workers = core["n"], core["workers"]
    tok = tiny_tokenizer()
    # One roll-out lost: every sample of the group fails, naming the uid and the settings, once
    # the bound has run out; a late sample of it fails at once; nothing of it is logged.
    lost = rollouts(tok, n, step=3, seed=3, questions=QUESTIONS[3:4])
    t0 = time.monotonic()
    refs = [workers[i % 2].compute_score.remote(agent_loop_sample(r, "tensor")) for i, r in enumerate(lost[:-1])]
    for ref in refs:
        with pytest.raises(GroupError) as e:
            ray.get(ref, timeout=BOUND + 60)
        msg = str(e.value)
        assert lost[0]["uid"] in msg and "3 of actor_rollout_ref.rollout.n=4" in msg
        assert "consensus_lens.group_timeout=12s" in msg
    elapsed = time.monotonic() - t0
    assert BOUND - 1 <= elapsed <= BOUND + 30, elapsed
    t1 = time.monotonic()
    with pytest.raises(GroupError, match=lost[0]["uid"]):
        ray.get(workers[0].compute_score.remote(agent_loop_sample(lost[-1], "tensor")), timeout=30)
    assert time.monotonic() - t1 < BOUND
    flush(core["opts"])
    assert not any(rec["extra"]["uid"] == lost[0]["uid"] for rec in logged(core["log_dir"]).values())


def test_a_batch_split_across_two_workers_then_grpo_advantages(cluster, tok_dir, tmp_path):
    n = 3  # 3 groups of 3: 9 rows, padded to 10 by compute_rm_score (a copy of the first row)
    log_dir = str(tmp_path / "majority")
    cfg = trainer_config(tok_dir, n, operator="majority", log_dir=log_dir, group_timeout=60)
    tok = tiny_tokenizer()
    rs = rollouts(tok, n, step=5, seed=4)
    random.Random(3).shuffle(rs)
    data = padded_batch(rs, tok.pad_token_id)
    manager = RewardLoopManager(cfg)  # verl's: two RewardLoopWorker actors, resolves our class
    assert manager.reward_manager_cls is ConsensusRewardManagerV1
    out = manager.compute_rm_score(data)
    flush(rendezvous_options(cfg))
    scored = {g["question_id"]: g for g in cli_score(log_dir, "--operators", "majority")}
    assert len(scored) == 3 and {g["step"] for g in scored.values()} == {5}
    rm_scores = out.batch["rm_scores"]
    for i, r in enumerate(rs):
        want = scored["%s/%d" % (SOURCE, QUESTIONS.index(r["q"]))]["results"]["majority"]
        assert abs(float(out.non_tensor_batch["cl_reward"][i]) - want["rewards"][r["session"]]) <= 1e-9
        assert abs(float(rm_scores[i].sum()) - want["rewards"][r["session"]]) <= 1e-9
        assert float(rm_scores[i][int(data.batch["response_mask"][i].sum()) - 1]) == float(rm_scores[i].sum())
    # Downstream: verl's GRPO advantage (what V1's compute_advantage_for_multi_trajectories calls on
    # each session's final output) on the rewarded batch.
    data.batch["token_level_rewards"] = rm_scores
    data = compute_advantage(data, adv_estimator=AdvantageEstimator.GRPO, num_repeat=n, norm_adv_by_std_in_grpo=True,
                             config=OmegaConf.create({}))
    adv = data.batch["advantages"]
    for i, r in enumerate(rs):
        want = scored["%s/%d" % (SOURCE, QUESTIONS.index(r["q"]))]["results"]["majority"]["advantages"][r["session"]]
        assert abs(float(adv[i][0]) - want) < 1e-5  # verl computes in float32
    assert any(abs(float(adv[i][0])) > 0.1 for i in range(len(rs)))
    for w in manager.reward_loop_workers:
        ray.kill(w)


def test_the_rendezvous_counts_sessions_not_copies_and_a_whole_group_outlives_the_bound():
    """In-process (the dry run's rendezvous): a copy of a session (compute_rm_score's padding) gets
    its answer without counting; a group whole before the bound keeps its reward when scoring
    ends after it; a session outside 0..n-1 fails its uid at once, naming rollout.n."""
    from consensus_lens.reward import RewardWorker
    from consensus_lens.verl_v1 import GroupRendezvous

    real = RewardWorker(operator="majority")

    class Slow:  # the reward worker, answering after the bound has run out
        def score(self, *a, **k):
            time.sleep(1.5)
            return real.score(*a, **k)

        def close(self):
            real.close()

    rdv = GroupRendezvous(3, "majority", group_timeout=0.5, worker=Slow())

    def s(sid, answer):
        return {"session": sid, "text": "so \\boxed{%s}" % answer, "question_id": "q/1", "step": 7}

    async def group():
        return await asyncio.gather(rdv.submit("u1", s(0, 1)), rdv.submit("u1", s(0, 1)), rdv.submit("u1", s(1, 2)),
                                    rdv.submit("u1", s(2, 1)))

    got = asyncio.run(group())
    assert [g["reward"] for g in got] == [1.0, 1.0, 0.0, 1.0] and {g["label"] for g in got} == {"1"}
    assert rdv.groups_scored == 1
    with pytest.raises(GroupError, match=r"session_id 3 is outside 0..2, but actor_rollout_ref.rollout.n=3"):
        asyncio.run(rdv.submit("u2", s(3, 1)))
    with pytest.raises(GroupError, match="u2"):
        asyncio.run(rdv.submit("u2", s(0, 1)))
    rdv.close()
