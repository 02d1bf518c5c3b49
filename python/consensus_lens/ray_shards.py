"""``python -m consensus_lens.ray sweep|score PATH``: the output of ``consensus-lens sweep|score``,
computed by Ray tasks, one per bucket of questions (``--shard i/K``), merged on the driver: sweep
from counts and sums, score in run order, streamed (docs/scale.md). The failure rules:
consensus_lens/ray.py's docstring.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .reward_worker import WorkerError, default_command
from .ray_pool import PoolError, _ray


# ---- sweeps and re-scores as Ray tasks -----------------------------------------------------------

#: Lines of a shard's output per item the task yields (a sweep's progress line also ends an item).
LINES_PER_ITEM = 64


class EngineKilled(RuntimeError):
    """The engine process of a task was killed by a signal: Ray retries the task."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    # The engine must not outlive its task (a cancelled or killed Ray worker).
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _shard_task(command: Optional[List[str]], argv: List[str], shard: str) -> Iterator[Tuple[Any, ...]]:
    """One shard of a run: runs ``consensus-lens ARGV --shard shard`` and yields its output lines in
    fixed-size items (the same items on a retry, as Ray's generator replay requires), then
    ``("end", exit_code, stderr_lines)``."""
    # The driver's engine when its files are on this node too (a shared file system, one image),
    # else this node's own (docs/scale.md#the-engine-on-every-node).
    usable = command and all(os.path.exists(c) for c in command if os.path.isabs(c))
    cmd = (command if usable else default_command()) + argv + ["--shard", shard]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    err: deque = deque(maxlen=200)

    def read_err() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            err.append(raw.decode("utf-8", "replace").rstrip("\n"))

    t = threading.Thread(target=read_err, daemon=True)
    t.start()
    batch: List[str] = []
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8").rstrip("\n")
            batch.append(line)
            if len(batch) >= LINES_PER_ITEM or line.startswith('{"progress":'):
                yield ("lines", batch)
                batch = []
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    t.join(5)
    if code < 0:
        raise EngineKilled("the engine (%s) was killed by signal %d" % (shard, -code))
    if batch:
        yield ("lines", batch)
    yield ("end", code, list(err))


class _Shard:
    def __init__(self, label: str) -> None:
        self.label = label
        self.lines: deque = deque()  # score: (seq, text) not yet written
        self.totals: List[Dict[str, Any]] = []  # sweep: the (setting, operator) lines
        self.trailer: Optional[Dict[str, Any]] = None
        self.done = 0
        self.read = 0
        self.end: Optional[Tuple[int, List[str]]] = None


