// Consensus against confidence, per step (the family rows): for one operator of each family, picked
// here, the pseudo-label accuracy (consensus) or top-reward accuracy (confidence) against logged
// ground truth, the share of groups whose GRPO advantage is non-zero, and the share of questions
// on which the two pick the same answer class. Every number is the host's (DashStep.accuracy,
// .signal, .familyAgreement); this module only chooses which to show.
import { formatAccuracy } from '../../../src/engine/browser';
import type { DashModel, DashStep } from '../../../src/protocol/dashboard-messages';
import { OPERATOR_FAMILIES, OPERATOR_LABELS, type OperatorFamily, type OperatorId } from '../../../src/protocol/messages';
import { h, clear, fmt } from '../../dom';
import { cssVar, opLine } from '../chart-kit';
import type { DashContext } from '../dash-context';

/** The operators the user picked (kept while the page lives: a new model redraws with them). */
const picked: Partial<Record<OperatorFamily, OperatorId>> = {};

/** The operators of a family that ran on some group of the run (they have a learning-signal share). */
export function familyOperators(model: DashModel, operators: readonly OperatorId[], family: OperatorFamily): OperatorId[] {
  return operators.filter((o) => OPERATOR_FAMILIES[o] === family && model.steps.some((s) => s.signal?.[o] !== undefined));
}

function pick(family: OperatorFamily, present: OperatorId[], preferred?: OperatorId): OperatorId | undefined {
  const p = picked[family];
  if (p && present.includes(p)) return p;
  return preferred && present.includes(preferred) ? preferred : present[0];
}

interface Row {
  family: OperatorFamily | 'both';
  row: 'accuracy' | 'signal' | 'agreement';
  op: string;
  title: string;
  value(s: DashStep): number | null;
  text(s: DashStep): string;
}

export function renderFamilyRows(body: HTMLElement, model: DashModel, ctx: DashContext): void {
  clear(body);
  const consensusOps = familyOperators(model, ctx.operators, 'consensus');
  const confidenceOps = familyOperators(model, ctx.operators, 'confidence');
  const c = pick('consensus', consensusOps, OPERATOR_FAMILIES[ctx.configured] === 'consensus' ? ctx.configured : 'majority');
  const f = pick('confidence', confidenceOps, OPERATOR_FAMILIES[ctx.configured] === 'confidence' ? ctx.configured : undefined);
  if (!c || !f) {
    body.append(
      h(
        'p',
        { class: 'muted', id: 'no-confidence' },
        !f ? 'No confidence reward ran on this run: it needs a logged self-certainty, token entropy or token log-probs per roll-out (docs/log-formats.md).' : 'No consensus operator ran on this run.',
      ),
    );
    return;
  }
  const select = (family: OperatorFamily, ops: OperatorId[], value: OperatorId): HTMLSelectElement => {
    const el = h('select', { id: `family-${family}`, 'aria-label': `${family} operator` });
    for (const o of ops) el.append(h('option', { value: o, selected: o === value }, OPERATOR_LABELS[o]));
    el.addEventListener('change', () => {
      picked[family] = el.value as OperatorId;
      renderFamilyRows(body, model, ctx);
    });
    return el;
  };
  body.append(h('div', { class: 'row' }, h('label', {}, 'consensus ', select('consensus', consensusOps, c)), h('label', {}, 'confidence ', select('confidence', confidenceOps, f))));

  const acc = (o: OperatorId) => (s: DashStep) => s.accuracy[o] ?? null;
  const accText = (o: OperatorId) => (s: DashStep) => formatAccuracy(s.accuracy[o], s.accuracyGroups[o], s.withTruth, '—');
  const share = (x: number | null | undefined): string => (x === null || x === undefined ? '—' : `${fmt(100 * x, 1)}%`);
  const rows: Row[] = [];
  if (model.hasTruth) rows.push({ family: 'consensus', row: 'accuracy', op: c, title: `${OPERATOR_LABELS[c]}: pseudo-label accuracy`, value: acc(c), text: accText(c) });
  rows.push({ family: 'consensus', row: 'signal', op: c, title: `${OPERATOR_LABELS[c]}: groups with signal`, value: (s) => s.signal[c] ?? null, text: (s) => share(s.signal[c]) });
  if (model.hasTruth) rows.push({ family: 'confidence', row: 'accuracy', op: f, title: `${OPERATOR_LABELS[f]}: top-reward accuracy`, value: acc(f), text: accText(f) });
  rows.push({ family: 'confidence', row: 'signal', op: f, title: `${OPERATOR_LABELS[f]}: groups with signal`, value: (s) => s.signal[f] ?? null, text: (s) => share(s.signal[f]) });
  const agree = (s: DashStep) => s.familyAgreement[c]?.[f] ?? null;
  rows.push({ family: 'both', row: 'agreement', op: `${c}|${f}`, title: `${OPERATOR_LABELS[c]} and ${OPERATOR_LABELS[f]}: same answer`, value: agree, text: (s) => share(agree(s)) });

  const labels = model.steps.map((s) => String(s.step));
  const datasets = rows.map((r) => {
    const line =
      r.family === 'both' ? { borderColor: cssVar('descriptionForeground'), backgroundColor: cssVar('descriptionForeground'), borderDash: [5, 4], pointRadius: 3 } : opLine(r.op as OperatorId);
    // Accuracy solid, signal thinner: the two read-outs of one operator share its colour.
    return { label: r.title, data: model.steps.map(r.value), ...line, borderWidth: r.row === 'signal' ? 1.2 : 2.2, spanGaps: true };
  });
  const grid = h('div', { class: 'grid2' });
  body.append(grid);
  ctx.kit.chart('families', grid, {
    type: 'line',
    data: { labels, datasets },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: `${OPERATOR_LABELS[c]} (consensus) and ${OPERATOR_LABELS[f]} (confidence) per step` } },
      scales: { y: { min: 0, max: 1, title: { display: true, text: 'share' } }, x: { title: { display: true, text: 'step' } } },
    },
  });

  const table = h(
    'table',
    { class: 'grid', id: 'family-table', 'data-consensus': c, 'data-confidence': f },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'family'), h('th', { scope: 'col' }, 'read-out'), ...labels.map((l) => h('th', { scope: 'col', class: 'num' }, `step ${l}`)))),
  );
  const tb = h('tbody');
  for (const r of rows)
    tb.append(
      h(
        'tr',
        { id: `family-row-${r.family}-${r.row}`, 'data-family': r.family, 'data-row': r.row, 'data-op': r.op },
        h('th', { scope: 'row' }, r.family === 'both' ? 'agreement' : r.family),
        h('td', {}, r.title),
        ...model.steps.map((s) => {
          const v = r.value(s);
          return h('td', { class: 'num', 'data-step': s.step, 'data-value': v === null ? '' : v }, r.text(s));
        }),
      ),
    );
  table.append(tb);
  body.append(h('div', { class: 'scroll' }, table));
}
