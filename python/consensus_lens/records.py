"""Native-format records (docs/contract.md#native-format, ``consensus-lens/v1``) built from what a training loop holds.

Standard library only, Python >= 3.9.

A *group spec* is what a training loop naturally has for one question at one step::

    {"question_id": "math500/017", "prompt": "...",
     "responses": ["...", ...],                  # required, N strings
     "mean_logprobs": [-0.23, ...],              # optional, N floats (natural log)
     "token_logprobs": [[-0.01, ...], ...],      # optional, N arrays (mean computed if needed)
     "tokens": [["The", " sum", ...], ...],      # optional, N arrays: each token's text (kept with
                                                 #   token_logprobs: the editor shows them on the text)
     "self_certainties": [3.1, ...],             # optional, N floats: mean over the response tokens of
                                                 #   KL(uniform || pi) = logsumexp(z) - mean(z) (INTUITOR)
     "entropies": [0.7, ...],                    # optional, N floats: mean token entropy (RENT)
     "token_entropies": [[0.2, ...], ...],       # optional, N arrays: each response token's entropy
                                                 #   (the mean computed from them if "entropies" is absent)
     "confidence_approximate": False,            # optional: True when the values above were computed
                                                 #   from sampled-token log-probs (or a top-k of them),
                                                 #   not the full-vocabulary logits: an approximation
     "rewards": [1.0, 0.0, ...],                 # optional, the rewards the loop used
     "answers": ["1/2", None, ...],              # optional, pre-extracted answers
     "verifications": [{"valid": True}, ...],    # optional (T3RL), dict / bool / None each
     "outcome_checks": [{"answer": "1/2", "passed": 6, "trials": 8}],   # optional (MS-TTRL)
     "ground_truth": "1/2",                      # optional, diagnostics only
     "framework": "trl",                         # optional: "trl", "verl" or "nemo-rl", the trainer
                                                 # (the GRPO view then follows its advantage formula)
     "extra": {...}}                             # optional, any JSON

``group_record`` turns one into a native group record (``{"kind": "group", "rollouts": [...]}``).
A dict that already has ``rollouts`` is taken as a native record and only checked and cleaned.
Self-certainty and entropy need the full-vocabulary logits, which only a trainer's forward pass
holds (docs/training-loop.md, "Self-certainty and token entropy"); the roll-out fields are
``self_certainty``, ``entropy``, ``token_entropies`` and, for values estimated from sampled-token
log-probs, ``confidence_approximate: true`` (docs/log-formats.md). Per-token entropies are always kept
(an entropy reward may read a window of them).
Non-finite numbers (NaN, ±inf) become ``null``: strict JSON has no NaN, and a group whose
confidence is missing runs CoRE as EC (docs/contract.md#ec-and-core) rather than on a made-up number.
"""

import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

__all__ = ["group_record", "finite_or_none", "ground_truth_value", "mean_of", "strip_ground_truth", "token_texts", "RecordError"]


class RecordError(ValueError):
    """A group handed to the logger or the reward client is not well formed."""


def finite_or_none(x: Any) -> Optional[float]:
    """A plain float, or None for None / NaN / ±inf. Accepts numpy and torch scalars."""
    if x is None:
        return None
    if isinstance(x, bool):
        raise RecordError("a boolean is not a number here")
    if hasattr(x, "item") and not isinstance(x, (int, float)):
        x = x.item()
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise RecordError("not a number: %r" % (x,))
    return v if math.isfinite(v) else None


def mean_of(values: Iterable[Any]) -> Optional[float]:
    """Mean of per-token log-probs; None when empty or when any value is not finite."""
    if hasattr(values, "tolist"):
        values = values.tolist()
    total = 0.0
    n = 0
    for v in values:
        f = finite_or_none(v)
        if f is None:
            return None
        total += f
        n += 1
    return total / n if n else None


