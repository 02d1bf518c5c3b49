// Run-wide comparisons: one operator setting against a baseline setting, group by group
// (pseudo-label flips, reward / advantage / gate shifts, advantage sign changes, pseudo-label
// accuracy where ground truth is logged), and every operator's labels against each other (an
// agreement matrix). Pure: no I/O, no 'vscode'; the worker threads and the tests use it directly.
//
// Rules:
// - A flip is a change of answer CLASS (labelClass, an index into the prepared group's classes),
//   never a string comparison of labels: two settings scored on the same PreparedGroup share the
//   classes, so class identity is exact (and "no label" is class -1).
// - Accuracy is computed only from the ground truth the log holds (`groundTruth` of the group), a
//   diagnostic: it is never an input of any operator. Groups without it count in no accuracy.
// - Distributions are fixed-range histograms (mergeable across worker threads); values beyond the
//   range go to the first / last bin and are counted in `under` / `over`.

import type { OperatorId, OperatorResult } from '../operators/result';

/** Sign with a dead zone: |a| ≤ 1e-9 is 0 (an all-equal group's advantages are exactly 0 anyway). */
export function signOf(a: number): -1 | 0 | 1 {
  return a > 1e-9 ? 1 : a < -1e-9 ? -1 : 0;
}

export interface Histogram {
  lo: number;
  hi: number;
  counts: number[];
  under: number;
  over: number;
  n: number;
  sum: number;
}

export function histogram(lo: number, hi: number, bins: number): Histogram {
  return { lo, hi, counts: new Array(bins).fill(0), under: 0, over: 0, n: 0, sum: 0 };
}

export function addToHistogram(h: Histogram, x: number): void {
  if (!Number.isFinite(x)) return;
  const bins = h.counts.length;
  let b = Math.floor(((x - h.lo) / (h.hi - h.lo)) * bins);
  if (x < h.lo) h.under++;
  if (x > h.hi) h.over++;
  if (b < 0) b = 0;
  if (b >= bins) b = bins - 1;
  h.counts[b]++;
  h.n++;
  h.sum += x;
}

export function mergeHistogram(into: Histogram, add: Histogram): void {
  for (let b = 0; b < into.counts.length; b++) into.counts[b] += add.counts[b];
  into.under += add.under;
  into.over += add.over;
  into.n += add.n;
  into.sum += add.sum;
}

/** What one group looks like under the baseline and the new setting. */
export interface GroupDiff {
  step: number;
  questionId: string;
  n: number;
  labelBefore: string | null;
  labelAfter: string | null;
  classBefore: number;
  classAfter: number;
  flipped: boolean;
  gateBefore: number;
  gateAfter: number;
  /** Roll-outs whose GRPO advantage changes sign (−, 0, + as three signs). */
  signChanges: number;
  /** Mean |ΔR_i| over the group's roll-outs. */
  meanAbsRewardShift: number;
  /** Diagnostic: label ≡ logged ground truth (null when none is logged, or the operator did not run). */
  correctBefore: boolean | null;
  correctAfter: boolean | null;
  /** Set when the operator could not run under one of the settings. */
  unavailable?: string;
}

/**
 * Compares one group's results under two settings. `isCorrect(label)` decides equivalence with the
 * logged ground truth; pass null when the group has none (then no accuracy is counted).
 */
