"""consensus_lens.ray on a real Ray cluster: two Ray nodes on this machine (ray.cluster_utils.Cluster,
one CPU each). The sweep and the score of the driver equal the command line's on one machine, also
when a node or a worker process is killed mid-sweep; the reward pool's rewards equal the single
worker's, also when an actor is killed mid-step (MS-TTRL: the step fails loudly)."""
import io
import json
import os
import random
import signal
import string
import subprocess
import sys
import threading
import time

import psutil
import pytest
import ray
from ray.cluster_utils import Cluster

from consensus_lens import ray as clray
from consensus_lens.reward import RewardWorker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLI = os.path.join(REPO, "dist", "cli.js")
RUN = os.path.join(REPO, "examples", "demo-run")
SWEEP = ["--kappa", "0:1:0.25", "--tau", "0.25,1", "--operators", "core,majority,msttrl"]
# Long enough (about a second of a core per shard of three) to be caught in the middle; the tests
# that kill a shard also freeze it first (SIGSTOP), so that it cannot finish however fast it is.
LONG_SWEEP = ["--kappa", "0:1:0.01", "--tau", "0.05,0.1,0.15,0.2,0.25,0.3,0.5,0.75,1,1.5,2,3", "--operators", "core"]


def cli(*args):
    r = subprocess.run(["node", CLI] + list(args), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def assert_same_sweep(got_text, want_text):
    got = [json.loads(l) for l in got_text.splitlines()]
    want = [json.loads(l) for l in want_text.splitlines()]
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert list(g) == list(w)  # the same keys in the same order
        for key, wv in w.items():
            if isinstance(wv, float):
                assert abs(g[key] - wv) <= 1e-12, (key, g, w)
            else:
                assert g[key] == wv, (key, g, w)


def driver(*args):
    out, err = io.StringIO(), io.StringIO()
    code = clray.main(list(args) + ["--no-progress"], out, err)
    return code, out.getvalue(), err.getvalue()


# A raylet waits for its node's agent (a Python process) before it registers; on a loaded machine
# the agent's start-up outlasts Ray's default wait and the raylet aborts.
os.environ.setdefault("RAY_agent_register_timeout_ms", "120000")


def start_cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        c.add_node(num_cpus=1)
        c.wait_for_nodes()
    except BaseException:
        c.shutdown()
        raise
    return c


@pytest.fixture(scope="module")
def cluster():
    try:
        c = start_cluster()
    except Exception as e:  # Ray gives a raylet 30 s to register: on a loaded machine, once more
        if "timed out during startup" not in str(e):
            raise
        c = start_cluster()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def shard_processes(root=None):
    """Ray worker processes running a shard task (their title is ray::_shard_task), optionally only
    those of one node (children of its raylet)."""
    procs = psutil.Process(root).children(recursive=True) if root else psutil.process_iter()
    out = []
    for p in procs:
        try:
            if "ray::_shard_task" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.Error:
            pass
    return out


def engine_processes(marker):
    out = []
    for p in psutil.process_iter():
        try:
            cmd = p.cmdline()
        except psutil.Error:
            continue
        if "--shard" in cmd and marker in cmd:
            out.append(p)
    return out


def test_sweep_on_two_nodes_equals_the_local_sweep(cluster, tmp_path):
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    want = cli("sweep", RUN, *SWEEP)
    result = tmp_path / "sweep.jsonl"
    code, out, err = driver("sweep", RUN, *SWEEP, "--shards", "4", "--output", str(result))
    assert code == 0, err
    assert_same_sweep(out, want)
    # The file for the extension's dashboard: the run, then the merged counts and sums.
    header, *totals = [json.loads(l) for l in result.read_text().splitlines()]
    assert header["consensus_lens_sweep"] == 1 and header["run"] == RUN and header["groups"] == 36
    for t, w in zip(totals, (json.loads(l) for l in want.splitlines())):
        assert (t["params"], t["operator"], t["groups"]) == (w["params"], w["operator"], w["groups"])
        assert abs(t["gate_sum"] / t["groups"] - w["mean_gate"]) <= 1e-12
    assert len(totals) == len(want.splitlines())


def test_driver_usage_errors():
    assert driver("sweep")[0] == 2
    assert driver("sweep", RUN, "--shards", "0")[0] == 2
    assert driver("sweep", RUN, "--shard", "0/2")[0] == 2  # the driver picks the shards
    code, out, _ = driver("--help")
    assert code == 0 and out.startswith("usage: python -m consensus_lens.ray")


def test_score_on_two_nodes_is_the_local_score_in_run_order(cluster):
    want = cli("score", RUN, "--operators", "majority,core,msttrl", "--kappa", "0.3")
    code, out, err = driver("score", RUN, "--operators", "majority,core,msttrl", "--kappa", "0.3", "--shards", "3")
    assert code == 0, err
    assert out == want  # the very lines, in the very order


def test_a_bad_flag_is_the_command_lines_usage_error(cluster):
    code, out, err = driver("sweep", RUN, "--kappa", "0:1:0.5", "--shards", "2", "--tmax", "-3")
    assert code == 2 and out == ""
    assert "tmax" in err and err.count("\n") == len(set(err.splitlines()))  # said once, not per shard


# Run before the tests that interrupt the driver or kill nodes (in the module's order): alone and
# after the node and pool tests they pass; after the Ctrl-C and verl batch tests they were seen to fail.

def test_a_pool_whose_actors_cannot_import_the_package_fails_fast_with_the_fix(cluster):
    # The actors' workers get a PYTHONPATH without this checkout's package (as a node without
    # consensus-lens installed): before, the pool replaced the failing actor until its timeout.
    t0 = time.monotonic()
    with pytest.raises(clray.PoolError, match=r"cannot import consensus_lens on their node: install it .*py_modules"):
        clray.RewardPool(
            num_actors=1, operator="majority", timeout=600,
            actor_options={"num_cpus": 1, "runtime_env": {"env_vars": {"PYTHONPATH": "/nonexistent"}}},
        )
    assert time.monotonic() - t0 < 120


def test_a_pool_whose_actors_find_no_engine_fails_fast_with_the_fix(cluster):
    t0 = time.monotonic()
    with pytest.raises(clray.PoolError, match=r"its reward worker did not .*cannot start the reward worker.*install the engine"):
        clray.RewardPool(num_actors=1, operator="majority", timeout=600, command=["/nonexistent/consensus-lens"])
    assert time.monotonic() - t0 < 120


def test_the_driver_exits_as_the_command_line_with_an_unscored_group_and_a_skipped_line(cluster, tmp_path):
    # One group over --max-group-size (not scored: exit 1) and one malformed line (skipped: 3).
    run = tmp_path / "run.jsonl"
    lines = [json.dumps({"kind": "group", "step": 1, "question_id": "q%d" % q,
                         "rollouts": [{"response": "\\boxed{%d}" % (i % 2)} for i in range(6 if q == 0 else 2)]}) for q in range(6)]
    lines.insert(3, "{not json")
    run.write_text("\n".join(lines) + "\n")
    flags = ["--operators", "majority", "--max-group-size", "4"]
    r = subprocess.run(["node", CLI, "score", str(run)] + flags, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    code, out, err = driver("score", str(run), *flags, "--shards", "2")
    assert code == r.returncode, err
    assert out == r.stdout
    assert [clray.exit_status(c) for c in ([0, 3], [3, 1], [1, 0], [0, 0], [3, 3], [2, 1])] == [3, 1, 1, 0, 3, 2]

def run_in_thread(*args):
    box = {}

    def go():
        box["result"] = driver(*args)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, box


def wait_for(predicate, timeout=60.0):
    end = time.time() + timeout
    while time.time() < end:
        v = predicate()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def freeze(procs):
    """Stops (SIGSTOP) the shard processes found running: their tasks stay unfinished until killed."""
    out = []
    for p in procs:
        try:
            p.suspend()
            out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def kill(procs):
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


def test_a_node_killed_mid_sweep_changes_nothing(cluster):
    # As a user runs it: `python -m consensus_lens.ray … > result` while a node dies. Ray's driver
    # reports the dead node on its standard output; the result on stdout must stay clean.
    want = cli("sweep", RUN, *LONG_SWEEP)
    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    raylet = node.all_processes["raylet"][0].process.pid
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.Popen([sys.executable, "-m", "consensus_lens.ray", "sweep", RUN, *LONG_SWEEP, "--address", cluster.address,
                          "--shards", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    frozen = freeze(wait_for(lambda: shard_processes(raylet), 120))  # a task running on that node, frozen there
    assert frozen and p.poll() is None
    cluster.remove_node(node, allow_graceful=False)  # its raylet is killed…
    kill(frozen)  # …and its workers (a stopped one would not see its raylet go)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()
    assert_same_sweep(out.decode(), want)


def test_a_worker_killed_mid_sweep_changes_nothing(cluster):
    want = cli("sweep", RUN, *LONG_SWEEP)
    t, box = run_in_thread("sweep", RUN, *LONG_SWEEP, "--shards", "2")
    victim = freeze(wait_for(lambda: shard_processes())[:1])[0]
    time.sleep(0.5)
    assert t.is_alive()
    victim.kill()
    t.join(240)
    code, out, err = box["result"]
    assert code == 0, err
    assert_same_sweep(out, want)


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """A native run of 10 steps × 48 questions (48 roll-outs of ~1,200 characters): each of three
    shards streams several items of score lines, over a few seconds."""
    from consensus_lens.records import group_record

    rng = random.Random(5)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 8))) for _ in range(300)]
    path = tmp_path_factory.mktemp("run") / "run.jsonl"
    with open(path, "w") as f:
        for step in range(10):
            for q in range(48):
                responses = [" ".join(rng.choice(words) for _ in range(200)) + " so \\boxed{%d}." % rng.choice((1, 2, 3, 7))
                             for _ in range(48)]
                spec = {"question_id": "q%02d" % q, "responses": responses, "mean_logprobs": [-rng.random() for _ in range(48)]}
                f.write(json.dumps(group_record(spec, step)) + "\n")
    return str(path)


