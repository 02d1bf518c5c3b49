#!/usr/bin/env python3
"""An independent numpy implementation of docs/contract.md#operators, the reference for parity tests and benchmarks.

It shares no code with the TypeScript engine and follows docs/contract.md#operators literally, with
dense matrices: TF-IDF over character 4-grams (scikit-learn semantics, written out here since
sklearn is not needed), the full N x N payoff W' = A' - alpha*I + C*ee^T, and replicator dynamics.
Answers are taken from each roll-out's "answer" field and compared as exact strings (the parity
fixtures set them), so this checks the operators, not answer equivalence.

Usage:  python3 bench/baseline.py GROUPS.jsonl [--operators core,ec,...] [--kappa K] [--tau T]
            [--alpha A] [--time]
Writes one JSON line per group: {"step","question_id","n","results":{op:{label,rewards,gate,
advantages,mass,support,iterations}}}. With --time, writes instead one line with the seconds
spent computing (excluding JSON parsing and output): {"compute_seconds": ..., "groups": ...}.
"""
import argparse, json, math, re, sys, time
import numpy as np

PY_WS_RUN = re.compile(r"\s\s+")  # Python's \s, exactly what scikit-learn uses


def tfidf(texts):
    docs = []
    for t in texts:
        s = PY_WS_RUN.sub(" ", t.lower())
        counts = {}
        for i in range(len(s) - 3):
            g = s[i:i + 4]
            counts[g] = counts.get(g, 0) + 1
        docs.append(counts)
    vocab = {}
    for d in docs:
        for g in d:
            if g not in vocab:
                vocab[g] = len(vocab)
    n = len(texts)
    X = np.zeros((n, max(len(vocab), 1)))
    for r, d in enumerate(docs):
        for g, c in d.items():
            X[r, vocab[g]] = c
    df = (X > 0).sum(axis=0)
    idf = np.log((1 + n) / (1 + df)) + 1
    X = X * idf
    norms = np.sqrt((X * X).sum(axis=1))
    norms[norms == 0] = 1
    return X / norms[:, None]


def classes_of(answers):
    cls, first = [], {}
    for a in answers:
        if a is None:
            cls.append(-1)
            continue
        if a not in first:
            first[a] = len(first)
        cls.append(first[a])
    return np.array(cls), list(first.keys())


def argmax_first(scores):
    best, bs = -1, -math.inf
    for k, s in enumerate(scores):
        if best < 0 or s > bs + 1e-12 * max(1.0, abs(bs)):
            best, bs = k, s
    return best


def advantages(R, eps=1e-6):
    n = len(R)
    if n < 2:
        return np.zeros(n)
    return (R - R.mean()) / (R.std(ddof=1) + eps)


def vote(cls, labels, weights):
    scores = np.zeros(len(labels))
    for i, c in enumerate(cls):
        if c >= 0:
            scores[c] += weights[i]
    k = argmax_first(scores) if len(labels) else -1
    R = np.array([1.0 if (k >= 0 and c == k) else 0.0 for c in cls])
    return {"label": labels[k] if k >= 0 else None, "rewards": R, "gate": 1.0}


def equilibrium(cls, labels, texts, conf, kappa, tau, alpha, shift, eps, tmax):
    n = len(cls)
    H = tfidf(texts)
    K_rsn = (1 + H @ H.T) / 2
    same = (cls[:, None] == cls[None, :]) & (cls[:, None] >= 0)
    A = np.where(same, kappa + (1 - kappa) * K_rsn, 0.0)
    np.fill_diagonal(A, 0.0)
    if conf is not None:
        w = np.exp((conf - conf.max()) / tau)
        Ap = A * np.sqrt(np.outer(w, w))
    else:
        Ap = A
    W = Ap - alpha * np.eye(n) + shift * np.ones((n, n))
    x = np.full(n, 1.0 / n)
    t = 0
    while t < tmax:
        Wx = W @ x
        den = x @ Wx
        t += 1
        if not den > 0:
            break
        nx = x * Wx / den
        done = np.linalg.norm(nx - x) < eps
        x = nx
        if done:
            break
    mass = np.zeros(len(labels))
    for i, c in enumerate(cls):
        if c >= 0:
            mass[c] += x[i]
    k = argmax_first(mass) if len(labels) else -1
    Ax = A @ x
    R = Ax / Ax.max() if Ax.max() > 0 else np.zeros(n)
    return {"label": labels[k] if k >= 0 else None, "rewards": R, "gate": float(x @ A @ x),
            "mass": x, "support": [i for i in range(n) if x[i] > 1 / (10 * n)], "iterations": t}


def score(group, ops, p):
    rs = group["rollouts"]
    answers = [r.get("answer") for r in rs]
    texts = [r.get("response", "") for r in rs]
    cls, labels = classes_of(answers)
    confs = [r.get("mean_logprob") for r in rs]
    conf = np.array(confs, dtype=float) if all(c is not None for c in confs) else None
    out = {}
    for op in ops:
        if op == "majority":
            res = vote(cls, labels, np.ones(len(rs)))
        elif op == "cisc":
            if conf is None:
                continue
            res = vote(cls, labels, np.exp((conf - conf.max()) / p["cisc_temp"]))
        elif op == "t3rl":
            v = [(r.get("verification") or {}).get("valid") for r in rs]
            if any(x is None for x in v):
                continue
            res = vote(cls, labels, np.array([1 + (p["omega"] - 1) * (1 if x else 0) for x in v], dtype=float))
        elif op in ("ec", "core"):
            res = equilibrium(cls, labels, texts, conf if op == "core" else None, p["kappa"], p["tau"],
                              p["alpha"], p["shift"], p["eps"], p["tmax"])
        else:
            continue
        res["advantages"] = advantages(np.asarray(res["rewards"], dtype=float))
        out[op] = res
    return out


def jsonable(res):
    o = {}
    for k, v in res.items():
        o[k] = v.tolist() if isinstance(v, np.ndarray) else v
    return o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--operators", default="majority,cisc,ec,core,t3rl")
    ap.add_argument("--kappa", type=float, default=0.1)
    ap.add_argument("--tau", type=float, default=0.25)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--shift", type=float, default=None)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--tmax", type=int, default=200)
    ap.add_argument("--omega", type=float, default=5.0)
    ap.add_argument("--cisc-temp", type=float, default=None)
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    p = {"kappa": a.kappa, "tau": a.tau, "alpha": a.alpha, "shift": a.alpha if a.shift is None else a.shift,
         "eps": a.eps, "tmax": a.tmax, "omega": a.omega, "cisc_temp": a.tau if a.cisc_temp is None else a.cisc_temp}
    ops = a.operators.split(",")
    with open(a.path, encoding="utf-8") as f:
        groups = [json.loads(line) for line in f if line.strip()]
    if a.time:
        t0 = time.perf_counter()
        for g in groups:
            score(g, ops, p)
        print(json.dumps({"compute_seconds": time.perf_counter() - t0, "groups": len(groups)}))
        return
    for g in groups:
        res = score(g, ops, p)
        print(json.dumps({"step": g["step"], "question_id": g["question_id"], "n": len(g["rollouts"]),
                          "results": {k: jsonable(v) for k, v in res.items()}}))


if __name__ == "__main__":
    main()
