"""Converts a framework's roll-out dump that the extension does not open into native JSON lines.

    python -m consensus_lens.convert slime DUMP/rollout_data/3.pt [more.pt ...] --out DIR
    python -m consensus_lens.convert trackio ~/.cache/huggingface/trackio/PROJECT.db --out DIR

Trackio (``trackio.Trace`` rows of the project database's ``traces`` table, written by slime's
``--use-trackio`` and TRL's async GRPO): read with Python's ``sqlite3``, read-only (``mode=ro``:
the WAL Trackio writes by default is read too); see ``trackio_records``. The traces are a sample
the trainer chose to log, so a group holds the traces logged for it (every record says
``"sampled": true`` in its ``extra``).

slime and miles with ``--dump-details DUMP`` write ``DUMP/rollout_data/{rollout_id}.pt`` (and
``eval_{rollout_id}.pt``) with ``torch.save({"rollout_id", "samples": [Sample.to_dict()], ...})``
(slime ``slime/observability/rollout_data_utils.py`` ``save_debug_rollout_data``, miles
``miles/ray/rollout/debug_data.py``). A ``.pt`` file is a pickle: loading one with the default
``torch.load`` runs whatever code it names, so the extension never opens it. This converter loads
it with ``torch.load(weights_only=True)``, PyTorch's restricted unpickler, which builds only
tensors and plain containers and refuses any other object (a dump that holds something else is
refused, not run): convert only files you trust all the same.

What is written: ``DIR/{rollout_id}.jsonl`` (``DIR/eval/{rollout_id}.jsonl`` for evaluation dumps,
their groups with ``run_id`` ``eval``: the same prompts at the same step are another run),
one native group record per ``group_index`` (slime's group of ``n_samples_per_prompt`` samples of
one prompt), in the order of the dump, with

- ``step``: the dump's ``rollout_id``; ``question_id``: ``p-`` + 12 hex digits of the SHA-1 of the
  prompt text (the same question keeps its id across steps; ``group_index`` counts within a batch),
- each roll-out's ``response``, ``reward`` (a number; a dict of rewards needs ``--reward-key``, as
  slime's ``--reward-key``; evaluation rewards go to ``extra.score``: they are against the data set),
  ``mean_logprob`` (the mean of ``rollout_log_probs`` over the tokens whose ``loss_mask`` is 1),
  ``sample_idx`` (``index``), and ``status`` in its ``extra``,
- ``ground_truth``: the samples' ``label`` (a diagnostic).
"""

import argparse
import hashlib
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional

__all__ = ["convert_slime", "slime_records", "convert_trackio", "trackio_records"]


class ConvertError(ValueError):
    """The file is not a dump this converter reads."""


def _prompt_text(p: Any) -> str:
    """As the TRL integration shows a prompt: the string, a single message's content, else JSON."""
    if isinstance(p, str):
        return p
    if isinstance(p, list) and len(p) == 1 and isinstance(p[0], dict) and isinstance(p[0].get("content"), str):
        return p[0]["content"]
    return json.dumps(p, ensure_ascii=False, separators=(",", ":"), default=str)


def _plain(x: Any) -> Any:
    """Tensors (weights_only may hold them) as lists, so the record is JSON."""
    if hasattr(x, "tolist") and callable(x.tolist):
        return x.tolist()
    return x


def _mean_logprob(s: Dict[str, Any]) -> Optional[float]:
    lps = _plain(s.get("rollout_log_probs"))
    if not isinstance(lps, list) or not lps:
        return None
    mask = _plain(s.get("loss_mask"))
    if not isinstance(mask, list) or len(mask) != len(lps):
        mask = None
    vals = [float(x) for i, x in enumerate(lps) if mask is None or mask[i]]
    vals = [v for v in vals if math.isfinite(v)]
    return sum(vals) / len(vals) if vals else None


def _reward(r: Any, key: Optional[str], where: str) -> Optional[float]:
    r = _plain(r)
    if isinstance(r, dict):
        if key is None:
            raise ConvertError("%s: the reward is a dict (%s): pass --reward-key, as slime's --reward-key" % (where, ", ".join(sorted(map(str, r)))))
        r = r.get(key)
    if isinstance(r, bool):
        return 1.0 if r else 0.0
    if isinstance(r, (int, float)) and math.isfinite(r):
        return float(r)
    return None


