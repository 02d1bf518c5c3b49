"""RunLogger: writes a training run in the native format (docs/contract.md#native-format) without slowing training.

Standard library only, Python >= 3.9.

    from consensus_lens import RunLogger
    log = RunLogger("runs/ttrl-core-01")            # the run folder the extension opens
    for step in ...:
        log.log_step(step, groups)                  # once per step; returns at once
    log.close()                                     # waits (bounded) for what is queued

Guarantees
- One file per step, ``step_{step:06d}.jsonl`` (``file_template``), one group record per line.
- Every line is appended with ``O_APPEND`` as one complete ``...\\n`` byte string; lines are
  never interleaved, and a line is never glued to a torn fragment: when a file is opened for
  appending and does not end in a newline (a previous process was killed inside a write), the
  fragment is cut off first. A reader that follows the run sees only complete lines, plus at
  most a trailing partial line that docs/contract.md#files-being-written readers wait for.
- ``log_step`` never waits on the disk for longer than ``max_wait`` seconds: steps are handed to
  one writer thread through a queue bounded at ``max_pending_steps``; a step that finds the
  queue full is dropped and counted (``stats()``, a ``logging`` warning, the return value).
- Disk errors in the writer are counted and logged, never raised into the training loop.
- Crash safety: steps already written stay complete; a step that was queued but not written
  when the process died is lost (at most ``max_pending_steps`` + 1 steps).

Several processes must not share one file: give each rank its own run folder or a
``file_template`` with ``{rank}`` (e.g. ``"step_{step:06d}.rank{rank}.jsonl"``).
"""

import atexit
import json
import logging
import os
import queue
import threading
import time
import weakref
from typing import Any, Dict, Iterable, List, Mapping, Optional

from .records import RecordError, group_record

__all__ = ["RunLogger"]

_log = logging.getLogger("consensus_lens")
_STOP = object()


class _Flush:
    def __init__(self) -> None:
        self.done = threading.Event()


def _close_at_exit(ref: "weakref.ref[RunLogger]") -> None:
    logger = ref()
    if logger is not None:
        logger.close()


