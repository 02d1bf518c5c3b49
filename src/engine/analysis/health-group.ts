// Run health, per group (docs/health.md §1, §3–§5): degenerate roll-out flags and the degenerate
// plurality (CoRE Appendix H), the per-group numbers the timeline averages, the within-question
// AUROC counts of the confidence premise, the evidence the reward-bug classifier reads, and the
// "how many roll-outs" subsampling what-if. Pure: no I/O, no vscode; every surface calls this.

import type { PreparedGroup } from '../prepare';
import type { GroupScore } from '../score';
import { resolveParams, type Params } from '../params';
import { OPERATORS, operatorSpec, statedOperatorOf, type RunContext } from '../operators/registry';
import type { OperatorId } from '../operators/result';
import type { AurocCounts, FlagName, GroupHealth } from './health-types';
import type { AnswerClass } from '../answers/answers';
import { truthClassOf, truthForms } from '../truth';
import { pairIndex } from '../features/tfidf';
import { ANSWER_RULES, REPETITION_THRESHOLD } from '../features/text-stats';
import { rng } from './health-random';
import { fnv1a } from '../../util/hash';
import { operatorOutcome, operatorOutcomes } from './learning-signal';

/** Per-roll-out flags (a bit mask). */
export const FLAG = {
  /** `\boxed{}`: the empty answer (docs/contract.md#answer-extraction), its own degenerate class. */
  empty: 1,
  /** No extractable answer. */
  noAnswer: 2,
  /** The last box never closes: the generation stopped inside it. */
  truncated: 4,
  /** At least half the text repeats earlier text verbatim (features/text-stats.ts). */
  repetitive: 8,
  /** cos(h_i, h_j) ≥ 0.99 with another roll-out of its answer class (4-gram TF-IDF vectors). */
  nearDuplicate: 16,
  /** The answer was found only by a fallback rule ("answer is", the last number): no box. */
  unformatted: 32,
} as const;
export const FLAG_NAMES = Object.keys(FLAG) as FlagName[];
export type { AurocCounts, FlagName, GroupHealth, RewardEvidence } from './health-types';
/** The CoRE paper's degenerate generations (Appendix H: "empty or repetition-collapsed"), and truncated ones. */
export const DEGENERATE_MASK = FLAG.empty | FLAG.truncated | FLAG.repetitive;
export const NEAR_DUPLICATE_COSINE = 0.99;

export const isDegenerate = (flags: number): boolean => (flags & DEGENERATE_MASK) !== 0;




export interface GroupHealthOptions {
  configuredOperator?: OperatorId;
  params?: Partial<Params>;
  ctx?: RunContext;
}

function aurocCounts(g: PreparedGroup, positive: (i: number) => boolean): AurocCounts | undefined {
  const pos: number[] = [];
  const neg: number[] = [];
  for (let i = 0; i < g.n; i++) {
    if (!g.hasConfidence[i]) continue;
    (positive(i) ? pos : neg).push(g.confidence[i]);
  }
  if (!pos.length || !neg.length) return undefined;
  let u = 0;
  for (const p of pos) for (const q of neg) u += p > q ? 1 : p === q ? 0.5 : 0;
  return { u, pairs: pos.length * neg.length };
}