def slime_records(payload: Any, *, evaluation: bool, reward_key: Optional[str] = None, where: str = "dump") -> List[Dict[str, Any]]:
    """The native group records of one loaded dump (``{"rollout_id", "samples"}``)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("samples"), list):
        raise ConvertError("%s: not a slime/miles --dump-details roll-out file (no \"samples\" list)" % where)
    step = payload.get("rollout_id")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ConvertError("%s: no integer rollout_id" % where)
    groups: Dict[Any, Dict[str, Any]] = {}
    for i, s in enumerate(payload["samples"]):
        if not isinstance(s, dict):
            raise ConvertError("%s: sample %d is not a dict" % (where, i))
        gi = s.get("group_index")
        key = gi if gi is not None else ("prompt", _prompt_text(s.get("prompt", "")))
        g = groups.get(key)
        prompt = _prompt_text(s.get("prompt", ""))
        if g is None:
            g = groups[key] = {"kind": "group", "step": step, "question_id": "p-" + hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:12],
                               "prompt": prompt, "rollouts": []}
            if evaluation:
                g["run_id"] = "eval"  # a run of its own: the same prompts at the same step as the training groups
            if s.get("label") is not None:
                g["ground_truth"] = s["label"] if isinstance(s["label"], str) else json.dumps(_plain(s["label"]), default=str)
        r = _reward(s.get("reward"), reward_key, "%s sample %d" % (where, i))
        ro: Dict[str, Any] = {"response": s.get("response") if isinstance(s.get("response"), str) else "", "extra": {"status": s.get("status"), "group_index": gi}}
        if evaluation:
            ro["extra"]["score"] = r
        else:
            ro["reward"] = r
        lp = _mean_logprob(s)
        if lp is not None:
            ro["mean_logprob"] = lp
        if isinstance(s.get("index"), int):
            ro["sample_idx"] = s["index"]
        g["rollouts"].append(ro)
    # a question twice in one batch: two groups, named as the readers name them
    seen: Dict[str, int] = {}
    for g in groups.values():
        k = seen[g["question_id"]] = seen.get(g["question_id"], 0) + 1
        if k > 1:
            g["question_id"] = "%s#%d" % (g["question_id"], k)
    return list(groups.values())


def _load(path: str) -> Any:
    try:
        import torch  # type: ignore
    except ImportError:
        raise ConvertError("converting a .pt file needs torch (pip install torch)") from None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # the restricted unpickler refuses anything but tensors and plain data
        raise ConvertError("%s: refused by torch.load(weights_only=True) (%s): the file holds objects other than "
                           "tensors and plain data, and is not loaded" % (path, str(e).splitlines()[0] if str(e) else type(e).__name__)) from None


def convert_slime(paths: List[str], out: str, *, reward_key: Optional[str] = None) -> List[str]:
    """Converts each dump; returns the files written."""
    written = []
    for path in paths:
        name = os.path.basename(path)
        evaluation = name.startswith("eval_")
        recs = slime_records(_load(path), evaluation=evaluation, reward_key=reward_key, where=path)
        folder = os.path.join(out, "eval") if evaluation else out
        os.makedirs(folder, exist_ok=True)
        dest = os.path.join(folder, "%06d.jsonl" % recs[0]["step"] if recs else name[: -len(".pt")] + ".jsonl")
        tmp = dest + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n")
        os.replace(tmp, dest)
        written.append(dest)
    return written


def _json(v: Any, default: Any) -> Any:
    if isinstance(v, (bytes, str)):
        try:
            return json.loads(v)
        except ValueError:
            return default
    return default


def _content(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else "" for p in c)
    return ""


def trackio_records(rows: List[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """Native group records from rows of Trackio's ``traces`` table, by output file
    (``{run_name}/[eval/]{step:06d}.jsonl``). A trace's messages are the prompt, then the roll-out:
    the prompt is every message up to the last ``user`` one, the response the ``assistant``
    messages after it. A group is the traces of one run, key, step and ``group_index`` (slime) or
    ``group_id`` (TRL async GRPO) in their metadata; ``reward`` is the metadata's."""
    groups: Dict[Any, Dict[str, Any]] = {}
    files: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        messages = _json(row["messages"], [])
        meta = _json(row["metadata"], {})
        if not isinstance(messages, list) or not isinstance(meta, dict):
            continue
        last_user = max([i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"], default=-1)
        prompt_msgs = messages[: last_user + 1]
        response = "\n\n".join(_content(m.get("content")) for m in messages[last_user + 1:] if isinstance(m, dict) and m.get("role") == "assistant")
        gid = meta.get("group_index", meta.get("group_id"))
        prompt = _prompt_text(prompt_msgs)
        step = int(row["step"])
        evaluation = meta.get("split") == "eval" or str(row["key"]).startswith("eval/")
        where = "%s/%s%06d.jsonl" % (str(row["run_name"]).replace("/", "_"), "eval/" if evaluation else "", step)
        key = (where, row["key"], gid if gid is not None else ("prompt", prompt))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"kind": "group", "step": step, "question_id": "p-" + hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:12],
                               "prompt": prompt, "rollouts": [], "extra": {"trackio_key": row["key"], "sampled": True},
                               # each Trackio run (and its evaluations) a run of its own in the converted folder
                               "run_id": where.rsplit("/", 1)[0]}
            files.setdefault(where, []).append(g)
        r = meta.get("reward")
        r = float(r) if isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r) else None
        ro: Dict[str, Any] = {"response": response, "extra": {k: meta[k] for k in ("status", "advantage", "model_version", "group_index", "group_id") if k in meta}}
        if evaluation:
            ro["extra"]["score"] = r
        else:
            ro["reward"] = r
        if isinstance(meta.get("sample_index"), int):
            ro["sample_idx"] = meta["sample_index"]
        g["rollouts"].append(ro)
    for recs in files.values():
        seen: Dict[str, int] = {}
        for g in recs:
            k = seen[g["question_id"]] = seen.get(g["question_id"], 0) + 1
            if k > 1:
                g["question_id"] = "%s#%d" % (g["question_id"], k)
    return files