def _as_list(x: Any, name: str, n: int) -> List[Any]:
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise RecordError("%s must be a sequence of %d items" % (name, n))
    out = list(x)
    if len(out) != n:
        raise RecordError("%s has %d items, the group has %d responses" % (name, len(out), n))
    return out


def _verification(v: Any) -> Optional[Dict[str, Any]]:
    if v is None:
        return None
    if isinstance(v, bool):
        return {"valid": v}
    if isinstance(v, Mapping):
        out: Dict[str, Any] = {}
        if "valid" in v and v["valid"] is not None:
            out["valid"] = bool(v["valid"])
        if "tool_output" in v and v["tool_output"] is not None:
            out["tool_output"] = str(v["tool_output"])
        for k, val in v.items():
            if k not in ("valid", "tool_output"):
                out[k] = val
        return out
    raise RecordError("a verification is a dict {valid, tool_output}, a bool or None, not %r" % (v,))


def _outcome_checks(checks: Any) -> List[Dict[str, Any]]:
    out = []
    for c in checks:
        if not isinstance(c, Mapping) or "answer" not in c:
            raise RecordError("an outcome check is {answer, passed, trials}, not %r" % (c,))
        passed, trials = c.get("passed"), c.get("trials")
        if not isinstance(passed, int) or not isinstance(trials, int) or trials <= 0 or not 0 <= passed <= trials:
            raise RecordError("outcome check for %r needs integers 0 <= passed <= trials, trials > 0" % (c["answer"],))
        out.append({"answer": str(c["answer"]), "passed": passed, "trials": trials})
    return out


def token_texts(tokenizer: Any, ids: Any, cache: Optional[Dict[int, str]] = None) -> List[str]:
    """Each token's text, one string per id, as the tokenizer decodes the sequence (special tokens
    skipped, as the trainers decode completions), for ``tokens`` beside ``token_logprobs``.

    A token decodes alone to the same text wherever it stands, so ``cache`` (id -> text, shared
    across calls) makes a batch one decode per distinct id. A token that is part of a UTF-8
    character (byte-level BPE) decodes alone to U+FFFD: it is decoded with the tokens that complete
    the character, the text on the last of them and "" on the others."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    memo: Dict[int, str] = {} if cache is None else cache
    out: List[str] = []
    pending: List[int] = []
    for i in ids:
        i = int(i)
        if not pending:
            s = memo.get(i)
            if s is None:
                s = memo[i] = tokenizer.decode([i], skip_special_tokens=True)
            if "\ufffd" not in s:
                out.append(s)
                continue
        pending.append(i)
        s = tokenizer.decode(pending, skip_special_tokens=True)
        # A UTF-8 character is at most 4 bytes: after 4 tokens the text is what it is.
        if s.endswith("\ufffd") and len(pending) < 4:
            continue
        out.extend([""] * (len(pending) - 1))
        out.append(s)
        pending = []
    if pending:
        out.extend([""] * (len(pending) - 1))
        out.append(tokenizer.decode(pending, skip_special_tokens=True))
    return out


def _token_strings(tokens: Any, n: int, where: str) -> List[str]:
    """The tokens' text, one string per log-prob (a mismatch would put values on the wrong text)."""
    t = tokens.tolist() if hasattr(tokens, "tolist") else tokens
    if isinstance(t, (str, bytes)) or not isinstance(t, Iterable):
        raise RecordError("%s: tokens must be a list of strings" % where)
    t = list(t)
    if len(t) != n or not all(isinstance(x, str) for x in t):
        raise RecordError("%s: tokens must be %d strings, one per token log-prob" % (where, n))
    return t


def _floats(values: Any) -> List[Optional[float]]:
    return [finite_or_none(v) for v in (values.tolist() if hasattr(values, "tolist") else values)]


