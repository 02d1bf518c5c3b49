"""The table-maker: docs/experiments.md from the runs' logs, read through the ``consensus-lens``
CLI (``report --json`` for labels, regimes, gates and pseudo-label correctness per question;
``health --json`` for the learning signal and the confidence premise). The greedy test accuracy
comes from each run's eval.jsonl, the per-roll-out accuracy from the logged roll-outs against the
logged ground truth (a diagnostic the reward never saw)."""
import glob
import json
import math
import os
import subprocess
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLI = os.path.join(ROOT, "dist", "cli.js")
OPS = ["majority", "cisc", "ec", "core"]
N_TEST = [0]  # the number of test questions, set by write() for the verdicts
NAMES = {"majority": "Majority vote", "cisc": "CISC", "core": "CoRE", "ec": "EC"}


def cli(cmd: str, path: str, *extra: str) -> Dict:
    out = subprocess.run(["node", CLI, cmd, path, "--json", "--no-cache", *extra], capture_output=True, text=True, timeout=900)
    if out.returncode not in (0, 3):
        raise RuntimeError("consensus-lens %s %s failed (%d): %s" % (cmd, path, out.returncode, out.stderr[-2000:]))
    return json.loads(out.stdout)


def mean(xs: Sequence[float]) -> Optional[float]:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else None