class RunLogger:
    """Appends native group records to ``run_dir``, one file per step, from a background thread.

    Parameters
    - run_dir: the run folder (created if needed).
    - run_id: written into every group record that does not carry one.
    - max_pending_steps: queue bound, in steps (a step is all its groups).
    - max_wait: seconds ``log_step`` may wait for a queue slot before dropping the step (0: never waits).
    - file_template: file name per step; ``{step}`` and ``{rank}`` are substituted.
    - rank: substituted into ``file_template``.
    - keep_token_logprobs: also write per-token arrays (else only their mean, which CoRE uses).
    - records: "group" (one line per group) or "rollout" (one line per roll-out, with the group's
      fields repeated). Use "rollout" when one group's roll-outs are logged by several
      processes (e.g. TRL ranks, each with its own ``file_template`` ``{rank}``): readers merge
      roll-out records of one (run, step, question_id) across files, ordered by ``sample_idx``,
      whereas two group records with one identity are a duplicate.
    - fsync: fsync each step file after its last line (durability over speed).
    - close_timeout: how long ``close()`` (also run at interpreter exit) waits for the queue.
    """

    def __init__(
        self,
        run_dir: str,
        *,
        run_id: Optional[str] = None,
        max_pending_steps: int = 8,
        max_wait: float = 0.05,
        file_template: str = "step_{step:06d}.jsonl",
        rank: int = 0,
        keep_token_logprobs: bool = False,
        records: str = "group",
        fsync: bool = False,
        close_timeout: float = 30.0,
    ) -> None:
        if max_pending_steps < 1:
            raise ValueError("max_pending_steps must be >= 1")
        if records not in ("group", "rollout"):
            raise ValueError('records must be "group" or "rollout"')
        self.records = records
        self.run_dir = os.path.abspath(run_dir)
        os.makedirs(self.run_dir, exist_ok=True)
        self.run_id = run_id
        self.max_wait = max(0.0, float(max_wait))
        self.file_template = file_template
        self.rank = rank
        self.keep_token_logprobs = keep_token_logprobs
        self.fsync = fsync
        self.close_timeout = close_timeout
        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=max_pending_steps)
        self._lock = threading.Lock()
        self._stats: Dict[str, Any] = {
            "steps_queued": 0, "steps_written": 0, "groups_written": 0, "bytes_written": 0,
            "steps_dropped": 0, "groups_dropped": 0, "write_errors": 0, "torn_tails_repaired": 0,
            "last_error": None,
        }
        self._checked: set = set()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="consensus-lens-logger", daemon=True)
        self._thread.start()
        atexit.register(_close_at_exit, weakref.ref(self))

    # ---- training-loop side -------------------------------------------------------------

    def path_for(self, step: int) -> str:
        return os.path.join(self.run_dir, self.file_template.format(step=step, rank=self.rank))

    def log_step(self, step: int, groups: Iterable[Mapping[str, Any]]) -> bool:
        """Queue one step's groups (group specs or native records, see ``records``).

        Returns True when queued, False when dropped (queue full for ``max_wait`` seconds, or
        the logger is closed). Malformed groups raise ``RecordError`` here, in the caller.
        """
        if not isinstance(step, int) or isinstance(step, bool):
            raise TypeError("step must be an int")
        records = [
            group_record(g, step, run_id=self.run_id, keep_token_logprobs=self.keep_token_logprobs)
            for g in groups
        ]
        if self.records == "rollout" and any("outcome_checks" in r for r in records):
            raise RecordError('outcome_checks exist only in group records (docs/contract.md#native-format): use records="group"')
        if self._closed:
            self._drop(len(records), "the logger is closed")
            return False
        try:
            if self.max_wait > 0:
                self._queue.put((step, records), timeout=self.max_wait)
            else:
                self._queue.put_nowait((step, records))
        except queue.Full:
            self._drop(len(records), "the writer is behind (slow disk?)")
            return False
        with self._lock:
            self._stats["steps_queued"] += 1
        return True

    def stats(self) -> Dict[str, Any]:
        """Counters: steps/groups written and dropped, bytes, write errors, repaired tails."""
        with self._lock:
            out = dict(self._stats)
        out["pending_steps"] = self._queue.qsize()
        return out

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait until everything queued so far is written. False on timeout."""
        if not self._thread.is_alive():
            return self._queue.empty()
        marker = _Flush()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                self._queue.put(marker, timeout=0.05)
                break
            except queue.Full:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        return marker.done.wait(remaining)

    def close(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Write what is queued (waiting at most ``timeout``, default ``close_timeout``), stop
        the writer, and return the final stats. Steps still queued after the timeout are
        counted as dropped. Safe to call twice."""
        if not self._closed:
            self._closed = True
            wait = self.close_timeout if timeout is None else timeout
            deadline = time.monotonic() + wait
            while self._thread.is_alive():
                try:
                    self._queue.put(_STOP, timeout=0.05)
                    break
                except queue.Full:
                    if time.monotonic() >= deadline:
                        break
            self._thread.join(max(0.0, deadline - time.monotonic()))
            if self._thread.is_alive():
                lost = 0
                steps = 0
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(item, tuple):
                        steps += 1
                        lost += len(item[1])
                with self._lock:
                    self._stats["steps_dropped"] += steps
                    self._stats["groups_dropped"] += lost
                if steps:
                    _log.warning("consensus-lens logger: closed with %d steps unwritten (%s)", steps, self.run_dir)
            s = self.stats()
            if s["steps_dropped"]:
                _log.warning(
                    "consensus-lens logger: %d steps (%d groups) were dropped in %s",
                    s["steps_dropped"], s["groups_dropped"], self.run_dir,
                )
        return self.stats()

    def __enter__(self) -> "RunLogger":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writer thread ------------------------------------------------------------------

    def _drop(self, groups: int, why: str) -> None:
        with self._lock:
            self._stats["steps_dropped"] += 1
            self._stats["groups_dropped"] += groups
            n = self._stats["steps_dropped"]
        if n & (n - 1) == 0:  # 1, 2, 4, 8, ...: reported without flooding the training log
            _log.warning("consensus-lens logger: dropped a step of %d groups: %s (%d steps dropped so far)", groups, why, n)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, _Flush):
                item.done.set()
                continue
            step, records = item
            try:
                written = self._write_step(step, records)
            except Exception as e:  # disk full, permissions, ...: never into the training loop
                with self._lock:
                    self._stats["write_errors"] += 1
                    self._stats["steps_dropped"] += 1
                    self._stats["groups_dropped"] += len(records)
                    self._stats["last_error"] = "%s: %s" % (type(e).__name__, e)
                _log.error("consensus-lens logger: step %d not written: %s", step, e)
                continue
            with self._lock:
                self._stats["steps_written"] += 1
                self._stats["groups_written"] += len(records)
                self._stats["bytes_written"] += written

    def _lines(self, rec: Dict[str, Any]) -> List[Dict[str, Any]]:
        if self.records == "group":
            return [rec]
        head = {k: v for k, v in rec.items() if k not in ("kind", "rollouts", "outcome_checks")}
        out = []
        for r in rec["rollouts"]:
            line: Dict[str, Any] = {"kind": "rollout"}
            line.update(head)
            line.update(r)
            out.append(line)
        return out

    def _encode(self, record: Dict[str, Any]) -> bytes:
        return (json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")

    def _open(self, path: str) -> int:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if path not in self._checked:
            self._repair_tail(fd, path)
            self._checked.add(path)
        return fd

    def _repair_tail(self, fd: int, path: str) -> None:
        """Cut a trailing fragment without its newline (a writer killed mid-line)."""
        size = os.fstat(fd).st_size
        if size == 0:
            return
        with open(path, "rb") as f:
            pos = size
            chunk = 1 << 16
            while pos > 0:
                start = max(0, pos - chunk)
                f.seek(start)
                buf = f.read(pos - start)
                if pos == size and buf.endswith(b"\n"):
                    return
                i = buf.rfind(b"\n")
                if i >= 0:
                    keep = start + i + 1
                    break
                pos = start
            else:
                keep = 0
        os.ftruncate(fd, keep)
        with self._lock:
            self._stats["torn_tails_repaired"] += 1
        _log.warning("consensus-lens logger: cut %d bytes of an incomplete last line from %s", size - keep, path)

    def _write_line(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]

    def _write_step(self, step: int, records: List[Dict[str, Any]]) -> int:
        path = self.path_for(step)
        fd = self._open(path)
        total = 0
        try:
            for rec in records:
                for line in self._lines(rec):
                    data = self._encode(line)
                    self._write_line(fd, data)
                    total += len(data)
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        return total
