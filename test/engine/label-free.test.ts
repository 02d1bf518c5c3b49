// Parity of the label-free operators (docs/contract.md#label-free-operators) with references
// written here from the authors' formulas, independently of the engine's code: EMPO's math reward
// (QingyangZhang/EMPO), INTUITOR's self-certainty and RENT's token entropy from raw logits,
// sequence likelihood from token log-probs, EVOL-RL's novelty vote. Rewards and GRPO advantages
// agree within 1e-9 on random groups (fast-check, fixed seed) and on the edge cases; NaN and ∞
// are refused; each paper's stated property holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { OPERATORS, prepareGroup, runOperator, scoreGroup, scoreToJson, resolveParams, type Group, type OperatorId, type Rollout } from '../../src/engine';
import { cosineMatrix } from '../../src/engine/features/tfidf';
import { semanticEntropy } from '../../src/engine/operators/empo';
import { logCorrectlyRounded } from '../../src/engine/operators/numpy-float';

const TOL = 1e-9;
const P = resolveParams();
const gate = JSON.parse(readFileSync('test/fixtures/label-free/empo-gate.json', 'utf8')) as {
  numpy: string;
  distinct_open: number[];
  cases: { counts: number[]; entropy: string; open: boolean }[];
};

// ---- references (from the papers' code, not the engine's helpers) ----

/** verl / GRPO: A_i = (R_i − mean R)/(std R + ε), unbiased std; 0 for a group of one. */
function refAdvantages(r: readonly number[], eps = 1e-6): number[] {
  const n = r.length;
  if (n < 2) return r.map(() => 0);
  const m = r.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / (n - 1));
  return r.map((x) => (x - m) / (sd + eps));
}

/** EMPO semantic_entropy_math_reward over answer keys ('' = no answer; equal keys = one cluster). */
function refEmpo(keys: readonly string[]): number[] {
  const n = keys.length;
  // math-verify's verify('', '') is False: every empty prediction is a cluster of its own.
  const ids: number[] = [];
  const seen = new Map<string, number>();
  let next = 0;
  for (const k of keys) {
    if (k === '') ids.push(next++);
    else {
      if (!seen.has(k)) seen.set(k, next++);
      ids.push(seen.get(k)!);
    }
  }
  const counts = new Array(next).fill(0);
  for (const id of ids) counts[id]++;
  // Far from the bound H is below log N whenever two roll-outs share a cluster; with N clusters
  // of one the last bit decides, as NumPy computed it (the fixture).
  const open = next < n || gate.distinct_open.includes(n);
  return keys.map((k, i) => (open && k !== '' ? counts[ids[i]] / n : 0));
}

/** INTUITOR: per token logsumexp(z) − mean(z); the roll-out's reward is the mean over its tokens. */
function refSelfCertainty(logits: readonly (readonly number[])[]): number {
  if (logits.length === 0) return 0;
  let total = 0;
  for (const z of logits) {
    const mx = Math.max(...z);
    const lse = mx + Math.log(z.reduce((s, x) => s + Math.exp(x - mx), 0));
    total += lse - z.reduce((s, x) => s + x, 0) / z.length;
  }
  return total / logits.length;
}

/** The entropy −Σ π log π of one token's distribution softmax(z). */
function refTokenEntropy(z: readonly number[]): number {
  const mx = Math.max(...z);
  const e = z.map((x) => Math.exp(x - mx));
  const s = e.reduce((a, b) => a + b, 0);
  return -e.reduce((a, x) => a + (x / s) * Math.log(x / s), 0);
}

/** RENT: R = −mean entropy over the response tokens (the last k of them when k > 0). */
function refRent(logits: readonly (readonly number[])[], k = 0): number {
  const h = logits.map(refTokenEntropy);
  const w = k > 0 && k < h.length ? h.slice(h.length - k) : h;
  return -w.reduce((a, b) => a + b, 0) / w.length;
}

