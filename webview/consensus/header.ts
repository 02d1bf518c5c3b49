// The question's header (id, run, regime, overturn and mismatch badges, prompt, ground truth), the
// strip of every operator's pseudo-label and the consensus read-outs (gate, regime, recovery).
import { OPERATOR_LABELS } from '../../src/protocol/messages';
import type { OperatorId, QuestionView } from '../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../dom';

const OP_LABELS: Record<OperatorId, string> = OPERATOR_LABELS;
export const REGIME_LABELS: Record<string, string> = { saturated: 'saturated', contested: 'contested', 'competence-floor': 'competence floor', empty: 'empty' };

function badge(text: string, cls: string, id?: string): HTMLElement {
  return h('span', { class: `badge ${cls}`, id }, text);
}

export function renderHeader(header: HTMLElement, v: QuestionView): void {
  clear(header);
  header.append(
    h('h2', { id: 'question-id' }, v.key.questionId),
    h(
      'div',
      { class: 'meta' },
      h('span', {}, `${v.runLabel} · step ${v.key.step} · N = ${v.n}`),
      badge(REGIME_LABELS[v.regime] ?? v.regime, `regime-${v.regime}`, 'regime'),
      v.overturn ? badge('CoRE overturns the vote', 'overturn', 'overturn') : badge('CoRE agrees with the vote', 'agree', 'overturn'),
      v.mismatches > 0 ? badge(`${v.mismatches} reward mismatch${v.mismatches > 1 ? 'es' : ''} vs ${OP_LABELS[v.configuredOperator]}`, 'mismatch', 'mismatches') : null,
      v.confidence === 'missing' ? badge('no confidence logged: CoRE runs as EC', 'muted-badge') : null,
      v.health?.degeneratePlurality
        ? badge(
            `degenerate plurality: the vote's class is mostly empty, truncated or repetition-collapsed roll-outs${v.health.rescuedBy.length ? ` (${v.health.rescuedBy.map((o) => OP_LABELS[o]).join(', ')} pick another answer)` : ''}`,
            'degenerate',
            'degenerate-plurality',
          )
        : null,
    ),
  );
  if (v.prompt) header.append(h('p', { class: 'prompt', id: 'prompt' }, v.prompt.length > 600 ? v.prompt.slice(0, 599) + '…' : v.prompt));
  if (v.groundTruth !== null)
    header.append(
      h(
        'p',
        { class: 'muted small', id: 'ground-truth' },
        'Ground truth (diagnostic only, never an input): ',
        ...(v.groundTruthForms?.length ? v.groundTruthForms.flatMap((f, i) => [...(i ? [' or '] : []), h('code', {}, f)]) : [h('code', {}, v.groundTruth)]),
      ),
    );
}

export function renderStrip(strip: HTMLElement, v: QuestionView): void {
  clear(strip);
  for (const o of v.operators) {
    const correct = o.correct === null ? null : o.correct ? ' ✓' : ' ✗';
    strip.append(
      h(
        'div',
        {
          class: `op ${o.available ? '' : 'unavailable'} ${o.flipsMajority ? 'flip' : ''} ${o.operator === v.configuredOperator ? 'configured' : ''}`,
          'data-op': o.operator,
          title: o.note ?? (o.available ? '' : 'unavailable'),
        },
        h('div', { class: 'op-name' }, OP_LABELS[o.operator], o.operator === v.configuredOperator ? h('span', { class: 'muted small' }, ' (configured)') : null),
        h('div', { class: 'label', 'data-value': o.label ?? '' }, o.available ? showLabel(o.label) : 'n/a'),
        h(
          'div',
          { class: 'muted small' },
          o.available ? `gate ${fmt(o.gate, 3)}${o.flipsMajority ? ' · flips the vote' : ''}` : (o.note ?? 'unavailable'),
          correct ? h('span', { class: o.correct ? 'ok' : 'bad', title: 'against the logged ground truth (diagnostic)' }, correct) : null,
        ),
      ),
    );
  }
}

export function renderTheory(theory: HTMLElement, v: QuestionView): void {
  clear(theory);
  const r = v.recovery;
  const rows: [string, string, string, string?][] = [
    ['gate', 'CoRE gate w_q = x*ᵀ A x*', fmt(v.gate, 4), String(v.gate)],
    ['regime', 'regime', REGIME_LABELS[v.regime] ?? v.regime],
    ['iterations', 'replicator iterations', v.iterations === null ? '—' : String(v.iterations)],
  ];
  if (r) {
    rows.push(['threshold', `recovery threshold (w̄_w/w̄_*)·(m−1)/(n*−1)·c_w, m=${r.m}, n*=${r.nStar}`, fmt(r.threshold, 4), r.threshold === null ? '' : String(r.threshold)]);
    rows.push(['cstar', 'runner-up coherence c*', fmt(r.cStar, 4), String(r.cStar)]);
    rows.push(['margin', 'margin c* − threshold (> 0: the runner-up can win)', fmt(r.margin, 4), r.margin === null ? '' : String(r.margin)]);
  }
  theory.append(
    h('h3', {}, 'Consensus'),
    h('dl', { class: 'readouts' }, ...rows.flatMap(([id, label, text, value]) => [h('dt', {}, label), h('dd', { id: `readout-${id}`, 'data-value': value ?? text }, text)])),
  );
}
