#!/usr/bin/env python3
"""CoRE as a researcher would write it with scikit-learn: the baseline for `npm run bench`.

Needs scikit-learn and scipy (Debian: python3-sklearn); nothing in the test suite depends on it.

Per group (docs/contract.md#operators, the same quantities as bench/baseline.py, which spells everything out with
dense matrices for the parity tests):
  - H = TfidfVectorizer(analyzer='char', ngram_range=(4, 4)).fit_transform(texts): sklearn's own
    char 4-grams (lower-cased, whitespace runs collapsed), smooth idf, L2 rows, as scipy CSR;
  - per answer class c, the within-class cosines H_c H_c^T (a scipy sparse product, densified):
    only same-class pairs enter the payoff, so nothing else is multiplied;
  - A' = block-diagonal of kappa + (1 - kappa)(1 + cos)/2 on each class block (zero diagonal),
    scaled by sqrt(w_i w_j), w = exp((conf - max conf)/tau);
  - the replicator x <- x * (Wx) / (x^T W x) with W = A' - alpha I + C ee^T applied as
    A'x - alpha x + C sum(x) (one vectorised mat-vec per step, no N x N shift matrix), stopped
    at ||x' - x|| < eps or T_max steps; then the class masses, rewards A x / max, gate x^T A x.

Timing (--time) covers the compute only, not JSON parsing of the input nor output, and is taken
after one warm-up group (imports and first calls of sklearn are not charged to it).

Usage: python3 bench/sklearn-baseline.py GROUPS.jsonl [--time] [--kappa K] [--tau T] [--alpha A]
Without --time, writes one JSON line per group: {"question_id", "label", "rewards", "gate", "mass",
"iterations"} (checked against bench/baseline.py by the parity tests when sklearn is installed).
"""
import argparse, json, math, re, sys, time
import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer


def boxed(text):
    """The content of the last \\boxed{...} (braces balanced), or None: the answer a researcher's
    reward function extracts when the log has no pre-extracted "answer" field."""
    i = text.rfind("\\boxed{")
    if i < 0:
        return None
    depth, j = 1, i + 7
    while j < len(text):
        ch = text[j]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[i + 7:j]
        j += 1
    return None


WS_RUN = re.compile(r"\s\s+")  # what sklearn's char analyzer collapses to one space


def tfidf_sklearn(texts):
    return TfidfVectorizer(analyzer="char", ngram_range=(4, 4), dtype=np.float64).fit_transform(texts)


def tfidf_numpy(texts):
    """The same matrix as tfidf_sklearn, vectorised: each text's 4-grams become integer keys
    (four code points of 16 bits in a uint64; a 16-byte record of four
    code points if a text leaves the BMP), then np.unique finds the vocabulary and the (row, term) counts in two sorts."""
    docs = [WS_RUN.sub(" ", t.lower()) for t in texts]
    units = [np.frombuffer(d.encode("utf-32-le"), dtype=np.uint32) for d in docs]
    wide = any(len(u) and u.max() > 0xFFFF for u in units)
    keys, rows = [], []
    for r, u in enumerate(units):
        if len(u) < 4:
            continue
        if wide:
            k = np.lib.stride_tricks.sliding_window_view(u, 4).copy().view(np.dtype((np.void, 16))).ravel()
        else:
            u = u.astype(np.uint64)
            k = (u[:-3] << 48) | (u[1:-2] << 32) | (u[2:-1] << 16) | u[3:]
        keys.append(k)
        rows.append(np.full(len(k), r, dtype=np.int64))
    n = len(texts)
    if not keys:
        return sparse.csr_matrix((n, 1))
    vocab, term = np.unique(np.concatenate(keys), return_inverse=True)
    v = len(vocab)
    cell, counts = np.unique(np.concatenate(rows) * v + term.ravel(), return_counts=True)
    r, c = cell // v, cell % v
    df = np.bincount(c, minlength=v)
    idf = np.log((1 + n) / (1 + df)) + 1
    X = sparse.csr_matrix((counts * idf[c], (r, c)), shape=(n, v))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    return sparse.diags(1 / norms) @ X


def core(group, kappa, tau, alpha, shift, eps=1e-6, tmax=200, tfidf=tfidf_sklearn):
    rs = group["rollouts"]
    n = len(rs)
    texts = [r.get("response", "") for r in rs]
    first, cls = {}, np.empty(n, dtype=np.int64)
    for i, r in enumerate(rs):
        a = r["answer"] if "answer" in r else boxed(texts[i])
        cls[i] = -1 if a is None else first.setdefault(a, len(first))
    labels = list(first)
    confs = [r.get("mean_logprob") for r in rs]
    H = tfidf(texts)
    A = np.zeros((n, n))
    for c in range(len(labels)):
        idx = np.flatnonzero(cls == c)
        if len(idx) < 2:
            continue
        Hc = H[idx]
        K = (Hc @ Hc.T).toarray()
        A[np.ix_(idx, idx)] = kappa + (1 - kappa) * (1 + K) / 2
    np.fill_diagonal(A, 0.0)
    if all(c is not None for c in confs):
        conf = np.asarray(confs, dtype=float)
        s = np.exp((conf - conf.max()) / (2 * tau))  # sqrt(w_i w_j) = s_i s_j
        Ap = A * s[:, None] * s[None, :]
    else:
        Ap = A
    x = np.full(n, 1.0 / n)
    t = 0
    while t < tmax:
        Wx = Ap @ x - alpha * x + shift * x.sum()
        den = x @ Wx
        t += 1
        if not den > 0:
            break
        nx = x * Wx / den
        done = np.linalg.norm(nx - x) < eps
        x = nx
        if done:
            break
    mass = np.bincount(cls[cls >= 0], weights=x[cls >= 0], minlength=len(labels))
    best, bs = -1, -math.inf
    for k, m in enumerate(mass):
        if best < 0 or m > bs + 1e-12 * max(1.0, abs(bs)):
            best, bs = k, m
    Ax = A @ x
    R = Ax / Ax.max() if Ax.max() > 0 else np.zeros(n)
    return {"question_id": group.get("question_id"), "label": labels[best] if best >= 0 else None,
            "rewards": R.tolist(), "gate": float(x @ Ax), "mass": x.tolist(), "iterations": t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--kappa", type=float, default=0.1)
    ap.add_argument("--tau", type=float, default=0.25)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--shift", type=float, default=None)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--impl", choices=["sklearn", "numpy"], default="sklearn")
    a = ap.parse_args()
    shift = a.alpha if a.shift is None else a.shift
    with open(a.path, encoding="utf-8") as f:
        groups = [json.loads(line) for line in f if line.strip()]
    tfidf = tfidf_sklearn if a.impl == "sklearn" else tfidf_numpy
    run = lambda g: core(g, a.kappa, a.tau, a.alpha, shift, tfidf=tfidf)
    if a.time:
        run(groups[0])  # warm-up: first calls into sklearn/scipy
        t0, c0 = time.perf_counter(), time.process_time()
        for g in groups:
            run(g)
        print(json.dumps({"compute_seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                          "groups": len(groups)}))
        return
    for g in groups:
        print(json.dumps(run(g)))


if __name__ == "__main__":
    main()