/** EVOL-RL _compute_novelty_rewards, with `sim` the similarity of the valid texts (TF-IDF here). */
function refNovelty(texts: readonly string[], base: readonly number[]): number[] {
  const n = texts.length;
  if (n <= 1) return [...base];
  const after = texts.map((t) => {
    const at = t.indexOf('</think>');
    return at === -1 ? t : t.slice(at + 8).trim();
  });
  const ok = after.map((t) => [...t.matchAll(/\\boxed\{([^}]*)\}/g)].some((m) => /\d/.test(m[1])));
  const valid = after.flatMap((_, i) => (ok[i] ? [i] : []));
  const out = new Array(n).fill(-1);
  if (valid.length <= 1) return out;
  const sim = cosineMatrix(valid.map((i) => after[i])).map((row) => row.map((x) => Math.min(1, Math.max(0, x))));
  const b = valid.map((i) => base[i]);
  const m = valid.length;
  const correct = b.flatMap((r, i) => (r > 0 ? [i] : []));
  const incorrect = b.flatMap((r, i) => (r <= 0 ? [i] : []));
  const nov = new Array(m).fill(0);
  for (let i = 0; i < m; i++) {
    const group = (b[i] > 0 ? correct : incorrect).filter((j) => j !== i);
    const others = [...Array(m).keys()].filter((j) => j !== i);
    const avg = (group.length ? group : others).reduce((s, j) => s + sim[i][j], 0) / (group.length ? group : others).length;
    const mx = Math.max(...others.map((j) => sim[i][j]));
    nov[i] = 1 - (0.5 * avg + 0.5 * mx);
  }
  const rescale = (idx: number[], lo: number, single: number) => {
    if (idx.length === 1) return void (out[valid[idx[0]]] = single);
    if (idx.length === 0) return;
    const v0 = idx.map((i) => nov[i]);
    const [a, z] = [Math.min(...v0), Math.max(...v0)];
    const v = z > a ? v0.map((x) => (x - a) / (z - a)) : v0;
    const [a2, z2] = [Math.min(...v), Math.max(...v)];
    idx.forEach((i, k) => {
      out[valid[i]] = z2 > a2 ? lo + 0.5 * ((v[k] - a2) / (z2 - a2)) : lo + 0.25;
    });
  };
  rescale(correct, 0.5, 1);
  rescale(incorrect, -1, -0.5);
  return out;
}

// ---- helpers ----

function close(actual: ArrayLike<number>, expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i] - expected[i]) <= TOL, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
}

function run(g: Group, op: OperatorId, params = P) {
  const r = runOperator(prepareGroup(g), op, params);
  assert.ok(r, `${op} ran`);
  return r!;
}

const group = (rollouts: Rollout[]): Group => ({ step: 1, questionId: 'q', rollouts });
const boxed = (a: string | null): string => (a === null ? 'I could not finish.' : `Working. \\boxed{${a}}`);