/** Per-roll-out flags of a prepared group (text flags only when prepared with `health: true`). */
export function rolloutFlags(g: PreparedGroup): number[] {
  const flags = new Array<number>(g.n).fill(0);
  for (let i = 0; i < g.n; i++) {
    const a = g.answers[i];
    if (a === null) flags[i] |= FLAG.noAnswer;
    else if (a.trim() === '') flags[i] |= FLAG.empty;
  }
  const t = g.text;
  if (t) {
    for (let i = 0; i < g.n; i++) {
      if (t.truncated[i]) flags[i] |= FLAG.truncated;
      if (t.repetition[i] >= REPETITION_THRESHOLD) flags[i] |= FLAG.repetitive;
      const rule = ANSWER_RULES[t.rule[i]];
      if (rule === 'stated' || rule === 'last-number') flags[i] |= FLAG.unformatted;
    }
  }
  if (g.hasReasoning) {
    // Only within-class cosines exist (CoRE's A is block-diagonal over classes): a near-duplicate
    // with another answer would differ in its final answer, which is not a copy.
    g.classes.forEach((c, k) => {
      const cos = g.cosines[k];
      const m = c.members.length;
      if (!cos || m < 2) return;
      for (let a = 0; a < m; a++)
        for (let b = a + 1; b < m; b++)
          if (cos[pairIndex(m, a, b)] >= NEAR_DUPLICATE_COSINE) {
            flags[c.members[a]] |= FLAG.nearDuplicate;
            flags[c.members[b]] |= FLAG.nearDuplicate;
          }
    });
  }
  return flags;
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** Health of one scored group. `score` should hold majority (and, when available, cisc/ec/core). */
export function groupHealth(g: PreparedGroup, score: GroupScore, opts: GroupHealthOptions = {}): GroupHealth {
  const flags = rolloutFlags(g);
  const vote = score.results.majority ?? (g.n > 0 ? operatorSpec('majority')!.run(g, score.params) : undefined);
  const voteClass = vote ? vote.labelClass : -1;
  let answered = 0;
  for (let i = 0; i < g.n; i++) if (g.classOf[i] >= 0) answered++;
  let entropy: number | null = null;
  let majorityRatio: number | null = null;
  if (answered > 0) {
    let h = 0;
    let top = 0;
    for (const c of g.classes) {
      const p = c.members.length / answered;
      h -= p * Math.log(p);
      top = Math.max(top, c.members.length);
    }
    entropy = h + 0; // no -0
    majorityRatio = top / g.n;
  }
  let degeneratePlurality = false;
  const rescuedBy: OperatorId[] = [];
  if (voteClass >= 0) {
    const members = g.classes[voteClass].members;
    const bad = members.filter((i) => isDegenerate(flags[i])).length;
    degeneratePlurality = bad * 2 > members.length;
    if (degeneratePlurality)
      for (const [id, r] of Object.entries(score.results))
        if (r && id !== 'majority' && r.labelClass >= 0 && r.labelClass !== voteClass) rescuedBy.push(id as OperatorId);
  }
  let meanLength: number | null = null;
  if (g.text && g.n) {
    let s = 0;
    for (let i = 0; i < g.n; i++) s += g.text.length[i];
    meanLength = s / g.n;
  }
  let meanConfidence: number | null = null;
  if (g.confidenceMissing < g.n) {
    let s = 0;
    let k = 0;
    for (let i = 0; i < g.n; i++)
      if (g.hasConfidence[i]) {
        s += g.confidence[i];
        k++;
      }
    meanConfidence = s / k;
  }
  const gateOf = score.results.core ?? score.results.ec;
  const out: GroupHealth = {
    step: g.step,
    questionId: g.questionId,
    n: g.n,
    hasText: !!g.text,
    flags,
    answered,
    distinct: g.classes.length,
    majorityRatio,
    entropy,
    meanLength,
    gate: gateOf ? finiteOrNull(gateOf.gate) : null,
    meanConfidence,
    voteLabel: vote ? vote.label : null,
    voteClass,
    degeneratePlurality,
    rescuedBy,
    truth: null,
    auroc: {},
  };
  // A validation dump is its own run for the timeline (another group size, other questions).
  if (g.stream === 'validation') {
    out.stream = 'validation';
    out.run = `${g.run ?? ''} (validation)`;
  }
  else if (g.run !== undefined) out.run = g.run;

  // Which class the logged ground truth falls in (a diagnostic only).
  let truthClass: number | null = null;
  if (truthForms(g).length) {
    truthClass = truthClassOf(g.classes, g)!;
    const correct = (i: number) => truthClass! >= 0 && g.classOf[i] === truthClass;
    let agree = 0;
    let nCorrect = 0;
    for (let i = 0; i < g.n; i++) {
      const c = correct(i);
      if (c) nCorrect++;
      // TTRL's reward accuracy: the pseudo-reward (1 in the vote's class) equals the true reward.
      if ((voteClass >= 0 && g.classOf[i] === voteClass) === c) agree++;
    }
    out.truth = { labelCorrect: voteClass >= 0 && voteClass === truthClass, rewardAccuracy: g.n ? agree / g.n : 0, correct: nCorrect };
    out.groundTruth = g.groundTruth!;
    if (g.truthMayBeVote) out.truthMayBeVote = true;
    const t = aurocCounts(g, correct);
    if (t) out.auroc.truth = t;
  }
  if (voteClass >= 0) {
    const l = aurocCounts(g, (i) => g.classOf[i] === voteClass);
    if (l) out.auroc.label = l;
  }

  // Each operator's label, accuracy read-outs and learning signal (learning-signal.ts).
  if (g.n > 0) out.operators = operatorOutcomes(g, score.results, truthClass);

  // Validation rewards are scored against the real answer, not a consensus: no reward-bug evidence.
  const stated = statedOperatorOf(g, opts.configuredOperator);
  // No operator named by the user or the log: no reward is checked against an assumed one; which
  // operators the logged rewards equal is recorded instead (report: "equal majority's in 12/12").
  if (g.n > 0 && g.stream !== 'validation' && g.loggedRewards.every((r) => r !== null) && !stated && score.rewardMatches) out.rewardMatches = score.rewardMatches;
  if (g.n > 0 && g.stream !== 'validation' && g.loggedRewards.every((r) => r !== null) && stated) {
    const configured = stated;
    const p = score.params ?? resolveParams(opts.params);
    const spec = operatorSpec(configured)!;
    const runnable = !spec.unavailable(g, opts.ctx, p) && (g.hasReasoning || !spec.needs.includes('text'));
    // with the run's context: MS-TTRL's rewards depend on its outcome cache (docs/contract.md#ms-ttrl);
    // scoreGroup ran it for this group already, and a second run of a group leaves the cache as it was
    const r = score.results[configured] ?? (runnable ? spec.run(g, p, opts.ctx) : undefined);
    if (r) {
      const labels: Partial<Record<OperatorId, number>> = {};
      for (const [id, res] of Object.entries(score.results)) if (res) labels[id as OperatorId] = res.labelClass;
      labels[configured] = r.labelClass;
      if (out.operators && !out.operators[configured]) out.operators[configured] = operatorOutcome(g, r, truthClass);
      out.rewards = {
        configured,
        logged: g.loggedRewards as number[],
        expected: Array.from(r.rewards),
        classOf: Array.from(g.classOf),
        classSizes: g.classes.map((c) => c.members.length),
        labels,
        truthClass,
      };
    }
  }
  return out;
}

// ---- "How many roll-outs?" (CoRE Fig. 2) ----

/**
 * The group restricted to roll-outs `idx` (ascending), reusing the full group's features: answer
 * classes keep their full-group membership (re-deciding equivalence within the subsample could
 * differ only through the non-transitive tolerance rules), and each class's cosines are the
 * sub-matrix of the full group's. TF-IDF's idf is NOT refit on the N' responses: the texts are not
 * kept, and refitting would re-run the costliest step once per draw; the full group's idf is the
 * better estimate of term rarity (it uses N responses, not N'), so the subsample is scored with the
 * same reasoning geometry and only the set of roll-outs changes.
 */
export function subsampleGroup(g: PreparedGroup, idx: readonly number[]): PreparedGroup {
  const n = idx.length;
  const newClassOf = new Int32Array(n).fill(-1);
  const classMap = new Map<number, number>();
  const classes: AnswerClass[] = [];
  const oldMembers: number[][] = [];
  idx.forEach((old, i) => {
    const c = g.classOf[old];
    if (c < 0) return;
    let k = classMap.get(c);
    if (k === undefined) {
      k = classes.length;
      classMap.set(c, k);
      classes.push({ answer: g.answers[old]!, members: [] });
      oldMembers.push([]);
    }
    classes[k].members.push(i);
    oldMembers[k].push(old);
    newClassOf[i] = k;
  });
  let cosines: Float64Array[] = [];
  if (g.hasReasoning) {
    cosines = oldMembers.map((olds, k) => {
      const c = [...classMap.entries()].find(([, v]) => v === k)![0];
      const full = g.classes[c].members;
      const pos = olds.map((o) => full.indexOf(o));
      const m = olds.length;
      const out = new Float64Array((m * (m - 1)) / 2);
      for (let a = 0; a < m; a++) for (let b = a + 1; b < m; b++) out[pairIndex(m, a, b)] = g.cosines[c][pairIndex(full.length, pos[a], pos[b])];
      return out;
    });
  }
  const confidence = new Float64Array(n);
  const hasConfidence = new Uint8Array(n);
  const verified = new Int8Array(n);
  let missing = 0;
  idx.forEach((old, i) => {
    confidence[i] = g.confidence[old];
    hasConfidence[i] = g.hasConfidence[old];
    verified[i] = g.verified[old];
    if (!hasConfidence[i]) missing++;
  });
  return {
    run: g.run,
    step: g.step,
    questionId: g.questionId,
    n,
    answers: idx.map((i) => g.answers[i]),
    classOf: newClassOf,
    classes,
    cosines,
    hasReasoning: g.hasReasoning,
    confidence,
    hasConfidence,
    confidenceMissing: missing,
    verified,
    loggedRewards: idx.map((i) => g.loggedRewards[i]),
    outcomeChecks: g.outcomeChecks,
    groundTruth: g.groundTruth,
    ...(g.groundTruthForms ? { groundTruthForms: g.groundTruthForms } : {}),
    sources: idx.map((i) => g.sources[i]),
  };
}

/** N' values of the what-if for a group of n: 4, 8, 16, … below n. */
export function subsampleSizes(n: number): number[] {
  const out: number[] = [];
  for (let k = 4; k < n; k *= 2) out.push(k);
  return out;
}

/** The operators a subsample can re-run: those that need only the roll-outs (texts, confidences), not verifications or outcome checks. */
export const WHATIF_OPERATORS: readonly OperatorId[] = OPERATORS.filter((o) => o.needs.every((n) => n === 'text' || n === 'confidence')).map((o) => o.id);
export const WHATIF_DRAWS = 5;

/**
 * Re-scores `draws` seeded subsamples of each size N' with the voting and equilibrium operators.
 * A hit is a correct label (with ground truth) or, without it, the full-N label's answer class.
 */
export function rolloutWhatIf(g: PreparedGroup, full: GroupScore, params: Partial<Params> = {}, draws = WHATIF_DRAWS): GroupHealth['whatif'] {
  const out: NonNullable<GroupHealth['whatif']> = {};
  const truthClass = truthClassOf(g.classes, g) ?? -2;
  const truth = truthClass === -2 ? null : g.groundTruth;
  const ops = WHATIF_OPERATORS.filter((id) => full.results[id]);
  if (!ops.length) return undefined;
  const r = rng(fnv1a(`${g.run ?? ''}\u0000${g.step}\u0000${g.questionId}`));
  for (const size of subsampleSizes(g.n)) {
    const cell: Partial<Record<OperatorId, [number, number]>> = {};
    for (let d = 0; d < draws; d++) {
      // Partial Fisher–Yates: the first `size` of a random permutation, then in roll-out order.
      const perm = Array.from({ length: g.n }, (_, i) => i);
      for (let i = 0; i < size; i++) {
        const j = i + Math.floor(r() * (g.n - i));
        [perm[i], perm[j]] = [perm[j], perm[i]];
      }
      const idx = perm.slice(0, size).sort((a, b) => a - b);
      const sub = subsampleGroup(g, idx);
      for (const id of ops) {
        const spec = operatorSpec(id)!;
        const p = resolveParams(params);
        if (spec.unavailable(sub, undefined, p)) continue;
        const res = spec.run(sub, p);
        // Map the subsample's label class back to the full group's class of its first member.
        const fullClass = res.labelClass >= 0 ? g.classOf[idx[sub.classes[res.labelClass].members[0]]] : -1;
        const target = truth !== null ? truthClass : full.results[id]!.labelClass;
        const hit = fullClass >= 0 && fullClass === target ? 1 : 0;
        const c = (cell[id] ??= [0, 0]);
        c[0] += hit;
        c[1] += 1;
      }
    }
    out[String(size)] = cell;
  }
  // The full group, for the right end of the curve.
  const whole: Partial<Record<OperatorId, [number, number]>> = {};
  for (const id of ops) whole[id] = [truth !== null ? (full.results[id]!.labelClass >= 0 && full.results[id]!.labelClass === truthClass ? 1 : 0) : 1, 1];
  out.full = whole;
  return out;
}
