// Run health (docs/health.md): from the per-group records of health-group.ts, the per-step
// timeline, change-point alarms, the confidence premise, the reward-bug classes, the degenerate
// roll-out counts and the "how many roll-outs" curve. One source for `consensus-lens health`,
// `report` and the dashboard.

import { OPERATOR_LABELS, type OperatorId } from '../operators/ids';
import { changePoints } from './health-changepoint';
import { groupSignalShare, learningSignal } from './learning-signal';
import { FLAG, FLAG_NAMES, isDegenerate, WHATIF_OPERATORS, type AurocCounts, type FlagName, type GroupHealth } from './health-group';
import type { Alarm, PremiseCheck, PremiseVerdict, RewardBug, RewardBugKind, RolloutsWhatIf, RunHealth, Series } from './health-types';

export type { LearningSignal, OperatorOutcome } from './health-types';
export { isSaturated, operatorOutcome, signalRollouts, SIGNAL_EPS } from './learning-signal';
export type { Alarm, PremiseCheck, PremiseVerdict, RewardBug, RewardBugKind, RolloutsWhatIf, RunHealth, Series } from './health-types';

export * from './health-group';
export { changePoints, type ChangePoint, type ChangePointOptions } from './health-changepoint';
export { repetitionShare, answerRule, rolloutTextStats, REPETITION_THRESHOLD, REPETITION_WINDOW, type RolloutTextStats } from '../features/text-stats';

export interface SeriesSpec {
  id: string;
  label: string;
  /** Smallest change worth an alarm: absolute, or relative to the series' mean when `relative`. */
  minChange: number;
  relative?: boolean;
  /** Digits in messages. */
  digits: number;
}

/** The timeline's series, in display order. */
export const SERIES: readonly SeriesSpec[] = [
  { id: 'majority_ratio', label: 'majority ratio', minChange: 0.1, digits: 2 },
  { id: 'answer_entropy', label: 'answer entropy (nats)', minChange: 0.2, digits: 2 },
  { id: 'distinct_answers', label: 'distinct answers per question', minChange: 0.25, relative: true, digits: 1 },
  { id: 'no_answer_share', label: 'no-answer share', minChange: 0.1, digits: 2 },
  { id: 'degenerate_share', label: 'degenerate share', minChange: 0.1, digits: 2 },
  { id: 'unformatted_share', label: 'unformatted share', minChange: 0.1, digits: 2 },
  { id: 'near_duplicate_share', label: 'near-duplicate share', minChange: 0.1, digits: 2 },
  { id: 'degenerate_plurality_share', label: 'degenerate-plurality share of questions', minChange: 0.1, digits: 2 },
  { id: 'response_length', label: 'mean response length (chars)', minChange: 0.25, relative: true, digits: 0 },
  { id: 'gate', label: 'mean CoRE gate', minChange: 0.1, digits: 2 },
  { id: 'confidence', label: 'mean confidence (mean log-prob)', minChange: 0.1, digits: 3 },
  { id: 'auroc_label', label: 'confidence AUROC (in the label\u2019s class)', minChange: 0.1, digits: 2 },
  { id: 'auroc_truth', label: 'confidence AUROC (correct)', minChange: 0.1, digits: 2 },
  { id: 'label_accuracy', label: 'label accuracy', minChange: 0.1, digits: 2 },
  { id: 'reward_accuracy', label: 'reward accuracy', minChange: 0.1, digits: 2 },
  { id: 'reward_mismatch_share', label: 'reward-mismatch share', minChange: 0.1, digits: 2 },
  // §6: groups whose effective GRPO advantage is non-zero under the configured operator.
  { id: 'signal_groups', label: 'groups with signal', minChange: 0.1, digits: 2 },
];

/** Run-wide false-alarm rate of the change-point tests on a stationary run (Bonferroni over series). */
export const FAMILY_ALPHA = 0.05;
/** Fewest steps a series needs before it is tested (two segments of at least 3 steps each, and then some). */
export const MIN_STEPS_FOR_CHANGES = 8;









const fmt = (x: number, d: number): string => (Math.abs(x) >= 1000 ? x.toFixed(0) : x.toFixed(d));

