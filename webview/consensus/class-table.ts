// The answer classes: size, equilibrium mass, mean affinity, which operators label each.
import { OPERATOR_LABELS } from '../../src/protocol/messages';
import type { OperatorId, QuestionView } from '../../src/protocol/messages';
import { h, clear, fmt } from '../dom';

const OP_LABELS: Record<OperatorId, string> = OPERATOR_LABELS;

export function renderClasses(classTable: HTMLTableElement, v: QuestionView): void {
  clear(classTable);
  classTable.append(h('thead', {}, h('tr', {}, ...['class', 'answer', 'size', 'mass Σx*', 'mean affinity', 'label of', 'ground truth'].map((t) => h('th', { scope: 'col' }, t)))));
  const body = h('tbody');
  for (const c of v.classes) {
    body.append(
      h(
        'tr',
        { 'data-class': c.index },
        h('td', {}, String(c.index + 1)),
        h('td', { class: 'answer' }, h('code', {}, c.answer === '' ? '(empty)' : c.answer)),
        h('td', { 'data-col': 'size', 'data-value': c.size }, String(c.size)),
        h('td', { 'data-col': 'mass', 'data-value': c.mass }, fmt(c.mass, 4)),
        h('td', { 'data-col': 'affinity', 'data-value': c.meanAffinity }, c.size > 1 ? fmt(c.meanAffinity, 4) : '—'),
        h('td', {}, c.labelOf.map((o) => OP_LABELS[o]).join(', ')),
        h('td', { class: 'muted' }, c.matchesGroundTruth === null ? '' : c.matchesGroundTruth ? '✓ (diagnostic)' : ''),
      ),
    );
  }
  classTable.append(body);
}