export function diffGroup(
  key: { step: number; questionId: string; n: number },
  before: OperatorResult | undefined,
  after: OperatorResult | undefined,
  isCorrect: ((label: string) => boolean) | null,
): GroupDiff {
  const correct = (r: OperatorResult | undefined): boolean | null => (!isCorrect || !r ? null : r.label === null ? false : isCorrect(r.label));
  const d: GroupDiff = {
    step: key.step,
    questionId: key.questionId,
    n: key.n,
    labelBefore: before?.label ?? null,
    labelAfter: after?.label ?? null,
    classBefore: before?.labelClass ?? -1,
    classAfter: after?.labelClass ?? -1,
    flipped: false,
    gateBefore: before?.gate ?? 0,
    gateAfter: after?.gate ?? 0,
    signChanges: 0,
    meanAbsRewardShift: 0,
    correctBefore: correct(before),
    correctAfter: correct(after),
  };
  if (!before || !after) {
    d.unavailable = !before && !after ? 'unavailable under both settings' : !before ? 'unavailable under the baseline' : 'unavailable under the new setting';
    return d;
  }
  d.flipped = before.labelClass !== after.labelClass;
  let shift = 0;
  for (let i = 0; i < key.n; i++) {
    if (signOf(before.advantages[i]) !== signOf(after.advantages[i])) d.signChanges++;
    shift += Math.abs(after.rewards[i] - before.rewards[i]);
  }
  d.meanAbsRewardShift = key.n ? shift / key.n : 0;
  return d;
}

export interface StepStats {
  step: number;
  groups: number;
  flips: number;
  signChanges: number;
  rollouts: number;
  gateBefore: number;
  gateAfter: number;
  withTruth: number;
  correctBefore: number;
  correctAfter: number;
}

/** Run-level sums of a comparison, mergeable across shards (worker threads). */
export interface ComparisonStats {
  groups: number;
  /** Groups where the operator could not run under one of the settings (not compared). */
  skipped: number;
  flips: number;
  rollouts: number;
  signChanges: number;
  steps: Record<number, StepStats>;
  rewardBefore: Histogram;
  rewardAfter: Histogram;
  rewardShift: Histogram;
  advantageBefore: Histogram;
  advantageAfter: Histogram;
  advantageShift: Histogram;
  gateBefore: Histogram;
  gateAfter: Histogram;
  gateShift: Histogram;
}

export const HIST_BINS = 40;

export function emptyComparison(): ComparisonStats {
  return {
    groups: 0,
    skipped: 0,
    flips: 0,
    rollouts: 0,
    signChanges: 0,
    steps: {},
    // Rewards are in [0, 1] for every operator except MS-TTRL's IPS scaling (up to N^(1−λ)).
    rewardBefore: histogram(0, 2, HIST_BINS),
    rewardAfter: histogram(0, 2, HIST_BINS),
    rewardShift: histogram(-2, 2, HIST_BINS),
    // |A_i| ≤ √(N−1) with the unbiased std: ±8 covers N = 64.
    advantageBefore: histogram(-8, 8, HIST_BINS),
    advantageAfter: histogram(-8, 8, HIST_BINS),
    advantageShift: histogram(-8, 8, HIST_BINS),
    gateBefore: histogram(0, 1, HIST_BINS),
    gateAfter: histogram(0, 1, HIST_BINS),
    gateShift: histogram(-1, 1, HIST_BINS),
  };
}

function stepOf(s: ComparisonStats, step: number): StepStats {
  return (s.steps[step] ??= { step, groups: 0, flips: 0, signChanges: 0, rollouts: 0, gateBefore: 0, gateAfter: 0, withTruth: 0, correctBefore: 0, correctAfter: 0 });
}

/** Adds one group (its diff and both results, for the distributions). */
export function addGroup(s: ComparisonStats, d: GroupDiff, before?: OperatorResult, after?: OperatorResult): void {
  if (d.unavailable || !before || !after) {
    s.skipped++;
    return;
  }
  s.groups++;
  s.rollouts += d.n;
  s.signChanges += d.signChanges;
  if (d.flipped) s.flips++;
  const st = stepOf(s, d.step);
  st.groups++;
  st.rollouts += d.n;
  st.signChanges += d.signChanges;
  if (d.flipped) st.flips++;
  st.gateBefore += d.gateBefore;
  st.gateAfter += d.gateAfter;
  if (d.correctBefore !== null && d.correctAfter !== null) {
    st.withTruth++;
    if (d.correctBefore) st.correctBefore++;
    if (d.correctAfter) st.correctAfter++;
  }
  for (let i = 0; i < d.n; i++) {
    addToHistogram(s.rewardBefore, before.rewards[i]);
    addToHistogram(s.rewardAfter, after.rewards[i]);
    addToHistogram(s.rewardShift, after.rewards[i] - before.rewards[i]);
    addToHistogram(s.advantageBefore, before.advantages[i]);
    addToHistogram(s.advantageAfter, after.advantages[i]);
    addToHistogram(s.advantageShift, after.advantages[i] - before.advantages[i]);
  }
  addToHistogram(s.gateBefore, d.gateBefore);
  addToHistogram(s.gateAfter, d.gateAfter);
  addToHistogram(s.gateShift, d.gateAfter - d.gateBefore);
}