/** Premise verdict bands (docs/health.md §3): below 0.45 misleads, 0.45–0.6 is uninformative. */
export const PREMISE_MISLEADING = 0.45;
export const PREMISE_INFORMATIVE = 0.6;
/** Fewest groups (with both kinds of roll-out and confidences) before a verdict. */
export const PREMISE_MIN_GROUPS = 5;

/** The premise verdict over pooled within-question AUROC counts (one entry per group). */
export function premiseCheck(counts: readonly (AurocCounts | undefined)[], what: string): PremiseCheck {
  let u = 0;
  let pairs = 0;
  let groups = 0;
  for (const c of counts) {
    if (!c) continue;
    u += c.u;
    pairs += c.pairs;
    groups++;
  }
  const auroc = pairs ? u / pairs : null;
  let verdict: PremiseVerdict;
  if (auroc === null || groups < PREMISE_MIN_GROUPS) verdict = 'too few';
  else if (auroc < PREMISE_MISLEADING) verdict = 'misleading';
  else if (auroc < PREMISE_INFORMATIVE) verdict = 'uninformative';
  else verdict = 'informative';
  const a = auroc === null ? '-' : auroc.toFixed(2);
  const message =
    verdict === 'too few'
      ? `confidence vs ${what}: too few questions with confidences and both kinds of roll-out (${groups})`
      : verdict === 'misleading'
        ? `confidence misleads: within-question AUROC for ${what} is ${a} (< ${PREMISE_MISLEADING}) over ${groups} questions — confidence weighting (CISC, CoRE's τ) favours the wrong roll-outs`
        : verdict === 'uninformative'
          ? `confidence is uninformative: within-question AUROC for ${what} is ${a} (near 0.5) over ${groups} questions — CoRE ≈ EC, τ is moot`
          : `confidence separates ${what}: within-question AUROC ${a} over ${groups} questions`;
  return { auroc, groups, pairs, verdict, message };
}

const ex = (h: GroupHealth) => ({ step: h.step, question_id: h.questionId, ...(h.run !== undefined ? { run: h.run } : {}) });

// ---- reward bugs (docs/health.md §4) ----

const EPS = 1e-6;
const close = (a: number, b: number) => Math.abs(a - b) <= EPS;

/** Exact affine map logged = a·expected + b over a group, when one exists and expected is not constant. */
function affineFit(logged: number[], expected: number[]): { a: number; b: number } | null {
  let i0 = -1;
  let i1 = -1;
  for (let i = 0; i < expected.length; i++) {
    if (i0 < 0) i0 = i;
    else if (!close(expected[i], expected[i0])) {
      i1 = i;
      break;
    }
  }
  if (i0 < 0 || i1 < 0) return null;
  const a = (logged[i1] - logged[i0]) / (expected[i1] - expected[i0]);
  const b = logged[i0] - a * expected[i0];
  for (let i = 0; i < logged.length; i++) if (!close(logged[i], a * expected[i] + b)) return null;
  return { a, b };
}

const affineText = (a: number, b: number): string => {
  const r = (x: number) => String(Number(x.toFixed(6)));
  const ra = Math.abs(a);
  const term = close(ra, 1) ? 'R' : `${r(ra)}·R`;
  if (close(b, 0)) return a < 0 ? `−${term}` : term;
  return a < 0 ? `${r(b)} − ${term}` : `${term} ${b < 0 ? '−' : '+'} ${r(Math.abs(b))}`;
};

/** An operator's name inside a sentence ("differs from the vote's label"). */
const labelName = (id: string): string => (id === 'majority' ? 'the vote' : (OPERATOR_LABELS[id as OperatorId] ?? id));

/**
 * Classifies the groups whose logged rewards differ from the configured operator's. Each such
 * group gets every explanation its data fits (an exact affine map of R, a constant penalty, the
 * rewarded roll-outs being exactly one answer class — the ground truth's, another operator's
 * label's, the runner-up's); then the explanation covering the most groups is taken, its groups
 * removed, and so on (two-class groups fit several: an inverted reward and "the other class").
 */