def test_a_node_killed_mid_score_stream_changes_nothing(cluster, long_run):
    want = cli("score", long_run, "--operators", "majority,core")
    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    raylet = node.all_processes["raylet"][0].process.pid
    out, err = io.StringIO(), io.StringIO()
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("code", clray.main(
        ["score", long_run, "--operators", "majority,core", "--shards", "3", "--no-progress"], out, err)), daemon=True)
    t.start()
    # Lines already merged and written (every shard has streamed some), the node's task still running.
    frozen = freeze(wait_for(lambda: out.getvalue() and shard_processes(raylet), 120))
    written = len(out.getvalue().splitlines())
    assert frozen and t.is_alive() and 0 < written < len(want.splitlines())
    cluster.remove_node(node, allow_graceful=False)
    kill(frozen)
    t.join(240)
    assert box.get("code") == 0, err.getvalue()
    assert out.getvalue() == want  # the retried task's replay added nothing, dropped nothing


def test_ctrl_c_cancels_the_tasks(cluster, tmp_path):
    marker = str(tmp_path / "run")
    os.symlink(RUN, marker)  # a path only this test's engines have on their command line
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.Popen([sys.executable, "-m", "consensus_lens.ray", "sweep", marker, *LONG_SWEEP, "--address", cluster.address,
                          "--shards", "2", "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    got = []
    reader = threading.Thread(target=lambda: got.extend(iter(lambda: p.stderr.read1(4096), b"")), daemon=True)
    reader.start()
    # The progress bar drawn, the engines running: frozen there (SIGSTOP), so that the sweep cannot
    # finish before the interrupt however fast it is; a cancelled task's worker is killed, and its
    # engine with it (a SIGKILL reaches a stopped process).
    freeze(wait_for(lambda: b"groups" in b"".join(got) and engine_processes(marker), 90))
    p.send_signal(signal.SIGINT)
    out = p.stdout.read()
    p.wait(timeout=60)
    reader.join(10)
    err = b"".join(got)
    assert p.returncode == 130, err
    assert out == b""
    assert b"cancelled" in err
    wait_for(lambda: not engine_processes(marker), 30)  # no engine left running


# ---- the reward pool ------------------------------------------------------------------------------

def make_groups(step, count, n=32, size=600, seed=1, checks=False):
    rng = random.Random(seed * 7919 + step)
    alphabet = string.ascii_letters + "     +-=()0123456789"
    groups = []
    for g in range(count):
        responses = ["".join(rng.choice(alphabet) for _ in range(size)) + " so \\boxed{%s}." % rng.choice("1237")
                     for _ in range(n)]
        spec = {"question_id": "q%03d" % g, "responses": responses, "mean_logprobs": [-rng.random() for _ in range(n)]}
        if checks:
            spec["outcome_checks"] = [{"answer": a, "passed": rng.randint(0, 8), "trials": 8} for a in "1237"]
        groups.append(spec)
    return groups


def single(groups, operator, params, step):
    with RewardWorker(["node", CLI], operator=operator, params=params) as w:
        return w.score(groups, step=step)


def test_pool_rewards_equal_the_single_workers_on_a_64_group_step(cluster):
    groups = make_groups(1, 64)
    with clray.RewardPool(num_actors=2, operator="core", params={"kappa": 0.2}) as pool:
        got = pool.score(groups, step=1)
        assert got == single(groups, "core", {"kappa": 0.2}, 1)
        got = pool.score(groups, "majority", step=2)
        assert got == single(groups, "majority", {"kappa": 0.2}, 2)
        # Each question met one actor: two actors, both used.
        buckets = {clray.question_bucket(g["question_id"], 2) for g in groups}
        assert buckets == {0, 1}


def test_an_actor_killed_mid_step_is_replaced_with_identical_results(cluster):
    # Many small groups, one per request: actor 0 answers its ~128 one by one, each a Ray round trip.
    groups = make_groups(3, 256, n=8, size=200)
    want = single(groups, "core", {}, 3)
    pool = clray.RewardPool(num_actors=2, operator="core", max_in_flight=1, chunk_groups=1)
    try:
        (actor0, worker0), _ = pool.actor_pids()
        engine = psutil.Process(worker0)
        written = engine.io_counters().write_chars
        box = {}

        def step():
            try:
                box["got"] = pool.score(groups, step=3)
            except BaseException as e:  # shown by the assertions below, not lost in the thread
                box["error"] = e

        t = threading.Thread(target=step, daemon=True)
        t.start()
        # Mid-step: once actor 0's engine has answered a group, it is frozen (SIGSTOP), so that
        # its other groups stay unanswered however slow this machine is; then the actor is killed.
        end = time.time() + 60
        while engine.io_counters().write_chars == written and t.is_alive() and time.time() < end:
            time.sleep(0.001)
        engine.suspend()
        assert engine.io_counters().write_chars > written, box.get("error", "actor 0 answered nothing")
        time.sleep(1.0)  # actor 1 has time to finish its groups: only actor 0's frozen ones are left
        assert t.is_alive(), box.get("error", "the step ended before actor 0 was killed")
        os.kill(actor0, signal.SIGKILL)
        engine.resume()  # it sees its actor gone (stdin closed) and exits
        t.join(120)
        assert "error" not in box, box["error"]
        assert pool.replaced == 1  # the actor died during the step…
        assert box["got"] == want  # …and its groups were re-scored on its replacement, identically
        wait_for(lambda: not engine.is_running() or engine.status() == psutil.STATUS_ZOMBIE, 30)  # its engine went with it
    finally:
        pool.close()


def test_msttrl_fails_loudly_when_an_actor_holding_its_cache_dies(cluster):
    pool = clray.RewardPool(num_actors=2, operator="msttrl")
    try:
        first = pool.score(make_groups(1, 8, checks=True), step=1)
        assert first == single(make_groups(1, 8, checks=True), "msttrl", {}, 1)
        (actor0, _), _ = pool.actor_pids()
        os.kill(actor0, signal.SIGKILL)
        with pytest.raises(clray.ActorLost, match="MS-TTRL"):
            pool.score(make_groups(2, 8, checks=True), step=2)
        with pytest.raises(clray.ActorLost):  # and the next step too: no reward from a fresh cache
            pool.score(make_groups(3, 8, checks=True), step=3)
        pool.reset()  # a fresh cache, asked for: the pool rewards again, as a fresh single worker does
        assert pool.score(make_groups(3, 8, checks=True), step=3) == single(make_groups(3, 8, checks=True), "msttrl", {}, 3)
    finally:
        pool.close()


def test_verls_batch_reward_function_on_the_pool(cluster):
    from consensus_lens.reward import compute_score

    groups = make_groups(4, 16, n=8, size=300)
    sources = ["math"] * (16 * 8)
    texts = [r for g in groups for r in g["responses"]]
    extras = [{"index": k // 8} for k in range(len(texts))]
    local = compute_score(sources, texts, None, extras, operator="ec", step=4, command=["node", CLI])
    pooled = compute_score(sources, texts, None, extras, operator="ec", step=4, command=["node", CLI], num_actors=2)
    assert pooled == local and len(local) == len(texts)