// Random roll-outs: an answer from a small pool (or none), logits over a small vocabulary.
const answerArb = fc.option(fc.constantFrom('1', '2', '3', '12', 'x+1'), { nil: null, freq: 4 });
const logitsArb = fc.array(fc.array(fc.double({ min: -20, max: 20, noNaN: true }), { minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 6 });
const rolloutArb = fc.record({ answer: answerArb, logits: logitsArb, words: fc.array(fc.constantFrom('so', 'then', 'add', 'sum', 'two', 'carry', 'x'), { maxLength: 8 }), think: fc.boolean() });
const groupArb = fc.array(rolloutArb, { minLength: 1, maxLength: 12 });

const text = (r: { answer: string | null; words: string[]; think: boolean }): string => `${r.think ? 'hmm </think> ' : ''}${r.words.join(' ')} ${boxed(r.answer)}`;
const toGroup = (rs: { answer: string | null; logits: number[][]; words: string[]; think: boolean }[]): Group =>
  group(
    rs.map((r) => ({
      response: text(r),
      answer: r.answer,
      selfCertainty: refSelfCertainty(r.logits),
      tokenEntropies: r.logits.map(refTokenEntropy),
      entropy: r.logits.map(refTokenEntropy).reduce((a, b) => a + b, 0) / r.logits.length,
      meanLogprob: r.logits.map((z) => z[0] - Math.log(z.reduce((s, x) => s + Math.exp(x), 0))).reduce((a, b) => a + b, 0) / r.logits.length,
    })),
  );

// ---- parity on random groups ----

test('EMPO: rewards and advantages equal the reference on random groups', () => {
  fc.assert(
    fc.property(groupArb, (rs) => {
      const r = run(toGroup(rs), 'empo');
      const expected = refEmpo(rs.map((x) => x.answer ?? ''));
      close(r.rewards, expected, 'rewards');
      close(r.advantages, refAdvantages(expected), 'advantages');
    }),
    { seed: 47, numRuns: 300 },
  );
});

test("EMPO: the semantic entropy is NumPy's to the last bit, and so is the gate", () => {
  for (const c of gate.cases) {
    const n = c.counts.reduce((a, b) => a + b, 0);
    const h = semanticEntropy(c.counts, n);
    assert.equal(h, fromFloatHex(c.entropy), `counts ${c.counts.length}/${n}`);
  }
  // The gate for N distinct answers, N = 1..4096: the engine's entropy against its log N.
  for (let n = 1; n <= 4096; n++) assert.equal(semanticEntropy(new Array(n).fill(1), n) < logCorrectlyRounded(n), gate.distinct_open.includes(n), `N = ${n} distinct answers`);
  // And through the operator, on the smallest N where the rounding opens and shuts it.
  for (let n = 1; n <= 30; n++) {
    const r = run(group(Array.from({ length: n }, (_, i) => ({ response: '', answer: String(i + 1) }))), 'empo');
    assert.equal(r.rewards[0] > 0, gate.distinct_open.includes(n), `empo on N = ${n} distinct answers`);
  }
});

test('self-certainty, token entropy (whole response and a window) and likelihood equal the references from logits', () => {
  fc.assert(
    fc.property(groupArb, fc.integer({ min: 0, max: 4 }), (rs, k) => {
      const g = toGroup(rs);
      const sc = rs.map((x) => refSelfCertainty(x.logits));
      const rSc = run(g, 'selfcertainty');
      close(rSc.rewards, sc, 'self-certainty');
      close(rSc.advantages, refAdvantages(sc), 'self-certainty advantages');
      const ent = rs.map((x) => refRent(x.logits, k));
      const rEnt = run(g, 'entropy', resolveParams({ entropyWindow: k }));
      close(rEnt.rewards, ent, `entropy (k = ${k})`);
      close(rEnt.advantages, refAdvantages(ent), 'entropy advantages');
      assert.equal(rEnt.approximation, undefined);
      const ll = rs.map((x) => x.logits.reduce((s, z) => s + z[0] - Math.log(z.reduce((t, v) => t + Math.exp(v), 0)), 0) / x.logits.length);
      close(run(g, 'likelihood').rewards, ll, 'likelihood');
    }),
    { seed: 47, numRuns: 200 },
  );
});

test('novelty: rewards equal the EVOL-RL reference on random groups', () => {
  fc.assert(
    fc.property(groupArb, (rs) => {
      const g = toGroup(rs);
      const vote = run(g, 'majority').rewards;
      const r = run(g, 'novelty');
      const expected = refNovelty(rs.map(text), Array.from(vote));
      close(r.rewards, expected, 'novelty rewards');
      close(r.advantages, refAdvantages(expected), 'novelty advantages');
      assert.match(r.approximation ?? '', /TF-IDF/);
    }),
    { seed: 47, numRuns: 300 },
  );
});

// ---- edge cases ----

test('one class: EMPO gives every roll-out 1, confidences still rank, novelty spreads the right ones over [0.5, 1]', () => {
  const g = group([0, 1, 2].map((i) => ({ response: `step ${'a '.repeat(i)} \\boxed{4}`, answer: '4', selfCertainty: 3 + i, entropy: 1 - i / 4, meanLogprob: -1 + i / 10 })));
  close(run(g, 'empo').rewards, [1, 1, 1], 'empo');
  close(run(g, 'empo').advantages, [0, 0, 0], 'empo advantages');
  close(run(g, 'selfcertainty').rewards, [3, 4, 5], 'self-certainty');
  for (const x of run(g, 'novelty').rewards) assert.ok(x >= 0.5 && x <= 1);
});

test('all empty answers: EMPO rewards nothing, the novelty vote gives −1, the confidence operators still run', () => {
  const g = group([0, 1, 2, 3].map((i) => ({ response: 'no idea', answer: null, selfCertainty: i, entropy: 2, meanLogprob: -2 })));
  close(run(g, 'empo').rewards, [0, 0, 0, 0], 'empo');
  close(run(g, 'novelty').rewards, [-1, -1, -1, -1], 'novelty');
  assert.equal(run(g, 'selfcertainty').label, null);
  close(run(g, 'selfcertainty').rewards, [0, 1, 2, 3], 'self-certainty');
});

test('all-equal confidences: equal rewards and zero advantages', () => {
  const g = group([0, 1, 2].map((i) => ({ response: boxed(String(i)), answer: String(i), selfCertainty: 7.5, entropy: 0.25, tokenEntropies: [0.25, 0.25], meanLogprob: -0.5 })));
  for (const op of ['selfcertainty', 'entropy', 'likelihood'] as const) close(run(g, op).advantages, [0, 0, 0], op);
});

test('NaN and ∞ are refused by name, never scored', () => {
  const base = (over: Partial<Rollout>, i: number): Rollout => ({ response: boxed('1'), answer: '1', selfCertainty: 1, entropy: 1, meanLogprob: -1, ...(i === 1 ? over : {}) });
  const cases: [Partial<Rollout>, OperatorId, RegExp][] = [
    [{ selfCertainty: Number.NaN }, 'selfcertainty', /roll-out 1's self_certainty is NaN: refused/],
    [{ selfCertainty: Number.POSITIVE_INFINITY }, 'selfcertainty', /\+∞: refused/],
    [{ entropy: Number.NaN }, 'entropy', /roll-out 1's entropy is NaN: refused/],
    [{ tokenEntropies: [0.1, Number.NEGATIVE_INFINITY] }, 'entropy', /token_entropies\[1\] is −∞: refused/],
    [{ meanLogprob: Number.NEGATIVE_INFINITY }, 'likelihood', /roll-out 1's mean log-prob is not finite: refused/],
    [{ meanLogprob: Number.NaN, entropy: undefined }, 'entropy', /mean log-prob is not finite: refused/],
  ];
  for (const [over, op, why] of cases) {
    const prepared = prepareGroup(group([0, 1, 2].map((i) => base(over, i))));
    const s = scoreGroup(prepared, { operators: [op] });
    assert.match(s.unavailable[op] ?? '', why, `${op} ${JSON.stringify(over)}`);
    assert.equal(s.results[op], undefined);
    assert.throws(() => OPERATORS.find((o) => o.id === op)!.run(prepared, P), why);
  }
});

test('missing values say what the log lacks; a sampled-token estimate is labelled an approximation', () => {
  const g = group([0, 1].map((i) => ({ response: boxed('1'), answer: '1', meanLogprob: -0.5 - i })));
  const s = scoreGroup(prepareGroup(g), { operators: ['selfcertainty', 'entropy', 'likelihood'] });
  assert.match(s.unavailable.selfcertainty ?? '', /has no self_certainty/);
  const ent = s.results.entropy!;
  close(ent.rewards, [-0.5, -1.5], 'entropy estimated from the mean log-prob');
  assert.match(ent.approximation ?? '', /estimated as −\(mean sampled-token log-prob\)/);
  assert.match(JSON.stringify(scoreToJson(s).results), /"approximation"/);
  const marked = group([0, 1].map((i) => ({ response: boxed('1'), answer: '1', selfCertainty: i, confidenceApproximate: true })));
  assert.match(run(marked, 'selfcertainty').approximation ?? '', /sampled tokens/);
  assert.match(scoreGroup(prepareGroup(group([{ response: boxed('1'), answer: '1', entropy: 1 }])), { operators: ['entropy'], params: { entropyWindow: 3 } }).unavailable.entropy ?? '', /token window of 3 needs them/);
});

// ---- the papers' stated properties ----

test("EMPO: a roll-out's reward is its cluster's share; N distinct answers earn nothing unless NumPy's rounding opens the gate", () => {
  close(run(group(['7', '7', '7', '2'].map((a) => ({ response: '', answer: a }))), 'empo').rewards, [0.75, 0.75, 0.75, 0.25], 'shares');
  close(run(group(['1', '2', '3', '4'].map((a) => ({ response: '', answer: a }))), 'empo').rewards, [0, 0, 0, 0], 'N = 4 distinct');
  // -(3 · (1/3)·log(1/3)) rounds to just below log 3 in float64: the authors' code rewards 1/3 each.
  close(run(group(['1', '2', '3'].map((a) => ({ response: '', answer: a }))), 'empo').rewards, [1 / 3, 1 / 3, 1 / 3], 'N = 3 distinct');
});

test('INTUITOR: self-certainty is at least log V, equal for a uniform distribution', () => {
  const V = 5;
  assert.ok(Math.abs(refSelfCertainty([[2, 2, 2, 2, 2]]) - Math.log(V)) < 1e-12);
  fc.assert(fc.property(logitsArb, (l) => refSelfCertainty(l) >= Math.log(V) - 1e-12));
  const g = group([
    { response: '', answer: '1', selfCertainty: refSelfCertainty([[9, 0, 0, 0, 0]]) },
    { response: '', answer: '2', selfCertainty: refSelfCertainty([[1, 1, 1, 1, 1]]) },
  ]);
  const r = run(g, 'selfcertainty');
  assert.ok(r.advantages[0] > 0 && r.advantages[1] < 0, 'the peaked roll-out is reinforced');
  assert.equal(r.label, '1');
});

test('RENT: the lower-entropy roll-out earns the larger reward; entropy is at most log V', () => {
  const peaked = [[9, 0, 0, 0, 0]];
  const flat = [[1, 1, 1, 1, 1]];
  assert.ok(Math.abs(refTokenEntropy(flat[0]) - Math.log(5)) < 1e-12);
  const g = group([
    { response: '', answer: '1', tokenEntropies: flat.map(refTokenEntropy) },
    { response: '', answer: '2', tokenEntropies: peaked.map(refTokenEntropy) },
  ]);
  const r = run(g, 'entropy');
  assert.ok(r.rewards[1] > r.rewards[0]);
  assert.ok(-r.rewards[0] <= Math.log(5) + 1e-12);
});

test('EVOL-RL: majority roll-outs in [0.5, 1], the others in [−1, −0.5], no valid \\boxed: −1', () => {
  fc.assert(
    fc.property(groupArb, (rs) => {
      const g = toGroup(rs);
      if (g.rollouts.length < 2) return;
      const vote = run(g, 'majority').rewards;
      const r = run(g, 'novelty').rewards;
      const valid = rs.filter((x) => x.answer !== null && /\d/.test(x.answer)).length;
      rs.forEach((x, i) => {
        const ok = x.answer !== null && /\d/.test(x.answer);
        if (!ok || valid < 2) assert.equal(r[i], -1);
        else if (vote[i] > 0) assert.ok(r[i] >= 0.5 && r[i] <= 1);
        else assert.ok(r[i] >= -1 && r[i] <= -0.5);
      });
    }),
    { seed: 48, numRuns: 200 },
  );
});

test('every label-free operator names its family', () => {
  const fam = Object.fromEntries(OPERATORS.map((o) => [o.id, o.family]));
  assert.deepEqual([fam.empo, fam.novelty, fam.selfcertainty, fam.entropy, fam.likelihood], ['consensus', 'consensus', 'confidence', 'confidence', 'confidence']);
});

/** Python's float.hex() notation ('0x1.8p+1', '-0x0.0p+0') as a number, sign of zero kept. */
function fromFloatHex(h: string): number {
  const m = /^(-)?0x([01])\.([0-9a-f]*)p([+-]\d+)$/.exec(h);
  if (!m) throw new Error(`not a float hex: ${h}`);
  const frac = m[3] ? BigInt(`0x${m[3]}`) : 0n;
  const bits = m[3].length * 4;
  const mant = (BigInt(m[2]) << BigInt(bits)) + frac;
  return (m[1] ? -1 : 1) * (Number(mant) * 2 ** (Number(m[4]) - bits));
}