export function classifyRewardBugs(records: readonly GroupHealth[]): RewardBug[] {
  const withR = records.filter((h) => h.rewards);
  if (!withR.length) return [];
  const of = withR.length;
  let lo = Infinity;
  let hi = -Infinity;
  for (const h of withR) for (const v of h.rewards!.logged) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
  const configured = withR[0].rewards!.configured;
  const candidates = new Map<GroupHealth, string[]>();
  const constantExpected: GroupHealth[] = [];
  const affine = new Map<string, { a: number; b: number }>();
  for (const h of withR) {
    const r = h.rewards!;
    if (r.logged.every((v, i) => close(v, r.expected[i]))) continue; // consistent
    const c: string[] = [];
    const fit = affineFit(r.logged, r.expected);
    if (fit && Math.abs(fit.a) > EPS) {
      const key = `${fit.a > 0 ? 'scaled' : 'inverted'}:${fit.a.toFixed(6)}|${fit.b.toFixed(6)}`;
      affine.set(key, fit);
      c.push(key);
    }
    const constant = r.logged.every((v) => close(v, r.logged[0]));
    // Rewards that are exactly "matches the logged ground truth" (also when nothing matches).
    let truthPattern = r.truthClass !== null && lo < hi - EPS && r.logged.every((v, i) => close(v, r.classOf[i] >= 0 && r.classOf[i] === r.truthClass ? hi : lo));
    const answered = r.classOf.filter((k) => k >= 0).length;
    // A constant penalty: every roll-out gets the run's lowest reward although most have an
    // answer and the configured operator would have rewarded some of them.
    if (constant && close(r.logged[0], lo) && lo < hi - EPS && answered * 2 >= r.logged.length && r.expected.some((v) => v > lo + EPS)) c.push('constant-penalty');
    // A binary reward whose rewarded roll-outs are exactly one answer class: which label is it?
    // (Binary in the run's two reward values, so a unanimous group rewarded in full counts too.)
    const top = hi;
    const bottom = lo;
    if (top > bottom + EPS && r.logged.some((v) => close(v, top)) && r.logged.every((v) => close(v, top) || close(v, bottom))) {
      const rewarded = new Set<number>();
      r.logged.forEach((v, i) => close(v, top) && rewarded.add(r.classOf[i]));
      const cls = rewarded.size === 1 ? [...rewarded][0] : -2;
      if (cls >= 0 && r.classSizes[cls] === r.logged.filter((v) => close(v, top)).length) {
        if (r.truthClass !== null && cls === r.truthClass) truthPattern = true;
        for (const [id, k] of Object.entries(r.labels)) if (k === cls && id !== configured) c.push(`different-label:${labelName(id)}'s label`);
        const sizes = r.classSizes.map((sz, k) => [sz, k]).sort((x, y) => y[0] - x[0] || x[1] - y[1]);
        if (sizes.length > 1 && sizes[1][1] === cls) c.push('different-label:the runner-up class');
        if (cls === 0) c.push("different-label:the first roll-out's answer");
      }
    }
    if (truthPattern) c.push('ground-truth-leak');
    if (c.length) candidates.set(h, c);
    if (r.expected.every((v) => close(v, r.expected[0]))) constantExpected.push(h);
  }
  // A group whose expected rewards are all equal fits no affine map by itself; it fits the maps
  // other groups established (an inverted run's unanimous questions).
  for (const h of constantExpected) {
    const r = h.rewards!;
    const c = [...affine].filter(([, m]) => r.logged.every((v, i) => close(v, m.a * r.expected[i] + m.b))).map(([k]) => k);
    if (c.length) candidates.set(h, [...(candidates.get(h) ?? []), ...c]);
  }
  const out: RewardBug[] = [];
  while (candidates.size) {
    const count = new Map<string, number>();
    for (const c of candidates.values()) for (const k of c) count.set(k, (count.get(k) ?? 0) + 1);
    // Most groups first; on a tie the more specific reading (the leak, then the list order).
    let best = '';
    let bestN = 0;
    for (const [k, n] of count) if (n > bestN || (n === bestN && k === 'ground-truth-leak')) ((best = k), (bestN = n));
    const groups = [...candidates.keys()].filter((h) => candidates.get(h)!.includes(best));
    for (const g of groups) candidates.delete(g);
    const first = groups.reduce((a, b) => (b.step < a.step ? b : a));
    const base = { groups: groups.length, of, firstStep: first.step, example: ex(first) };
    if (best.startsWith('scaled:') || best.startsWith('inverted:')) {
      const { a, b } = affine.get(best)!;
      if (a > 0)
        out.push({
          kind: 'scaled',
          ...base,
          message: `logged reward = ${affineText(a, b)} (R: ${configured}'s reward) in ${groups.length} of ${of} groups${close(a, 2) && close(b, -1) ? ' ({−1, 1} instead of {0, 1})' : ''}: a scaled/shifted reward (GRPO's group normalisation removes a shift and a positive scale), not a per-roll-out bug`,
        });
      else out.push({ kind: 'inverted', ...base, message: `rewards are inverted in ${groups.length} of ${of} groups from step ${first.step}: logged reward = ${affineText(a, b)} (R: ${configured}'s reward) — the run rewards the roll-outs the operator rejects` });
    } else if (best === 'constant-penalty') {
      const correct = groups.reduce((s, g) => s + (g.truth?.correct ?? 0), 0);
      // Extractable = a non-empty answer (an empty box is the degenerate answer "").
      const answered = groups.reduce((s, g) => s + g.flags.filter((f) => !(f & (FLAG.noAnswer | FLAG.empty))).length, 0);
      const rollouts = groups.reduce((s, g) => s + g.n, 0);
      const unboxed = groups.reduce((s, g) => s + g.flags.filter((f) => f & FLAG.unformatted).length, 0);
      out.push({
        kind: 'constant-penalty',
        ...base,
        message:
          `constant reward ${fmt(lo, 2)} for every roll-out in ${groups.length} of ${of} groups from step ${first.step}, although ${answered} of ${rollouts} roll-outs have an extractable answer` +
          (unboxed ? ` (${unboxed} found without a box)` : '') +
          (groups.some((g) => g.truth) ? ` and ${correct} are correct` : '') +
          ` — a format penalty that rejects answers ${configured} would reward`,
      });
    } else if (best === 'ground-truth-leak') {
      out.push({ kind: 'ground-truth-leak', ...base, message: `ground-truth leak: in ${groups.length} of ${of} groups the rewarded roll-outs are exactly those matching the logged ground truth, where ${configured} picked another answer — the run is not label-free` });
    } else {
      const name = best.slice('different-label:'.length);
      out.push({ kind: 'different-label', ...base, message: `rewards follow a different label than ${configured}'s in ${groups.length} of ${of} groups: the rewarded class is ${name}` });
    }
  }
  const order: RewardBugKind[] = ['ground-truth-leak', 'constant-penalty', 'inverted', 'different-label', 'scaled'];
  return out.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || b.groups - a.groups);
}