def _clean_confidence(r: Dict[str, Any], where: str) -> None:
    """The logit-derived fields of one roll-out, in place: finite floats or null; ``entropy`` the
    mean of ``token_entropies`` when only those were given; ``confidence_approximate`` a boolean."""
    for k in ("self_certainty", "entropy"):
        if k in r:
            r[k] = finite_or_none(r[k])
    te = r.get("token_entropies")
    if te is not None:
        if isinstance(te, (str, bytes)) or not isinstance(te, Iterable):
            raise RecordError("%s: token_entropies must be a list of numbers" % where)
        r["token_entropies"] = _floats(te)
        if r.get("entropy") is None:
            r["entropy"] = mean_of(r["token_entropies"]) if None not in r["token_entropies"] else None
    elif "token_entropies" in r:
        del r["token_entropies"]
    if "confidence_approximate" in r:
        if r["confidence_approximate"] is None:
            del r["confidence_approximate"]
        elif not isinstance(r["confidence_approximate"], bool):
            raise RecordError("%s: confidence_approximate must be true or false" % where)
        elif not r["confidence_approximate"] or all(r.get(k) is None for k in ("self_certainty", "entropy", "token_entropies")):
            del r["confidence_approximate"]  # said only where it qualifies a value


def _clean_rollout(r: Mapping[str, Any], where: str, keep_token_logprobs: bool) -> Dict[str, Any]:
    if not isinstance(r, Mapping):
        raise RecordError("%s: a roll-out must be an object" % where)
    resp = r.get("response")
    if not isinstance(resp, str):
        raise RecordError("%s: response must be a string" % where)
    out = dict(r)
    out.pop("kind", None)
    if "mean_logprob" in out:
        out["mean_logprob"] = finite_or_none(out["mean_logprob"])
    if out.get("token_logprobs") is not None:
        toks = out["token_logprobs"]
        if out.get("mean_logprob") is None:
            out["mean_logprob"] = mean_of(toks)
        if keep_token_logprobs:
            out["token_logprobs"] = [finite_or_none(t) for t in (toks.tolist() if hasattr(toks, "tolist") else toks)]
        else:
            del out["token_logprobs"]
    if "tokens" in out:
        if keep_token_logprobs and out.get("token_logprobs") is not None:
            out["tokens"] = _token_strings(out["tokens"], len(out["token_logprobs"]), where)
        else:
            del out["tokens"]
    if "reward" in out:
        out["reward"] = finite_or_none(out["reward"])
    _clean_confidence(out, where)
    if "verification" in out:
        out["verification"] = _verification(out["verification"])
    return out