export function mergeComparison(into: ComparisonStats, add: ComparisonStats): void {
  into.groups += add.groups;
  into.skipped += add.skipped;
  into.flips += add.flips;
  into.rollouts += add.rollouts;
  into.signChanges += add.signChanges;
  for (const st of Object.values(add.steps)) {
    const t = stepOf(into, st.step);
    t.groups += st.groups;
    t.flips += st.flips;
    t.signChanges += st.signChanges;
    t.rollouts += st.rollouts;
    t.gateBefore += st.gateBefore;
    t.gateAfter += st.gateAfter;
    t.withTruth += st.withTruth;
    t.correctBefore += st.correctBefore;
    t.correctAfter += st.correctAfter;
  }
  for (const k of ['rewardBefore', 'rewardAfter', 'rewardShift', 'advantageBefore', 'advantageAfter', 'advantageShift', 'gateBefore', 'gateAfter', 'gateShift'] as const) mergeHistogram(into[k], add[k]);
}

export interface StepSummary {
  step: number;
  groups: number;
  flips: number;
  signChanges: number;
  meanGateBefore: number;
  meanGateAfter: number;
  /** null when no group of the step has logged ground truth. */
  accuracyBefore: number | null;
  accuracyAfter: number | null;
  withTruth: number;
}

/** Per-step read-outs in step order. */
export function stepSummaries(s: ComparisonStats): StepSummary[] {
  return Object.values(s.steps)
    .sort((a, b) => a.step - b.step)
    .map((st) => ({
      step: st.step,
      groups: st.groups,
      flips: st.flips,
      signChanges: st.signChanges,
      meanGateBefore: st.groups ? st.gateBefore / st.groups : 0,
      meanGateAfter: st.groups ? st.gateAfter / st.groups : 0,
      accuracyBefore: st.withTruth ? st.correctBefore / st.withTruth : null,
      accuracyAfter: st.withTruth ? st.correctAfter / st.withTruth : null,
      withTruth: st.withTruth,
    }));
}

/** Run-wide accuracy from the per-step sums (null when no group has logged ground truth). */
export function runAccuracy(s: ComparisonStats): { before: number | null; after: number | null; withTruth: number } {
  let w = 0;
  let b = 0;
  let a = 0;
  for (const st of Object.values(s.steps)) {
    w += st.withTruth;
    b += st.correctBefore;
    a += st.correctAfter;
  }
  return { before: w ? b / w : null, after: w ? a / w : null, withTruth: w };
}

// ---- operator agreement ----------------------------------------------------------------------

/** Per group: each operator's label class (-1: no label; undefined: the operator did not run). */
export type LabelRow = Partial<Record<OperatorId, number>>;

export interface AgreementMatrix {
  operators: OperatorId[];
  /** both[a][b]: groups where both a and b ran; agree[a][b]: of those, same label class. */
  both: number[][];
  agree: number[][];
  /** Per operator, against logged ground truth: groups with truth where it ran, and correct ones. */
  withTruth: number[];
  correct: number[];
}

export function emptyAgreement(operators: readonly OperatorId[]): AgreementMatrix {
  const k = operators.length;
  const sq = () => Array.from({ length: k }, () => new Array(k).fill(0));
  return { operators: [...operators], both: sq(), agree: sq(), withTruth: new Array(k).fill(0), correct: new Array(k).fill(0) };
}