// ---- the run ----

/** The records of each step, in record order. */
export function perStep(records: readonly GroupHealth[]): Map<number, GroupHealth[]> {
  const m = new Map<number, GroupHealth[]>();
  for (const h of records) {
    const l = m.get(h.step);
    if (l) l.push(h);
    else m.set(h.step, [h]);
  }
  return m;
}

const meanOf = (xs: (number | null)[]): number | null => {
  let s = 0;
  let k = 0;
  for (const x of xs)
    if (x !== null && Number.isFinite(x)) {
      s += x;
      k++;
    }
  return k ? s / k : null;
};

/** Share of roll-outs (of those with the data) carrying `mask`. */
function flagShare(hs: GroupHealth[], mask: number, needsText: boolean): number | null {
  let hit = 0;
  let all = 0;
  for (const h of hs) {
    if (needsText && !h.hasText) continue;
    all += h.n;
    for (const f of h.flags) if (f & mask) hit++;
  }
  return all ? hit / all : null;
}

function pooledAuroc(hs: GroupHealth[], key: 'label' | 'truth'): number | null {
  let u = 0;
  let p = 0;
  for (const h of hs) {
    const c = h.auroc[key];
    if (c) ((u += c.u), (p += c.pairs));
  }
  return p ? u / p : null;
}

