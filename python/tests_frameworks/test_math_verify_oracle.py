"""Math-Verify 0.9.0 as a differential oracle on the roll-outs in the repository's fixtures
(test/fixtures/logs/**, examples/demo-run): extraction (does a response have an answer?) and
equivalence (within each prompt, are two of its distinct answers the same?). Every disagreement
must fall in a class docs/answers.md documents ("Math-Verify on the fixture roll-outs")."""
import glob
import importlib.metadata
import itertools
import json
import os
import subprocess

import pandas as pd
from math_verify import parse, verify

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "dist", "cli.js")


def responses():
    out = {}

    def add(prompt, text):
        if isinstance(text, str) and text:
            out.setdefault(str(prompt), set()).add(text)

    jsonl = glob.glob(os.path.join(ROOT, "test/fixtures/logs/**/*.jsonl"), recursive=True) + glob.glob(os.path.join(ROOT, "examples/demo-run/*.jsonl"))
    for f in jsonl:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                if "output" in o:  # verl
                    add(o.get("input"), o["output"])
                elif "rollouts" in o:  # native group record
                    for r in o["rollouts"]:
                        add(o.get("prompt", o.get("question_id")), r.get("response"))
                elif "response" in o:  # native roll-out record
                    add(o.get("prompt", o.get("question_id")), o["response"])
                elif "content" in o:  # NeMo RL
                    c = o["content"][0] if len(o["content"]) == 1 and isinstance(o["content"][0], list) else o["content"]
                    add(c[0], c[-1])
    for f in glob.glob(os.path.join(ROOT, "test/fixtures/logs/**/*.parquet"), recursive=True):
        df = pd.read_parquet(f)
        if "prompt" not in df.columns or "completion" not in df.columns:
            continue  # not a completions table (miles' per-token dashboard_columns: token ids, no text)
        for p, c in zip(df["prompt"], df["completion"]):
            add(p if isinstance(p, str) else json.dumps(p, default=str), c if isinstance(c, str) else str(c))
    for f in glob.glob(os.path.join(ROOT, "test/fixtures/logs/**/*.table.json"), recursive=True):
        with open(f) as fh:
            t = json.load(fh)
        for row in t["data"]:
            d = dict(zip(t["columns"], row))
            if "completion" in d:
                add(d["prompt"], d["completion"])
            for k in t["columns"]:
                if k.startswith("output_"):
                    add(d["input_" + k[7:]], d[k])
    return out


def node(args, lines):
    r = subprocess.run(["node", CLI, *args], input="".join(json.dumps(x) + "\n" for x in lines),
                       capture_output=True, text=True, check=True, timeout=300)
    return [json.loads(x) for x in r.stdout.splitlines()]


def unclosed_last_box(text):
    i = text.rfind("\\boxed{")
    if i < 0:
        return False
    depth = 0
    for ch in text[i + len("\\boxed"):]:
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return False
    return True


def test_math_verify_agrees_except_in_documented_classes():
    assert importlib.metadata.version("math-verify") == "0.9.0"
    by_prompt = responses()
    items = [(p, r) for p in sorted(by_prompt) for r in sorted(by_prompt[p])]
    assert len(items) > 1000
    ours = [x["answer"] for x in node(["extract", "--jsonl", "-"], [{"response": r} for _, r in items])]
    mv = [parse(r) for _, r in items]

    # Extraction: ours says "no answer" exactly where Math-Verify finds none, except for responses
    # cut inside their last \boxed{ (truncated generations), where Math-Verify falls back to the
    # last $...$ of the reasoning and we give no answer; and a last box that is empty (`\boxed{}`,
    # what collapsing models write), which is the empty answer for us (docs/answers.md: the empty
    # class of a degenerate plurality) and nothing for Math-Verify.
    presence = [i for i in range(len(items)) if (ours[i] is None) != (len(mv[i]) == 0)]
    assert presence, "the fixtures hold truncated roll-outs: this class must be exercised"
    for i in presence:
        text = items[i][1]
        assert (ours[i] is None and unclosed_last_box(text)) or (ours[i] == "" and text.rstrip().endswith("\\boxed{}")), text[-120:]
    print("extraction disagreements: %d of %d responses, all truncated inside \\boxed{ or an empty last box" % (len(presence), len(items)))

    # Equivalence of the distinct answers of each prompt.
    pairs = set()
    for p in by_prompt:
        answers = sorted({a for (q, _), a in zip(items, ours) if q == p and a is not None})
        pairs.update(itertools.combinations(answers, 2))
    pairs = sorted(pairs)
    eq = [x["equal"] for x in node(["equal", "--jsonl", "-"], [{"a": a, "b": b} for a, b in pairs])]
    mveq = [verify(parse("$%s$" % a), parse("$%s$" % b)) for a, b in pairs]
    differ = [(a, b, x) for (a, b), x, y in zip(pairs, eq, mveq) if x != y]
    assert len(pairs) > 100
    # The one class: a percent answer equals its value over 100 for us ("X\%" reads as X and X/100),
    # not for Math-Verify.
    for a, b, ours_eq in differ:
        assert ours_eq and ("\\%" in a) != ("\\%" in b), (a, b)
    print("equivalence disagreements: %d of %d pairs: %s" % (len(differ), len(pairs), differ))
    assert len(differ) == 3