def group_record(
    spec: Mapping[str, Any],
    step: Optional[int] = None,
    *,
    run_id: Optional[str] = None,
    keep_token_logprobs: bool = False,
) -> Dict[str, Any]:
    """One native group record from a group spec (see the module doc) or a native record.

    ``step`` overrides the spec's own ``step``. Per-token arrays are reduced to their mean and,
    unless ``keep_token_logprobs``, not written (they are large: N × length floats per group).
    """
    if not isinstance(spec, Mapping):
        raise RecordError("a group must be a dict, not %s" % type(spec).__name__)
    qid = spec.get("question_id")
    if qid is None or isinstance(qid, bool):
        raise RecordError("a group needs a question_id")
    qid = str(qid)
    st = step if step is not None else spec.get("step")
    if not isinstance(st, int) or isinstance(st, bool):
        raise RecordError("group %s: step must be an integer" % qid)
    where = "group %s at step %d" % (qid, st)

    rec: Dict[str, Any] = {"kind": "group", "step": st, "question_id": qid}
    if run_id is not None and "run_id" not in spec:
        rec["run_id"] = run_id

    if "rollouts" in spec:
        rollouts_in = spec["rollouts"]
        if isinstance(rollouts_in, (str, bytes)) or not isinstance(rollouts_in, Iterable):
            raise RecordError("%s: rollouts must be a list" % where)
        rollouts = [
            _clean_rollout(r, "%s, roll-out %d" % (where, i), keep_token_logprobs)
            for i, r in enumerate(rollouts_in)
        ]
        for k, v in spec.items():
            if k not in ("kind", "step", "question_id", "rollouts", "outcome_checks"):
                rec[k] = v
    else:
        responses = spec.get("responses")
        if responses is None:
            raise RecordError("%s: needs responses (or native rollouts)" % where)
        if hasattr(responses, "tolist"):
            responses = responses.tolist()
        responses = list(responses)
        n = len(responses)
        rollouts = []
        for i, text in enumerate(responses):
            if not isinstance(text, str):
                raise RecordError("%s: response %d is %s, not a string" % (where, i, type(text).__name__))
            rollouts.append({"sample_idx": i, "response": text})

        def column(name: str) -> Optional[List[Any]]:
            v = spec.get(name)
            return None if v is None else _as_list(v, "%s: %s" % (where, name), n)

        means, tokens = column("mean_logprobs"), column("token_logprobs")
        strings = column("tokens")
        rewards, answers, verifs = column("rewards"), column("answers"), column("verifications")
        certs, ents, tents = column("self_certainties"), column("entropies"), column("token_entropies")
        approx = spec.get("confidence_approximate")
        if approx is not None and not isinstance(approx, bool):
            raise RecordError("%s: confidence_approximate must be true or false" % where)
        for i, r in enumerate(rollouts):
            if answers is not None and answers[i] is not None:
                r["answer"] = str(answers[i])
            m = finite_or_none(means[i]) if means is not None else None
            if m is None and tokens is not None and tokens[i] is not None:
                m = mean_of(tokens[i])
            if means is not None or tokens is not None:
                r["mean_logprob"] = m
            if keep_token_logprobs and tokens is not None and tokens[i] is not None:
                t = tokens[i].tolist() if hasattr(tokens[i], "tolist") else tokens[i]
                r["token_logprobs"] = [finite_or_none(x) for x in t]
                if strings is not None and strings[i] is not None:
                    r["tokens"] = _token_strings(strings[i], len(t), "%s, roll-out %d" % (where, i))
            if rewards is not None:
                r["reward"] = finite_or_none(rewards[i])
            if verifs is not None and verifs[i] is not None:
                r["verification"] = _verification(verifs[i])
            if certs is not None:
                r["self_certainty"] = certs[i]
            if ents is not None:
                r["entropy"] = ents[i]
            if tents is not None and tents[i] is not None:
                r["token_entropies"] = tents[i]
            if approx:
                r["confidence_approximate"] = True
            _clean_confidence(r, "%s, roll-out %d" % (where, i))
        for k in ("prompt", "ground_truth", "run_id", "framework", "extra"):
            if spec.get(k) is not None:
                rec[k] = ground_truth_value(spec[k]) if k == "ground_truth" else spec[k]
    rec["rollouts"] = rollouts
    if spec.get("outcome_checks") is not None:
        rec["outcome_checks"] = _outcome_checks(spec["outcome_checks"])
    return rec


def ground_truth_value(v: Any) -> Any:
    """A data set's ground truth as the native log holds it (docs/contract.md#ground-truth): a
    string, or the list of its accepted forms when it has several (verl's ``gts`` may be a list, a
    NumPy array of answers); None when there is none. ``str()`` of a list would be one answer that
    nothing equals."""
    if v is None:
        return None
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        forms = [str(x) for x in v if x is not None and str(x) != ""]
        if not forms:
            return None
        return forms[0] if len(forms) == 1 else forms
    return str(v)


def strip_ground_truth(record: Mapping[str, Any]) -> Dict[str, Any]:
    """A copy of a native group record without any ground truth (group- or roll-out-level)."""
    out = {k: v for k, v in record.items() if k != "ground_truth"}
    rollouts = out.get("rollouts")
    if isinstance(rollouts, Sequence) and not isinstance(rollouts, (str, bytes)):
        out["rollouts"] = [
            {k: v for k, v in r.items() if k != "ground_truth"} if isinstance(r, Mapping) else r
            for r in rollouts
        ]
    return out