function seriesValue(id: string, hs: GroupHealth[], configured: OperatorId): number | null {
  switch (id) {
    case 'majority_ratio':
      return meanOf(hs.map((h) => h.majorityRatio));
    case 'answer_entropy':
      return meanOf(hs.map((h) => h.entropy));
    case 'distinct_answers':
      return meanOf(hs.map((h) => h.distinct));
    case 'no_answer_share':
      return flagShare(hs, FLAG.noAnswer, false);
    case 'degenerate_share': {
      let hit = 0;
      let all = 0;
      for (const h of hs) {
        all += h.n;
        for (const f of h.flags) if (isDegenerate(f)) hit++;
      }
      return all ? hit / all : null;
    }
    case 'unformatted_share':
      return flagShare(hs, FLAG.unformatted, true);
    case 'near_duplicate_share':
      return flagShare(hs, FLAG.nearDuplicate, false);
    case 'degenerate_plurality_share':
      return hs.length ? hs.filter((h) => h.degeneratePlurality).length / hs.length : null;
    case 'response_length':
      return meanOf(hs.map((h) => h.meanLength));
    case 'gate':
      return meanOf(hs.map((h) => h.gate));
    case 'confidence':
      return meanOf(hs.map((h) => h.meanConfidence));
    case 'auroc_label':
      return pooledAuroc(hs, 'label');
    case 'auroc_truth':
      return pooledAuroc(hs, 'truth');
    case 'label_accuracy': {
      const t = hs.filter((h) => h.truth);
      return t.length ? t.filter((h) => h.truth!.labelCorrect).length / t.length : null;
    }
    case 'reward_accuracy':
      return meanOf(hs.map((h) => (h.truth ? h.truth.rewardAccuracy : null)));
    case 'signal_groups':
      return groupSignalShare(hs, configured);
    case 'reward_mismatch_share': {
      let hit = 0;
      let all = 0;
      for (const h of hs) {
        if (!h.rewards) continue;
        all += h.n;
        h.rewards.logged.forEach((v, i) => Math.abs(v - h.rewards!.expected[i]) > EPS && hit++);
      }
      return all ? hit / all : null;
    }
  }
  return null;
}

export interface AnalyseOptions {
  /** Permutations of each change-point test (default 999). */
  permutations?: number;
  /** Multiplies every series' smallest relevant change (default 1; 0 leaves the test alone, for measuring it). */
  minChangeScale?: number;
  /** The operator the run trains with, for the learning signal (default: the one the reward
   * evidence names, else the vote). */
  configuredOperator?: OperatorId;
}