class _Progress:
    """groups done / total on stderr, redrawn at most 10 times a second; gone at the end."""

    def __init__(self, enabled: bool, stream: Any = None) -> None:
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, done: int, total: int, final_total: bool, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        frac = min(1.0, done / total) if total else 0.0
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        rate = done / max(now - self.t0, 1e-9)
        self.stream.write("\r[%s] %d/%s%d groups  %.0f groups/s " % (bar, done, "" if final_total else "≥", total, rate))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.enabled and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _js_number(x: Union[int, float]) -> str:
    """A number as JavaScript's JSON.stringify writes it (the CLI's output), from Python's shortest
    round-trip digits: integers without '.0', exponents only below 1e-6 and from 1e21."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return json.dumps(x)
    if isinstance(x, int):
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    r = repr(x)
    sign = "-" if r.startswith("-") else ""
    r = r.lstrip("-")
    mant, _, exp = r.partition("e")
    intpart, _, frac = mant.partition(".")
    digits = (intpart + frac).lstrip("0")
    # decimal exponent n: the value is 0.d1d2… × 10^n (ECMAScript Number::toString)
    lead_zeros = len(intpart + frac) - len((intpart + frac).lstrip("0"))
    n = len(intpart) + int(exp or 0) - lead_zeros
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + s


def _js_json(v: Any) -> str:
    """JSON as the CLI writes it (JSON.stringify: no spaces, JavaScript numbers)."""
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + _js_json(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_js_json(x) for x in v) + "]"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _js_number(v)
    return json.dumps(v, ensure_ascii=False)


def merge_sweep(shards: Sequence[Sequence[Mapping[str, Any]]]) -> List[Dict[str, Any]]:
    """The merged totals of shard sweep lines (same settings and operators in the same order in
    every shard): counts and sums added, never an average of averages."""
    if not shards:
        return []
    first = shards[0]
    out: List[Dict[str, Any]] = []
    for k, line in enumerate(first):
        t = {"params": line["params"], "operator": line["operator"], "groups": 0, "flips_vs_majority": 0,
             "gate_sum": 0.0, "with_truth": 0, "correct": 0}
        for s, lines in enumerate(shards):
            if len(lines) != len(first) or lines[k]["params"] != line["params"] or lines[k]["operator"] != line["operator"]:
                raise PoolError("shard %d's sweep lines do not match shard 0's (setting %d)" % (s, k))
            for key in ("groups", "flips_vs_majority", "gate_sum", "with_truth", "correct"):
                t[key] += lines[k][key]
        out.append(t)
    return out


def sweep_line(t: Mapping[str, Any]) -> str:
    """The line ``consensus-lens sweep`` prints for merged totals (src/cli/sweep-command.ts, runSweep)."""
    line: Dict[str, Any] = {
        "params": t["params"],
        "operator": t["operator"],
        "groups": t["groups"],
        "flips_vs_majority": t["flips_vs_majority"],
        "mean_gate": t["gate_sum"] / t["groups"] if t["groups"] else None,
    }
    if t["with_truth"] > 0:
        line["label_accuracy"] = t["correct"] / t["with_truth"]
    return _js_json(line)


def _run_shards(command: str, path: str, forwarded: List[str], shards: int, cpus: int, engine: Optional[List[str]],
                out: Any, err: Any, progress: _Progress, output_file: Optional[str], max_retries: int) -> int:
    ray = _ray()
    argv = [command, path] + forwarded
    if not any(a == "--jobs" or a.startswith("--jobs=") for a in forwarded):
        argv += ["--jobs", str(cpus if cpus > 1 else 0)]
    task = ray.remote(_shard_task).options(
        num_cpus=cpus, max_retries=max_retries, retry_exceptions=[EngineKilled], scheduling_strategy="SPREAD",
    )
    t0 = time.monotonic()
    state = [_Shard("%d/%d" % (i, shards)) for i in range(shards)]
    gens = {task.remote(engine, argv, s.label): i for i, s in enumerate(state)}
    written = 0
    try:
        live = dict(gens)
        while live:
            ready, _ = ray.wait(list(live), num_returns=1, timeout=0.5)
            for g in ready:
                i = live[g]
                s = state[i]
                try:
                    ref = next(g)
                except StopIteration:
                    del live[g]
                    if s.end is None:
                        raise PoolError("shard %s ended without its exit status" % s.label)
                    continue
                item = ray.get(ref)  # a task that failed for good raises here
                if item[0] == "end":
                    s.end = (item[1], item[2])
                    continue
                for line in item[1]:
                    _take(command, s, line)
            if command == "score":
                written += _write_ready(state, out)
            done = sum(s.done for s in state)
            total = max([s.read for s in state] + [0])
            final = all(s.trailer is not None for s in state)
            progress.update(done, total, final)
    except ray.exceptions.RayError as e:
        # A task failed for good (its retries spent, or an error that is not retried).
        for g in gens:
            try:
                ray.cancel(g, force=True)
            except Exception:
                pass
        progress.clear()
        err.write("consensus-lens.ray: a %s task failed: %s\n" % (command, str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__))
        return 1
    except KeyboardInterrupt:
        for g in gens:
            try:
                ray.cancel(g, force=True)
            except Exception:
                pass
        progress.clear()
        err.write("consensus-lens.ray: interrupted; %d tasks cancelled\n" % len(gens))
        return 130
    progress.update(sum(s.done for s in state), max([s.read for s in state] + [0]), True, force=True)
    progress.clear()
    # Each shard prints the same notices about the run (every task reads all of it): once each.
    seen = set()
    for s in state:
        for line in s.end[1] if s.end else []:
            if line not in seen:
                seen.add(line)
                err.write(line + "\n")
    codes = [s.end[0] if s.end else 1 for s in state]
    if any(c == 2 for c in codes):
        return 2
    if all(s.trailer is None for s in state):  # nothing read (an empty run): as the CLI says
        return exit_status(codes)
    reads = sorted({s.trailer["read"] for s in state if s.trailer})
    owned = sum(s.trailer["owned"] for s in state if s.trailer)
    if len(reads) != 1 or any(s.trailer is None for s in state) or owned != reads[0]:
        err.write("consensus-lens.ray: the shards read different runs (groups read: %s; owned %d): did the run change while it was read?\n"
                  % (", ".join(map(str, reads)), owned))
        return 1
    if command == "score":
        written += _write_ready(state, out, final=True)
    else:
        merged = merge_sweep([s.totals for s in state])
        for t in merged:
            out.write(sweep_line(t) + "\n")
        if output_file:
            _write_sweep_file(output_file, path, argv, merged, reads[0], 1000 * (time.monotonic() - t0))
    out.flush()
    return exit_status(codes)


def exit_status(codes: Sequence[int]) -> int:
    """The driver's exit status from its shards', by the command line's rule (src/cli/outcome.ts):
    2 a usage error; 1 an error (a group not scored, a file not read) over 3 (input lines
    skipped); 0 only when every shard exited 0. Not the largest code: 3 must not hide an error."""
    if any(c == 2 for c in codes):
        return 2
    if any(c not in (0, 3) for c in codes):
        return 1
    return 3 if any(c == 3 for c in codes) else 0


def _take(command: str, s: _Shard, line: str) -> None:
    if line.startswith('{"seq":'):
        head, _, rest = line.partition(',"score":')
        s.lines.append((int(head[len('{"seq":'):]), rest[:-1]))
        s.done += 1
        s.read = max(s.read, s.lines[-1][0] + 1)
        return
    obj = json.loads(line)
    if "progress" in obj:
        s.done, s.read = obj["progress"]["done"], max(s.read, obj["progress"]["read"])
    elif "shard" in obj:
        s.trailer = obj
        s.read = obj["read"]
        s.done = obj["owned"]
    else:
        s.totals.append(obj)


def _write_ready(state: List[_Shard], out: Any, final: bool = False) -> int:
    """Writes score lines in run order: the smallest pending ordinal, while every shard still
    running has a line pending (a later line of it could not come before)."""
    n = 0
    while True:
        heads = [s for s in state if s.lines]
        if not heads:
            break
        if not final and any(not s.lines and s.end is None for s in state):
            break
        s = min(heads, key=lambda x: x.lines[0][0])
        out.write(s.lines.popleft()[1] + "\n")
        n += 1
    if n:
        out.flush()
    return n


def _write_sweep_file(output: str, path: str, argv: List[str], merged: List[Dict[str, Any]], groups: int, ms: float) -> None:
    """The merged totals, for the extension's run dashboard (Consensus Lens: Open Cluster Sweep
    Result…): a header line, then one line of counts and sums per setting and operator."""
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_js_json({"consensus_lens_sweep": 1, "run": path, "groups": groups, "argv": argv, "ms": round(ms)}) + "\n")
        for t in merged:
            f.write(_js_json(t) + "\n")
    os.replace(tmp, output)


USAGE = """usage: python -m consensus_lens.ray (sweep|score) PATH [--address ADDR] [--shards K]
           [--cpus-per-task N] [--max-retries N] [--output FILE] [--progress|--no-progress] [--json]
           [consensus-lens flags: --kappa 0:1:0.1 --tau … --operators … …]

