// Consensus against confidence, side by side: each roll-out's reward and advantage under one
// consensus operator and one confidence reward the user picks, the roll-outs they push in opposite
// directions marked. The numbers are the host's (the view's rewards and advantages); answers go
// into the DOM as text.
import { OPERATOR_FAMILIES, OPERATOR_LABELS, type OperatorFamily, type OperatorId, type QuestionView } from '../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../dom';
import { availableOf, oppositeSigns, pickPair } from './sign-agreement';

/** The user's picks, kept across questions while the panel lives. */
const picked: Partial<Record<OperatorFamily, OperatorId>> = {};

export function renderFamilyCompare(box: HTMLElement, v: QuestionView, onOpen: (index: number) => void): void {
  clear(box);
  box.append(h('h3', {}, 'Consensus vs confidence'));
  const { consensus: c, confidence: f } = pickPair(v, picked);
  if (!c || !f) {
    // Why each confidence reward could not run (the engine's note: what the log does not hold).
    const why = v.operators
      .filter((o) => OPERATOR_FAMILIES[o.operator] === 'confidence')
      .map((o) => `${OPERATOR_LABELS[o.operator]}: ${o.note ?? 'unavailable'}`)
      .join(' · ');
    box.append(h('p', { class: 'muted small', id: 'family-compare-none' }, !f ? `No confidence reward ran on this question (${why}).` : 'No consensus operator ran on this question.'));
    return;
  }
  const select = (family: OperatorFamily, value: OperatorId): HTMLSelectElement => {
    const el = h('select', { id: `family-pick-${family}`, 'aria-label': `${family} operator` });
    for (const o of availableOf(v, family)) el.append(h('option', { value: o, selected: o === value }, OPERATOR_LABELS[o]));
    el.addEventListener('change', () => {
      picked[family] = el.value as OperatorId;
      renderFamilyCompare(box, v, onOpen);
    });
    return el;
  };
  const opposite = v.rollouts.filter((r) => oppositeSigns(r.advantages[c], r.advantages[f]));
  const notes = [c, f].flatMap((o) => {
    const n = v.operators.find((x) => x.operator === o)?.note;
    return n ? [`${OPERATOR_LABELS[o]}: ${n}`] : [];
  });
  box.append(
    h('div', { class: 'family-picks' }, h('label', {}, 'consensus ', select('consensus', c)), h('label', {}, 'confidence ', select('confidence', f))),
    h(
      'p',
      { class: 'small', id: 'family-disagree-count', 'data-count': opposite.length },
      opposite.length
        ? `${opposite.length} of ${v.n} roll-outs are pushed in opposite directions (advantages of opposite sign, marked ⇅).`
        : `No roll-out is pushed in opposite directions by ${OPERATOR_LABELS[c]} and ${OPERATOR_LABELS[f]}.`,
    ),
    ...notes.map((n) => h('p', { class: 'muted small family-note' }, n)),
  );
  const table = h('table', { id: 'family-compare-table', class: 'grid', 'data-consensus': c, 'data-confidence': f, 'aria-label': 'Consensus and confidence rewards per roll-out' });
  const cols = ['#', 'answer', `R ${OPERATOR_LABELS[c]}`, `A ${OPERATOR_LABELS[c]}`, `R ${OPERATOR_LABELS[f]}`, `A ${OPERATOR_LABELS[f]}`, 'sign'];
  table.append(h('thead', {}, h('tr', {}, ...cols.map((t) => h('th', { scope: 'col' }, t)))));
  const body = h('tbody');
  for (const r of v.rollouts) {
    const apart = oppositeSigns(r.advantages[c], r.advantages[f]);
    const num = (id: string, x: number | undefined) => h('td', { class: 'num', 'data-col': id, 'data-value': x ?? '' }, fmt(x ?? null, 3));
    const tr = h(
      'tr',
      { 'data-index': r.index, class: apart ? 'sign-disagree' : '', 'data-disagree': apart ? 'true' : 'false', title: 'Click: open the text' },
      h('td', { class: 'num' }, String(r.index)),
      h('td', { class: 'answer' }, r.answer === null ? '(no answer)' : showLabel(r.answer)),
      num('reward-consensus', r.rewards[c]),
      num('advantage-consensus', r.advantages[c]),
      num('reward-confidence', r.rewards[f]),
      num('advantage-confidence', r.advantages[f]),
      h('td', { 'data-col': 'sign' }, apart ? '⇅ opposite' : ''),
    );
    tr.addEventListener('click', () => onOpen(r.index));
    body.append(tr);
  }
  table.append(body);
  box.append(h('div', { class: 'scroll' }, table));
}