def fmt(xs: Sequence[Optional[float]], pct: bool = True, digits: int = 0) -> str:
    """Mean over seeds, with the seeds' range when there are several."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    k = 100.0 if pct else 1.0
    f = "%%.%df" % digits
    m = f % (k * sum(xs) / len(xs))
    if len(xs) == 1:
        return m
    return "%s (%s–%s)" % (m, f % (k * min(xs)), f % (k * max(xs)))


def rollouts(run_dir: str) -> List[Dict]:
    recs = []
    for f in sorted(glob.glob(os.path.join(run_dir, "*.jsonl"))):
        with open(f) as fh:
            recs.extend(json.loads(line) for line in fh if line.strip())
    return recs


def analyse(run: Dict, out: str, steps_per_epoch: int) -> Dict:
    """One run's numbers, per epoch (each epoch shows every test question once)."""
    rdir = os.path.join(out, "runs", run["name"])
    log = os.path.join(rdir, "consensus")
    rep = cli("report", log, "--operators", ",".join(OPS), "--configured-operator", run["operator"])
    hl = cli("health", log, "--configured-operator", run["operator"])
    op = run["operator"]
    epochs: Dict[int, Dict[str, List[float]]] = {}

    def put(step: int, key: str, value: Optional[float]) -> None:
        if value is not None:
            epochs.setdefault((step - 1) // steps_per_epoch + 1, {}).setdefault(key, []).append(value)

    groups = rep["groups"]
    for g in groups:
        s = g["step"]
        put(s, "label_acc", 1.0 if g["correct"].get(op) else 0.0)
        put(s, "majority_acc", 1.0 if g["correct"].get("majority") else 0.0)
        put(s, "contested", 1.0 if g["regime"] == "contested" else 0.0)
        put(s, "gate", g["gates"].get("core"))
    ls = hl["learning_signal"]["groups"].get(op) or []
    for s, v in zip(hl["steps"], ls):
        put(s, "signal", v)
    for r in rollouts(log):
        truth = r.get("ground_truth")
        if truth is None:
            continue
        from task import boxed

        put(r["step"], "rollout_acc", 1.0 if boxed(r.get("response") or "") == str(truth) else 0.0)
    per_epoch = {e: {k: mean(v) for k, v in d.items()} for e, d in sorted(epochs.items())}
    with open(os.path.join(rdir, "eval.jsonl")) as f:
        evals = [json.loads(line) for line in f if line.strip()]
    # Where the operators part: questions on which CoRE's (or CISC's) label differs from the vote's,
    # and who was right (the recovery claim), over the whole run.
    parts = {}
    for other in ("cisc", "core"):
        diff = [g for g in groups if g["labels"].get(other) != g["labels"].get("majority")]
        parts[other] = {"n": len(diff), "other_right": sum(1 for g in diff if g["correct"].get(other)),
                        "majority_right": sum(1 for g in diff if g["correct"].get("majority"))}
    contested = [g for g in groups if g["regime"] == "contested"]
    contested_acc = {o: mean([1.0 if g["correct"].get(o) else 0.0 for g in contested]) for o in OPS}
    return {"run": run, "epochs": per_epoch, "evals": {e["step"]: e["greedy_acc"] for e in evals},
            "premise": hl.get("premise", {}), "parts": parts, "contested_acc": contested_acc,
            "contested_n": len(contested), "groups": len(groups),
            "first_step_premise": premise_at(hl, 1)}


def premise_at(hl: Dict, step: int) -> Dict:
    out = {}
    for s in hl["series"]:
        if s["id"] in ("auroc_label", "auroc_truth") and step in hl["steps"]:
            out[s["id"]] = s["values"][hl["steps"].index(step)]
    return out


def plateau_step(evals: Dict[int, float]) -> Optional[int]:
    """The first evaluated step whose greedy accuracy is within 2 points of the run's best."""
    if not evals:
        return None
    best = max(evals.values())
    return min(s for s, v in evals.items() if v >= best - 0.02)


def base_model(out: str, man: Dict) -> Dict:
    """The pretrained model on the test questions, before any test-time RL: N sampled roll-outs per
    question (temperature 1, seed 0), per-roll-out accuracy, majority-vote accuracy, and how many
    questions are contested (top answer 25–90% of the roll-outs) or have a wrong top answer."""
    import collections

    import torch

    import lm
    import task

    cfg = man["ttrl"]
    model, tok = lm.load(os.path.join(out, man["checkpoint"]))
    test, _ = task.split(cfg["data_seed"], cfg["n_test"], cfg["n_val"])
    n = cfg["num_generations"]
    torch.manual_seed(0)
    texts = lm.generate(model, tok, [task.prompt(q) for q in test for _ in range(n)], sample=True, max_new=cfg["max_new"])
    right = contested = wrong_top = 0
    for i, q in enumerate(test):
        answers = [task.boxed(t) for t in texts[i * n:(i + 1) * n]]
        right += sum(a == str(task.answer(q)) for a in answers)
        top, count = collections.Counter(answers).most_common(1)[0]
        contested += 0.25 <= count / n < 0.9
        wrong_top += top != str(task.answer(q))
    greedy = lm.accuracy(model, tok, test, sample=False, max_new=cfg["max_new"])
    return {"rollout_acc": right / (n * len(test)), "vote_acc": 1 - wrong_top / len(test), "contested": contested / len(test),
            "greedy": greedy, "questions": len(test), "n": n}


def write(out: str, path: str, log=print) -> None:
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    cfg = man["ttrl"]
    base = base_model(out, man)
    steps_per_epoch = max(1, cfg["n_test"] // cfg["questions_per_step"])
    res = [analyse(r, out, steps_per_epoch) for r in man["runs"]]
    N_TEST[0] = cfg["n_test"]
    ops = man["operators"]
    seeds = man["seeds"]
    by_op = {o: [r for r in res if r["run"]["operator"] == o] for o in ops}
    pre = man["pretrain"]
    L: List[str] = []
    w = L.append
    w("# Experiments: test-time RL on a tiny model trained here")
    w("")
    w("Measured by `bash experiments/tiny-ttrl/run.sh` (this page is written by its table-maker, "
      "experiments/tiny-ttrl/tables.py, from the run logs through `consensus-lens report --json` and "
      "`health --json`; do not edit the numbers by hand). Everything runs on the CPU, torch with %s thread per run; "
      "the runs are deterministic for a given machine and thread count." % man["threads"])
    w("")
    w("## Setup")
    w("")
    c = pre["config"]
    w("- **Model**: a Llama-style decoder of %d parameters (%d layers, width %d), a character-level "
      "tokenizer built locally, pretrained from scratch for %d steps (batch %d) on random two-step "
      "problems `a±b±c=` (a two-digit, b and c one-digit), written as `a±b=m,m±c=r \\boxed{r}`; pretraining stops once "
      "the sampled accuracy on %d validation questions reaches %.0f%% (checked every %d steps)."
      % (pre["params"], c["size"]["layers"], c["size"]["hidden"], pre["steps"], c["batch"], c["n_val"],
         100 * c["target_acc"], c["check_every"]))
    w("- **Test-time RL**: TRL %s `GRPOTrainer`, the model sampling its own roll-outs (temperature 1, no "
      "top-k/top-p), N = %d roll-outs per question, %d questions per step, %d steps (%d epochs over the "
      "%d held-out test questions, never seen in pretraining, no labels), learning rate %g, β = 0; reward "
      "`consensus_lens.trl.consensus_reward` with the operator named, confidence = the roll-out's mean "
      "token log-prob under the policy that sampled it; the ground truth is logged as a diagnostic only."
      % (man.get("trl_version", "1.16.0"), cfg["num_generations"], cfg["questions_per_step"], cfg["steps"],
         cfg["steps"] // steps_per_epoch, cfg["n_test"], cfg["rl_lr"]))
    w("- **Seeds**: %s per operator (the same seeds for every operator: the first step's roll-outs are "
      "identical across operators); cells are the mean over seeds with the range (min–max) in brackets."
      % ", ".join(str(s) for s in seeds))
    secs = []
    for r in man["runs"]:
        with open(os.path.join(out, "runs", r["name"], "result.json")) as f:
            secs.append(json.load(f)["seconds"])
    w("- **Wall time** of the committed measurement: pretraining %.0f s, each test-time RL run %.0f–%.0f s "
      "(the runs are independent processes, several at once; results do not depend on how many run together). "
      "Measured on a shared 2-core machine under load from other jobs." % (pre["seconds"], min(secs), max(secs)))
    w("")
    w("## The pretrained model on the test questions")
    w("")
    w("Before any test-time RL, %d sampled roll-outs per question (temperature 1, torch seed 0) on the %d test "
      "questions: per-roll-out accuracy **%.1f%%**, majority-vote accuracy %.1f%%, contested questions (top "
      "answer 25–90%% of the roll-outs) %.1f%%, greedy accuracy %.1f%%. The last pretraining check (sampled, "
      "validation questions) read %.1f%% at step %d."
      % (base["n"], base["questions"], 100 * base["rollout_acc"], 100 * base["vote_acc"], 100 * base["contested"],
         100 * base["greedy"], 100 * pre["history"][-1]["val_sampled_acc"], pre["history"][-1]["step"]))
    w("")
    w("## Per operator over training")
    w("")
    w("Per epoch (every test question once): **pseudo-label accuracy** (the trained operator's label equals "
      "the truth), **roll-out accuracy** (share of sampled roll-outs with the right boxed answer: the "
      "policy's per-sample accuracy), **contested** (share of questions whose top answer holds 25–90% of "
      "the roll-outs), **mean gate** (CoRE's question gate, computed on every run's groups), **learning "
      "signal** (share of questions whose rewards are not all equal, so GRPO learns from them). All in %.")
    w("")
    for o in ops:
        rs = by_op[o]
        w("### %s" % NAMES.get(o, o))
        w("")
        w("| epoch | pseudo-label acc. | roll-out acc. | contested | mean gate (CoRE) | learning signal |")
        w("|---|---|---|---|---|---|")
        for e in sorted({e for r in rs for e in r["epochs"]}):
            get = lambda k: [r["epochs"].get(e, {}).get(k) for r in rs]  # noqa: E731
            w("| %d | %s | %s | %s | %s | %s |" % (e, fmt(get("label_acc")), fmt(get("rollout_acc")), fmt(get("contested")),
                                                  fmt(get("gate"), pct=False, digits=2), fmt(get("signal"))))
        w("")
    w("## Test accuracy of the trained policy")
    w("")
    w("Greedy decoding of every test question by the policy at the step named (step 0: the pretrained "
      "model), % correct.")
    w("")
    steps = sorted({s for r in res for s in r["evals"]})
    w("| operator | " + " | ".join("step %d" % s for s in steps) + " | steps to plateau |")
    w("|---|" + "---|" * (len(steps) + 1))
    for o in ops:
        rs = by_op[o]
        w("| %s | %s | %s |" % (NAMES.get(o, o), " | ".join(fmt([r["evals"].get(s) for r in rs]) for s in steps),
                                fmt([plateau_step(r["evals"]) for r in rs], pct=False)))
    w("")
    w("Steps to plateau: the first evaluated step within 2 points of the run's best greedy accuracy.")
    w("")
    w("## The confidence premise on real output")
    w("")
    w("Within-question AUROC of the confidence (mean token log-prob): does it rank the roll-outs in the "
      "vote's class above the others, and the correct roll-outs above the wrong ones (`health`'s premise, "
      "over the whole run; and at step 1, the pretrained model's roll-outs).")
    w("")
    w("| run | AUROC, vote's class | AUROC, correct | question-steps | at step 1: vote's class | at step 1: correct |")
    w("|---|---|---|---|---|---|")
    for o in ops:
        rs = by_op[o]
        w("| %s | %s | %s | %s | %s | %s |" % (
            NAMES.get(o, o), fmt([r["premise"].get("label", {}).get("auroc") for r in rs], pct=False, digits=3),
            fmt([r["premise"].get("truth", {}).get("auroc") for r in rs], pct=False, digits=3),
            fmt([r["premise"].get("truth", {}).get("groups") for r in rs], pct=False),
            fmt([r["first_step_premise"].get("auroc_label") for r in rs], pct=False, digits=3),
            fmt([r["first_step_premise"].get("auroc_truth") for r in rs], pct=False, digits=3)))
    w("")
    w("## Against the CoRE paper's claims")
    w("")
    w("Pseudo-label accuracy on the contested questions of each run (every operator scored on the run's "
      "own roll-outs), and the questions where an operator's label departs from the vote: how often the "
      "departure was right (the recovery the paper claims) and how often the vote was right.")
    w("")
    w("| run | contested question-steps | majority | CISC | CoRE | CISC ≠ vote: CISC right / vote right | CoRE ≠ vote: CoRE right / vote right |")
    w("|---|---|---|---|---|---|---|")
    for o in ops:
        rs = by_op[o]
        w("| %s | %s | %s | %s | %s | %s | %s |" % (
            NAMES.get(o, o), fmt([r["contested_n"] for r in rs], pct=False),
            fmt([r["contested_acc"]["majority"] for r in rs]), fmt([r["contested_acc"]["cisc"] for r in rs]),
            fmt([r["contested_acc"]["core"] for r in rs]),
            "%d of %d / %d" % (sum(r["parts"]["cisc"]["other_right"] for r in rs), sum(r["parts"]["cisc"]["n"] for r in rs),
                               sum(r["parts"]["cisc"]["majority_right"] for r in rs)),
            "%d of %d / %d" % (sum(r["parts"]["core"]["other_right"] for r in rs), sum(r["parts"]["core"]["n"] for r in rs),
                               sum(r["parts"]["core"]["majority_right"] for r in rs))))
    w("")
    w(verdicts(by_op, steps))
    w("")
    w("## How the settings were chosen")
    w("")
    w("Pretraining stops early (the first check at or above the target) so that the base model's samples "
      "disagree; the learning rate of test-time RL was set once, before this measurement, from one "
      "observation: from a checkpoint stopped at 40% sampled validation accuracy, with learning rate 3e-4, "
      "the greedy test accuracy of 5 of 6 runs fell from 42% to 12–25% within 6 steps (majority's "
      "pseudo-labels there were mostly wrong: off-by-one answers shared by many samples). That attempt was "
      "stopped and is not part of the tables; nothing else was tuned on the test questions.")
    w("")
    w("## Reproducing")
    w("")
    w("`bash experiments/tiny-ttrl/run.sh` from a clean checkout (framework venv as for `scripts/test-frameworks.sh`; "
      "`--jobs N` runs N runs at once and does not change the numbers; `--smoke` is the framework stage's test). "
      "Every seed is fixed (data, initialisation, sampling) and torch runs one thread per process with "
      "deterministic algorithms, so on the same machine the numbers repeat exactly: before this page was "
      "committed, a second run of the six runs from the cached checkpoint wrote byte-identical logs and the same "
      "greedy accuracies, and pretraining twice from scratch followed the same loss and accuracy checks step "
      "for step. On another CPU or library build, floating-point differences can change sampled tokens; the "
      "seeds' range in each cell is the spread to compare against.")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")
    with open(os.path.join(out, "tables.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)


def verdicts(by_op: Dict[str, List[Dict]], steps: List[int]) -> str:
    """The comparison with the paper, in words computed from the same numbers."""
    if "core" not in by_op or "majority" not in by_op or not steps:
        return ""
    last = steps[-1]
    lines = []
    core = [r["evals"].get(last) for r in by_op["core"]]
    maj = [r["evals"].get(last) for r in by_op["majority"]]
    d = mean([a - b for a, b in zip(core, maj) if a is not None and b is not None])
    if d is not None:
        lines.append("- *CoRE ≥ majority*: at step %d CoRE's greedy test accuracy is %+.1f points against majority's "
                     "(mean over paired seeds; %s)." % (last, 100 * d, "agrees" if d > 0 else "ties: agrees with ≥" if d == 0 else "disagrees"))
    ca = mean([r["contested_acc"]["core"] for r in by_op["core"]])
    ma = mean([r["contested_acc"]["majority"] for r in by_op["core"]])
    if ca is not None and ma is not None:
        lines.append("- *CoRE ≥ majority where agreement is contestable*: on the contested questions of the CoRE runs, "
                     "CoRE's pseudo-labels are right %.1f%% of the time, the vote's %.1f%% (%+.1f points; %s)."
                     % (100 * ca, 100 * ma, 100 * (ca - ma), "agrees" if ca > ma else "ties: agrees with ≥" if ca == ma else "disagrees"))
    pc = mean([plateau_step(r["evals"]) for r in by_op["core"]])
    pm = mean([plateau_step(r["evals"]) for r in by_op["majority"]])
    if pc is not None and pm is not None:
        lines.append("- *Faster to the plateau*: CoRE reaches its plateau at step %.1f on average, majority at %.1f (%s)."
                     % (pc, pm, "agrees" if pc < pm else ("ties" if pc == pm else "disagrees")))
    n = sum(r["parts"]["core"]["n"] for r in by_op["core"])
    right = sum(r["parts"]["core"]["other_right"] for r in by_op["core"])
    vote = sum(r["parts"]["core"]["majority_right"] for r in by_op["core"])
    verdict = "no departures to judge" if n == 0 else ("agrees" if right > vote else "disagrees" if right < vote else "inconclusive: neither was right more often")
    lines.append("- *Recovery past the vote*: in the CoRE runs CoRE's label departs from the vote on %d question-steps; "
                 "it was right on %d and the vote on %d (%s)." % (n, right, vote, verdict))
    lines.append("- *Resolution*: the test set has %d questions, so one question is %.1f points of greedy accuracy, and "
                 "there are %d seeds per operator: differences of one question per seed are within what a seed changes."
                 % (N_TEST[0], 100.0 / N_TEST[0], len(by_op["core"])))
    return "\n".join(lines)