/**
 * Adds one group: `labels` its operators' label classes; `correct[op]` whether op's label matches
 * the logged ground truth (omit when the group has none).
 */
export function addAgreement(m: AgreementMatrix, labels: LabelRow, correct?: Partial<Record<OperatorId, boolean>>): void {
  const ops = m.operators;
  for (let a = 0; a < ops.length; a++) {
    const la = labels[ops[a]];
    if (la === undefined) continue;
    for (let b = 0; b < ops.length; b++) {
      const lb = labels[ops[b]];
      if (lb === undefined) continue;
      m.both[a][b]++;
      if (la === lb) m.agree[a][b]++;
    }
    if (correct && correct[ops[a]] !== undefined) {
      m.withTruth[a]++;
      if (correct[ops[a]]) m.correct[a]++;
    }
  }
}

export function mergeAgreement(into: AgreementMatrix, add: AgreementMatrix): void {
  for (let a = 0; a < into.operators.length; a++) {
    for (let b = 0; b < into.operators.length; b++) {
      into.both[a][b] += add.both[a][b];
      into.agree[a][b] += add.agree[a][b];
    }
    into.withTruth[a] += add.withTruth[a];
    into.correct[a] += add.correct[a];
  }
}

/** agree/both per cell (null where the two never ran on the same group). */
export function agreementRates(m: AgreementMatrix): (number | null)[][] {
  return m.both.map((row, a) => row.map((n, b) => (n ? m.agree[a][b] / n : null)));
}

// ---- export ----------------------------------------------------------------------------------

export const DIFF_COLUMNS = ['step', 'question_id', 'n', 'label_before', 'label_after', 'flipped', 'gate_before', 'gate_after', 'sign_changes', 'mean_abs_reward_shift', 'correct_before', 'correct_after', 'unavailable'] as const;

export function diffToRecord(d: GroupDiff): Record<(typeof DIFF_COLUMNS)[number], string | number | boolean | null> {
  return {
    step: d.step,
    question_id: d.questionId,
    n: d.n,
    label_before: d.labelBefore,
    label_after: d.labelAfter,
    flipped: d.flipped,
    gate_before: d.gateBefore,
    gate_after: d.gateAfter,
    sign_changes: d.signChanges,
    mean_abs_reward_shift: d.meanAbsRewardShift,
    correct_before: d.correctBefore,
    correct_after: d.correctAfter,
    unavailable: d.unavailable ?? null,
  };
}

/**
 * RFC 4180 field: quoted when it holds a comma, semicolon, quote, CR or LF. Spreadsheet formula
 * injection: a cell that starts with = + - @ (or a tab or CR) gets a leading '; so does each part
 * after a ';', which spreadsheets in locales with ';' as the list separator read as a cell of its
 * own (the field is quoted too, so a spreadsheet that honours quotes keeps it whole).
 */
export function csvField(v: string | number | boolean | null): string {
  if (v === null) return '';
  let s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : String(v);
  if (typeof v === 'string') s = s.split(';').map((part, i) => (i === 0 ? /^[=+\-@\t\r]/ : /^\s*[=+\-@\t\r]/).test(part) ? `'${part}` : part).join(';');
  return /[",;\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function diffsToCsv(diffs: readonly GroupDiff[]): string {
  const lines = [DIFF_COLUMNS.join(',')];
  for (const d of diffs) {
    const r = diffToRecord(d);
    lines.push(DIFF_COLUMNS.map((c) => csvField(r[c])).join(','));
  }
  return lines.join('\n') + '\n';
}

export function diffsToJsonl(diffs: readonly GroupDiff[], header?: Record<string, unknown>): string {
  const lines = header ? [JSON.stringify({ kind: 'rescore', ...header })] : [];
  for (const d of diffs) lines.push(JSON.stringify({ kind: 'group', ...diffToRecord(d) }));
  return lines.join('\n') + '\n';
}