export function analyseRun(records: readonly GroupHealth[], opts: AnalyseOptions = {}): RunHealth {
  const byStep = perStep(records);
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const notes: string[] = [];
  const series: Series[] = [];
  const configured = opts.configuredOperator ?? records.find((h) => h.rewards)?.rewards?.configured ?? 'majority';
  for (const spec of SERIES) {
    const values = steps.map((s) => seriesValue(spec.id, byStep.get(s)!, configured));
    if (values.every((v) => v === null)) continue;
    series.push({ id: spec.id, label: spec.label, values });
  }
  // Change points: every series with enough steps, at a Bonferroni level so that a stationary run
  // raises any alarm with probability at most FAMILY_ALPHA.
  const alarms: Alarm[] = [];
  // A constant series cannot change (its p-value is 1), so it does not count in the correction.
  const testable = series.filter((s) => {
    const xs = s.values.filter((v): v is number => v !== null);
    return xs.length >= MIN_STEPS_FOR_CHANGES && xs.some((v) => v !== xs[0]);
  });
  if (steps.length < MIN_STEPS_FOR_CHANGES) notes.push(`${steps.length} step${steps.length === 1 ? '' : 's'}: change points need at least ${MIN_STEPS_FOR_CHANGES}`);
  const alpha = testable.length ? FAMILY_ALPHA / testable.length : FAMILY_ALPHA;
  for (const s of testable) {
    const spec = SERIES.find((x) => x.id === s.id)!;
    const at: number[] = [];
    const xs: number[] = [];
    s.values.forEach((v, k) => {
      if (v !== null) {
        at.push(steps[k]);
        xs.push(v);
      }
    });
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const minChange = (opts.minChangeScale ?? 1) * (spec.relative ? spec.minChange * Math.abs(m) : spec.minChange);
    for (const cp of changePoints(xs, { alpha, minChange, permutations: opts.permutations, seed: 0x9e3779b1 ^ SERIES.indexOf(spec) })) {
      const step = at[cp.index];
      alarms.push({
        series: s.id,
        label: s.label,
        step,
        before: cp.before,
        after: cp.after,
        p: cp.p,
        message: `${s.label} ${fmt(cp.before, spec.digits)} → ${fmt(cp.after, spec.digits)} from step ≈ ${step}`,
      });
    }
  }
  alarms.sort((a, b) => a.step - b.step || SERIES.findIndex((x) => x.id === a.series) - SERIES.findIndex((x) => x.id === b.series));

  const anyConfidence = records.some((h) => h.meanConfidence !== null);
  const anyTruth = records.some((h) => h.truth);
  if (!anyConfidence) notes.push('no confidences logged: the confidence premise cannot be checked (CISC and CoRE run without confidence)');
  if (!anyTruth) notes.push('no ground truth logged: accuracies are replaced by agreement with the full-N label');
  if (!records.some((h) => h.rewards)) notes.push('no training rewards logged: no reward-bug check');
  if (records.length && !records.some((h) => h.hasText)) notes.push('texts not read: truncation, repetition and format flags were not computed');

  const flags = Object.fromEntries(FLAG_NAMES.map((k) => [k, 0])) as Record<FlagName, number>;
  let degenerateRollouts = 0;
  let pluralities = 0;
  const rescued: Partial<Record<OperatorId, number>> = {};
  const examples: RunHealth['degenerate']['examples'] = [];
  let rollouts = 0;
  for (const h of records) {
    rollouts += h.n;
    for (const f of h.flags) {
      for (const k of FLAG_NAMES) if (f & FLAG[k]) flags[k]++;
      if (isDegenerate(f)) degenerateRollouts++;
    }
    if (h.degeneratePlurality) {
      pluralities++;
      for (const id of h.rescuedBy) rescued[id] = (rescued[id] ?? 0) + 1;
      if (examples.length < 10) examples.push({ ...ex(h), label: h.voteLabel });
    }
  }

  return {
    format: 'consensus-lens/health/v1',
    groups: records.length,
    rollouts,
    steps,
    series,
    alarms,
    premise: {
      label: premiseCheck(records.map((h) => h.auroc.label), "the vote's class"),
      truth: anyTruth ? premiseCheck(records.map((h) => h.auroc.truth), 'correct roll-outs') : null,
    },
    degenerate: { flags, degenerateRollouts, pluralities, rescued, examples },
    rewardBugs: classifyRewardBugs(records),
    rolloutsWhatIf: aggregateWhatIf(records, anyTruth),
    learningSignal: learningSignal(steps, byStep, configured),
    notes,
  };
}

/**
 * One analysis per run when the records come from several (a verl folder's rollout/ and
 * validation/ dumps are two runs with interleaved steps: one timeline would mix them), largest
 * first; a single run (or records without run names) gives one entry with run null.
 */
export function analyseRuns(records: readonly GroupHealth[], opts: AnalyseOptions = {}): { run: string | null; health: RunHealth }[] {
  const byRun = new Map<string, GroupHealth[]>();
  for (const h of records) {
    const k = h.run ?? '';
    const l = byRun.get(k);
    if (l) l.push(h);
    else byRun.set(k, [h]);
  }
  if (byRun.size <= 1) return [{ run: records[0]?.run ?? null, health: analyseRun(records, opts) }];
  return [...byRun.entries()].sort((a, b) => b[1].length - a[1].length).map(([run, hs]) => ({ run: run || null, health: analyseRun(hs, opts) }));
}