def convert_trackio(db: str, out: str) -> List[str]:
    """Reads a Trackio project database (``{project}.db``) read-only and writes its traces as native
    group records; returns the files written."""
    import sqlite3

    if not os.path.isfile(db):
        raise ConvertError("%s: no such file" % db)
    conn = sqlite3.connect("file:%s?mode=ro" % os.path.abspath(db), uri=True)
    try:
        try:
            # the file may come from anyone: its schema runs no function of ours, and "traces"
            # must be Trackio's table, not a view that computes rows
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute("PRAGMA query_only = ON")
            kind = conn.execute("SELECT type FROM sqlite_master WHERE name = 'traces'").fetchone()
            if kind is None or kind[0] != "table":
                raise ConvertError("%s: not a Trackio project database (no traces table)" % db)
            cur = conn.execute("SELECT run_name, step, key, trace_index, messages, metadata FROM traces ORDER BY rowid")
        except sqlite3.DatabaseError as e:
            raise ConvertError("%s: not a Trackio project database with traces (%s)" % (db, e)) from None
        rows = [dict(zip(("run_name", "step", "key", "trace_index", "messages", "metadata"), r)) for r in cur]
    finally:
        conn.close()
    written = []
    for rel, recs in trackio_records(rows).items():
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest + ".tmp", "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n")
        os.replace(dest + ".tmp", dest)
        written.append(dest)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m consensus_lens.convert", description=__doc__.split("\n\n")[0])
    ap.add_argument("framework", choices=["slime", "miles", "trackio"], help="the writer of the dump (miles writes slime's format)")
    ap.add_argument("files", nargs="+", help="rollout_data/{id}.pt files; for trackio, {project}.db files")
    ap.add_argument("--out", required=True, help="folder for the native JSON lines (a run the extension opens)")
    ap.add_argument("--reward-key", default=None, help="the reward to read when a sample's reward is a dict")
    a = ap.parse_args(argv)
    try:
        if a.framework == "trackio":
            written = [f for db in a.files for f in convert_trackio(db, a.out)]
            print("consensus_lens.convert: Trackio keeps the traces the trainer chose to log (slime: the first "
                  "trackio_max_traces_per_rollout of a batch; TRL async GRPO: 8 every 8th policy version): a group "
                  "holds the traces logged for it, not every sample the trainer drew", file=sys.stderr)
        else:
            written = convert_slime(a.files, a.out, reward_key=a.reward_key)
        for f in written:
            print(f)
    except (ConvertError, OSError) as e:
        print("consensus_lens.convert: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