Runs `consensus-lens sweep|score PATH …` as Ray tasks, one per bucket of questions, and prints
what it prints on one machine. PATH must be on storage every node sees. The flags other than
the ones above go to consensus-lens unchanged (a wrong one is its usage error).
  --address ADDR     the Ray cluster (default: $RAY_ADDRESS, else a local Ray)
  --shards K         tasks (default: the cluster's CPUs / --cpus-per-task)
  --cpus-per-task N  CPUs of each task (default 1; its engine uses that many threads)
  --max-retries N    Ray retries of a task lost with its node or process (default 3)
  --output FILE      sweep: also write the merged totals there, for the extension's dashboard
  --json             the output is JSON lines (it always is; accepted for symmetry)
"""

_OWN = {"--address", "--shards", "--cpus-per-task", "--max-retries", "--output"}


class _Usage(Exception):
    """A usage error of the driver (exit 2, as the command line's)."""


class _Help(Exception):
    pass


def _parse(argv: List[str]) -> Tuple[str, str, Dict[str, str], List[str], Optional[bool]]:
    if any(a in ("-h", "--help") for a in argv[:2]):
        raise _Help()
    if len(argv) < 2 or argv[0] not in ("sweep", "score") or argv[1].startswith("-"):
        raise _Usage("expected sweep|score PATH first")
    command, path = argv[0], argv[1]
    own: Dict[str, str] = {}
    forwarded: List[str] = []
    progress: Optional[bool] = None
    k = 2
    while k < len(argv):
        a = argv[k]
        name, eq, value = a.partition("=")
        if name in _OWN:
            if not eq:
                if k + 1 >= len(argv):
                    raise _Usage("%s needs a value" % name)
                k += 1
                value = argv[k]
            own[name] = value
        elif a in ("--progress", "--no-progress"):
            progress = a == "--progress"
        elif a == "--json":
            pass
        elif a in ("-h", "--help"):
            raise _Help()
        elif a == "--shard" or a.startswith("--shard="):
            raise _Usage("--shard is chosen by the driver (use --shards K)")
        else:
            forwarded.append(a)
        k += 1
    return command, path, own, forwarded, progress


def _positive_int(own: Dict[str, str], name: str, default: int, minimum: int = 1) -> int:
    v = own.get(name)
    if v is None:
        return default
    if not v.isdigit() or int(v) < minimum:
        raise _Usage("%s must be an integer ≥ %d, got %r" % (name, minimum, v))
    return int(v)


def main(argv: Optional[List[str]] = None, out: Any = None, err: Any = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        command, path, own, forwarded, progress = _parse(argv)
        cpus = _positive_int(own, "--cpus-per-task", 1)
        retries = _positive_int(own, "--max-retries", 3, minimum=0)
        _positive_int(own, "--shards", 1)
    except _Help:
        out.write(USAGE)
        return 0
    except _Usage as e:
        err.write("consensus_lens.ray: %s\n%s" % (e, USAGE))
        return 2
    path = os.path.abspath(path)
    if not os.path.exists(path):
        err.write("consensus_lens.ray: %s does not exist (the run must be on storage every node sees)\n" % path)
        return 1
    ray = _ray()
    address = own.get("--address") or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
    shards = _positive_int(own, "--shards", max(1, cluster_cpus // cpus))
    try:
        engine: Optional[List[str]] = default_command()
    except WorkerError:
        engine = None  # each node finds its own
    show = progress if progress is not None else err.isatty()
    return _run_shards(command, path, forwarded, shards, cpus, engine, out, err, _Progress(show, err),
                       own.get("--output"), retries)


def run_sweep(path: str, *flags: str, shards: Optional[int] = None) -> List[Dict[str, Any]]:
    """The merged sweep of a run as dicts (``consensus-lens sweep`` lines), on the Ray cluster this
    process is connected to. ``flags``: consensus-lens flags, e.g. ``"--kappa", "0:1:0.5"``."""
    return [json.loads(line) for line in _capture("sweep", path, flags, shards)]


def run_score(path: str, *flags: str, shards: Optional[int] = None) -> List[Dict[str, Any]]:
    """The ``consensus-lens score`` lines of a run as dicts, computed by Ray tasks."""
    return [json.loads(line) for line in _capture("score", path, flags, shards)]


def _capture(command: str, path: str, flags: Sequence[str], shards: Optional[int]) -> List[str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    argv = [command, path] + list(flags) + (["--shards", str(shards)] if shards else []) + ["--no-progress"]
    code = main(argv, out, err)
    if code != 0:
        raise PoolError("consensus_lens.ray %s exited %d: %s" % (command, code, err.getvalue().strip()))
    return out.getvalue().splitlines()