function aggregateWhatIf(records: readonly GroupHealth[], anyTruth: boolean): RolloutsWhatIf | null {
  const withW = records.filter((h) => h.whatif && (!anyTruth || h.truth));
  if (!withW.length) return null;
  const sizeSet = new Set<number>();
  for (const h of withW) for (const k of Object.keys(h.whatif!)) if (k !== 'full') sizeSet.add(Number(k));
  if (!sizeSet.size) return null; // every group has N ≤ 4: nothing to subsample
  const sizes = [...[...sizeSet].sort((a, b) => a - b).map(String), 'full'];
  const values: RolloutsWhatIf['values'] = {};
  for (const op of WHATIF_OPERATORS) {
    const row = sizes.map((size) => {
      let hits = 0;
      let trials = 0;
      for (const h of withW) {
        const c = h.whatif![size]?.[op];
        if (c) ((hits += c[0]), (trials += c[1]));
      }
      return trials ? hits / trials : null;
    });
    if (row.some((v) => v !== null)) values[op] = row;
  }
  return { sizes, metric: anyTruth ? 'accuracy' : 'agreement', values, groups: withW.length, draws: 5, idfRefit: false };
}

/** What to do with logged ground truth (docs/contract.md#ground-truth): `--ground-truth`, `consensusLens.groundTruth`. */
export type GroundTruthMode = 'auto' | 'use' | 'ignore';

/** How many training groups' ground truth may be the vote, and how many of those equal it. */
export interface PseudoLabelEvidence {
  groups: number;
  matching: number;
}

/**
 * `--ground-truth auto`'s check (docs/contract.md#ground-truth): among the training groups whose
 * logged ground truth is a field a TTRL-style trainer may overwrite with its vote
 * (GroupHealth.truthMayBeVote: verl `gts` with neither TTRL's keys nor our hook's), does it equal
 * the vote in at least 95 % of at least 8 groups, 3 of them contested? Then it looks like the
 * pseudo-label. A native `ground_truth`, TTRL's `original_gt` and a dump our hook wrote are never
 * suspected. Returns the counts when it looks like the pseudo-label, else null.
 */
export function pseudoLabelEvidence(records: readonly GroupHealth[]): PseudoLabelEvidence | null {
  let groups = 0;
  let matching = 0;
  let contested = 0;
  for (const h of records) {
    if (h.stream === 'validation' || !h.truth || !h.truthMayBeVote) continue;
    groups++;
    if (h.truth.labelCorrect) {
      matching++;
      if (h.majorityRatio !== null && h.majorityRatio < 1) contested++;
    }
  }
  return groups >= 8 && contested >= 3 && matching >= 0.95 * groups ? { groups, matching } : null;
}

/**
 * Under `auto`, when the logged ground truth looks like the pseudo-label (pseudoLabelEvidence),
 * drops it from the suspected records so the health analysis does not take the vote for the
 * truth (the vote would look "accurate", the rewards "tracking the truth"). Returns the evidence
 * when it dropped, else null. `use` and `ignore` never drop here (`ignore` dropped it at read).
 */
export function dropPseudoLabelTruth(records: GroupHealth[], mode: GroundTruthMode = 'auto'): PseudoLabelEvidence | null {
  if (mode !== 'auto') return null;
  const ev = pseudoLabelEvidence(records);
  if (ev) stripTruth(records.filter((h) => h.truthMayBeVote));
  return ev;
}

/** The records as they are, or — when their logged ground truth looks like the vote itself
 * (dropPseudoLabelTruth) — copies without it; for callers that keep the records (the editor's store). */
export function labelFreeCopies(records: readonly GroupHealth[], mode: GroundTruthMode = 'auto'): GroupHealth[] {
  if (mode !== 'auto' || !pseudoLabelEvidence(records)) return records as GroupHealth[];
  const copies = records.map((h) => ({
    ...h,
    auroc: { ...h.auroc },
    ...(h.rewards ? { rewards: { ...h.rewards } } : {}),
    ...(h.operators ? { operators: Object.fromEntries(Object.entries(h.operators).map(([k, o]) => [k, { ...o }])) } : {}),
  }));
  stripTruth(copies.filter((h) => h.truthMayBeVote));
  return copies;
}

/** Drops logged ground truth from training records (validation dumps keep theirs). */
export function stripTruth(records: GroupHealth[]): void {
  for (const h of records) {
    if (h.stream === 'validation') continue;
    h.truth = null;
    delete h.groundTruth;
    delete h.auroc.truth;
    if (h.rewards) h.rewards.truthClass = null;
    for (const o of Object.values(h.operators ?? {})) ((o!.correct = null), (o!.rewardAccuracy = null));
    // its "how many roll-outs" hits were counted against that truth
    delete h.whatif;
  }
}
