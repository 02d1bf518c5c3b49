// Text formatting for the explorer, the status bar and roll-out documents. Pure: no 'vscode'.
import type { OperatorId, QuestionView, Regime } from '../protocol/messages';
import type { QuestionSummary } from './model/scoring';
import { OPERATOR_LABELS } from './slider-params';
import { safeText } from '../logs/safe-text';

export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  if (x !== 0 && Math.abs(x) < 10 ** -digits) return x.toExponential(1);
  const s = x.toFixed(digits);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

export const REGIME_LABELS: Record<Regime, string> = {
  saturated: 'saturated',
  contested: 'contested',
  'competence-floor': 'competence floor',
  empty: 'empty',
};

/** The explorer's one-line description of a question. */
export function questionDescription(s: QuestionSummary | undefined): string {
  if (!s) return 'scoring…';
  const parts = [REGIME_LABELS[s.regime], `gate ${fmt(s.gate, 2)}`];
  if (s.overturn) parts.push('CoRE overturns');
  if (s.mismatches > 0) parts.push(`≠ reward ×${s.mismatches}`);
  if (s.digest.plurality) parts.push('degenerate plurality');
  return parts.join(' · ');
}

export function questionTooltip(questionId: string, step: number, s: QuestionSummary | undefined, configured: OperatorId): string {
  const lines = [`${questionId} — step ${step}`];
  if (!s) return lines.concat('scoring…').join('\n');
  lines.push(`N = ${s.n}, regime: ${REGIME_LABELS[s.regime]}`);
  lines.push(`majority: ${show(s.majorityLabel)}   CoRE: ${show(s.label)}${s.overturn ? '  (overturns the vote)' : ''}`);
  lines.push(`CoRE gate w_q = ${fmt(s.gate, 4)}`);
  if (s.mismatches > 0) lines.push(`${s.mismatches} roll-out(s) whose logged training reward differs from ${OPERATOR_LABELS[configured]}'s (a reward bug?)`);
  if (s.digest.plurality)
    lines.push(
      `degenerate plurality: the vote's class is mostly empty, truncated or repetition-collapsed roll-outs${s.digest.rescuedBy.length ? ` (${s.digest.rescuedBy.map((o) => OPERATOR_LABELS[o]).join(', ')} pick another answer)` : ''}`,
    );
  return lines.join('\n');
}

/** A pseudo-label as shown to the user: no label is "(none)", the empty `\boxed{}` class "(empty)". */
export function show(label: string | null): string {
  return label === null ? '(none)' : label === '' ? '(empty)' : safeText(label);
}

/** A re-score's flip, one line: "step 3: 12 → (empty)". */
export function flipDescription(f: { step: number; before: string | null; after: string | null }): string {
  return `step ${f.step}: ${show(f.before)} → ${show(f.after)}`;
}

export interface StepStats {
  step: number | null;
  groups: number;
  overturns: number;
  meanGate: number | null;
  scored: number;
}

export function stepStats(step: number | null, summaries: (QuestionSummary | undefined)[]): StepStats {
  let overturns = 0;
  let gate = 0;
  let scored = 0;
  for (const s of summaries) {
    if (!s) continue;
    scored++;
    gate += s.gate;
    if (s.overturn) overturns++;
  }
  return { step, groups: summaries.length, overturns, meanGate: scored ? gate / scored : null, scored };
}

export function statusText(label: string, st: StepStats): string {
  if (st.step === null) return `$(graph) ${label}: no groups yet`;
  return `$(graph) ${label} · step ${st.step} · ${st.groups} groups · ${st.overturns} overturns · gate ${fmt(st.meanGate, 2)}`;
}

/** The header of a roll-out document (plain text, '#'-prefixed; the response follows it). */
/**
 * A value from a log in one header line, through the one visible-controls mapping (safeText): line
 * breaks (CR, LF, U+0085, U+2028, U+2029) and other control characters are shown as visible
 * symbols, so a question id or answer cannot start a line of its own (a forged "# log:" line
 * would become a link), and bidi controls as `<U+202E>`, so "\u202e12" is not shown as "21".
 */
export function oneLine(s: string): string {
  return safeText(s);
}

export function rolloutHeader(view: QuestionView, index: number, file: string | null, line: number | null): string[] {
  const r = view.rollouts[index];
  const cls = r.classIndex >= 0 ? view.classes[r.classIndex] : null;
  const rewards = view.operators
    .filter((o) => o.available && r.rewards[o.operator] !== undefined)
    .map((o) => `${OPERATOR_LABELS[o.operator]} ${fmt(r.rewards[o.operator], 3)}`)
    .join(' · ');
  const lines = [
    `# Consensus Lens — roll-out ${index}${r.sampleIdx !== null ? ` (sample_idx ${r.sampleIdx})` : ''} of ${view.n}`,
    `# run: ${oneLine(view.runLabel)}   step: ${view.key.step}   question: ${oneLine(view.key.questionId)}`,
    `# answer: ${r.answer === null ? '(no answer)' : oneLine(show(r.answer))}${cls ? `   class ${cls.index + 1} of ${view.classes.length} (${cls.size} roll-outs)` : ''}`,
    `# confidence: ${fmt(r.confidence, 4)}   weight: ${fmt(r.weight, 4)}   x*: ${fmt(r.mass, 4)}${r.inSupport ? ' (dominant set)' : ''}`,
    `# rewards: ${rewards || '—'}`,
    `# advantage (${OPERATOR_LABELS[view.configuredOperator]}): ${fmt(r.advantages[view.configuredOperator], 4)}   logged reward: ${fmt(r.loggedReward, 4)}${r.mismatch ? '   ≠ MISMATCH' : ''}`,
  ];
  if (view.groundTruth !== null) lines.push(`# ground truth (diagnostic only): ${(view.groundTruthForms ?? [view.groundTruth]).map(oneLine).join(' or ')}`);
  if (file) lines.push(`# log: ${oneLine(file)}${line ? `:${line}` : ''}`);
  lines.push('# ' + '─'.repeat(60));
  return lines;
}

/**
 * Where the extracted answer sits in the response: the last occurrence of `\boxed{answer}` (or of
 * the answer itself), as [start, end) offsets into `text`.
 */
export function answerSpan(text: string, answer: string | null): [number, number] | null {
  if (answer === null || answer === '') {
    const b = text.lastIndexOf('\\boxed{}');
    return answer === '' && b >= 0 ? [b, b + 8] : null;
  }
  for (const needle of [`\\boxed{${answer}}`, `\\fbox{${answer}}`, answer]) {
    const i = text.lastIndexOf(needle);
    if (i >= 0) return [i, i + needle.length];
  }
  return null;
}
