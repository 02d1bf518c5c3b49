// The roll-out table: one row per roll-out (answer, confidence, token curve, CoRE weight and mass,
// every operator's reward, the configured operator's advantage, logged reward and advantage,
// health flags, the text's preview as text), sortable by any column, keyboard-navigable.
import { OPERATOR_LABELS } from '../../src/protocol/messages';
import type { OperatorId, QuestionView, RolloutRow, TokenCurve } from '../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../dom';
import { lowestPoint, tokenSparkline } from '../sparkline';
import { panel, post, sameKey } from './panel-state';

const OP_LABELS: Record<OperatorId, string> = OPERATOR_LABELS;
const sort = { col: 'index', dir: 1 };

interface Column {
  id: string;
  title: string;
  tip?: string;
  value(r: RolloutRow): number | string | null;
  text(r: RolloutRow): string;
}

const FLAG_LABELS: Record<string, string> = { empty: 'empty', noAnswer: 'no answer', truncated: 'truncated', repetitive: 'repetitive', nearDuplicate: 'near-dup', unformatted: 'unformatted' };
const isDegenerateRow = (r: RolloutRow): boolean => (r.flags ?? []).some((f) => f === 'empty' || f === 'truncated' || f === 'repetitive');

export function columns(v: QuestionView): Column[] {
  const ops = v.operators.filter((o) => o.available).map((o) => o.operator);
  const cfg = v.configuredOperator;
  return [
    { id: 'index', title: '#', value: (r) => r.index, text: (r) => String(r.index) },
    { id: 'answer', title: 'answer', value: (r) => r.answer ?? '', text: (r) => (r.answer === null ? '(no answer)' : showLabel(r.answer)) },
    { id: 'confidence', title: 'conf. c', tip: 'mean token log-prob', value: (r) => r.confidence, text: (r) => fmt(r.confidence, 3) },
    ...(curveOf(v, -1) !== undefined
      ? [
          {
            id: 'curve',
            title: 'by position',
            tip: 'token probability by position, certain at the top (sorts by the least confident stretch)',
            value: (r: RolloutRow) => lowestPoint(curveOf(v, r.index)?.curve ?? [])?.logprob ?? null,
            text: () => '',
          },
        ]
      : []),
    { id: 'weight', title: 'weight w', tip: 'CoRE confidence weight exp((c − max c)/τ)', value: (r) => r.weight, text: (r) => fmt(r.weight, 3) },
    { id: 'mass', title: 'x*', tip: 'equilibrium mass; ● dominant set', value: (r) => r.mass, text: (r) => `${fmt(r.mass, 4)}${r.inSupport ? ' ●' : ''}` },
    ...ops.map((op) => ({
      id: `reward-${op}`,
      title: `R ${OP_LABELS[op]}`,
      tip: `reward under ${OP_LABELS[op]}`,
      value: (r: RolloutRow) => r.rewards[op] ?? null,
      text: (r: RolloutRow) => fmt(r.rewards[op], 3),
    })),
    {
      id: 'advantage',
      title: `A ${OP_LABELS[cfg]}`,
      tip: `GRPO advantage under ${OP_LABELS[cfg]} (the configured operator)`,
      value: (r) => r.advantages[cfg] ?? null,
      text: (r) => fmt(r.advantages[cfg], 3),
    },
    ...(v.rollouts.some((r) => r.loggedAdvantage !== undefined && r.loggedAdvantage !== null)
      ? [
          {
            id: 'logged-adv',
            title: 'logged A',
            tip: 'the advantage the trainer logged: what trained (A above is recomputed with its formula)',
            value: (r: RolloutRow) => r.loggedAdvantage ?? null,
            text: (r: RolloutRow) => fmt(r.loggedAdvantage ?? null, 3),
          },
        ]
      : []),
    { id: 'logged', title: 'logged R', tip: 'the reward the training loop logged', value: (r) => r.loggedReward, text: (r) => fmt(r.loggedReward, 3) },
    { id: 'mismatch', title: '≠', tip: `logged reward differs from ${OP_LABELS[cfg]}'s by more than 1e-6`, value: (r) => (r.mismatch ? 1 : 0), text: (r) => (r.mismatch ? '≠' : '') },
    {
      id: 'flags',
      title: 'health',
      tip: 'run-health flags: empty box, no answer, truncated, repetition-collapsed, near-duplicate, unformatted (answer found without a box)',
      value: (r) => (r.flags ?? []).join(' '),
      text: (r) => (r.flags ?? []).map((f) => FLAG_LABELS[f] ?? f).join(' · '),
    },
    { id: 'preview', title: 'text', value: (r) => r.preview, text: (r) => r.preview },
  ];
}

/** Roll-out `index`'s token curve for this view; index -1: whether any roll-out has one (else undefined). */
function curveOf(v: QuestionView, index: number): TokenCurve | undefined {
  const curves = panel.curves;
  if (!curves || !sameKey(curves.key, v.key)) return undefined;
  if (index < 0) return [...curves.rows.values()].find((c) => c.curve.length > 0);
  const c = curves.rows.get(index);
  return c?.curve.length ? c : undefined;
}

export function renderTokenNote(tokenNote: HTMLElement): void {
  const { view, curves } = panel;
  const note = view && curves && sameKey(curves.key, view.key) ? curves.note : null;
  tokenNote.textContent = note ?? '';
  tokenNote.hidden = !note;
}

function sortedRows(v: QuestionView, cols: Column[]): RolloutRow[] {
  const col = cols.find((c) => c.id === sort.col) ?? cols[0];
  return [...v.rollouts].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    if (x === y) return a.index - b.index;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sort.dir;
  });
}

export function renderRollouts(rolloutTable: HTMLTableElement, v: QuestionView, onSelect: (index: number, focus: boolean) => void): void {
  const selected = panel.selected;
  clear(rolloutTable);
  const cols = columns(v);
  const headRow = h('tr');
  for (const c of cols) {
    const btn = h('button', { class: 'sort', title: c.tip ?? `sort by ${c.title}`, 'data-col': c.id }, c.title, sort.col === c.id ? (sort.dir > 0 ? ' ▲' : ' ▼') : '');
    btn.addEventListener('click', () => {
      if (sort.col === c.id) sort.dir = -sort.dir;
      else {
        sort.col = c.id;
        sort.dir = c.id === 'index' || c.id === 'answer' ? 1 : -1;
      }
      if (panel.view) renderRollouts(rolloutTable, panel.view, onSelect);
    });
    headRow.append(h('th', { scope: 'col', 'aria-sort': sort.col === c.id ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none' }, btn));
  }
  rolloutTable.append(h('thead', {}, headRow));
  const body = h('tbody');
  const rows = sortedRows(v, cols);
  for (const r of rows) {
    const tr = h('tr', {
      'data-index': r.index,
      tabindex: (selected >= 0 ? r.index === selected : r === rows[0]) ? 0 : -1,
      class: `${r.inSupport ? 'support' : ''} ${r.mismatch ? 'mismatch' : ''} ${isDegenerateRow(r) ? 'degenerate' : ''} ${r.index === selected ? 'selected' : ''}`,
      'aria-selected': r.index === selected ? 'true' : 'false',
      title: 'Enter: open the text · L: reveal in the log file',
    });
    for (const c of cols) {
      const val = c.value(r);
      const td = h('td', { 'data-col': c.id, 'data-value': val === null ? '' : String(val), class: c.id === 'preview' ? 'preview' : c.id === 'answer' ? 'answer' : 'num' }, c.text(r));
      if (c.id === 'curve') {
        const tc = curveOf(v, r.index);
        if (tc) td.append(tokenSparkline(tc));
      }
      tr.append(td);
    }
    const log = h('button', { class: 'link', title: 'Reveal in log file', 'aria-label': `Reveal roll-out ${r.index} in the log file`, disabled: !r.hasSource, 'data-action': 'reveal' }, 'log');
    log.addEventListener('click', (e) => {
      e.stopPropagation();
      post({ type: 'revealInLog', index: r.index });
    });
    tr.append(h('td', {}, log));
    tr.addEventListener('click', () => {
      onSelect(r.index, false);
      post({ type: 'openRollout', index: r.index });
    });
    body.append(tr);
  }
  rolloutTable.append(body);
}

/** Arrow keys, Home and End move the selection; Enter opens the text; L reveals it in the log. */
export function rolloutKeys(rolloutTable: HTMLTableElement, onSelect: (index: number, focus: boolean) => void): void {
  rolloutTable.addEventListener('keydown', (e) => {
    const tr = (e.target as HTMLElement).closest('tr[data-index]') as HTMLTableRowElement | null;
    if (!tr) return;
    const rows = [...rolloutTable.querySelectorAll<HTMLTableRowElement>('tbody tr[data-index]')];
    const i = rows.indexOf(tr);
    let next = -1;
    switch (e.key) {
      case 'ArrowDown':
        next = Math.min(rows.length - 1, i + 1);
        break;
      case 'ArrowUp':
        next = Math.max(0, i - 1);
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = rows.length - 1;
        break;
      case 'Enter':
      case ' ':
        post({ type: 'openRollout', index: Number(tr.dataset.index) });
        e.preventDefault();
        return;
      case 'l':
      case 'L':
        post({ type: 'revealInLog', index: Number(tr.dataset.index) });
        return;
      default:
        return;
    }
    e.preventDefault();
    const target = rows[next];
    if (target) onSelect(Number(target.dataset.index), true);
  });
}

/** Marks roll-out `index` selected in the table (and focuses it). */
export function selectRow(rolloutTable: HTMLTableElement, index: number, focus: boolean): void {
  for (const tr of rolloutTable.querySelectorAll<HTMLTableRowElement>('tbody tr[data-index]')) {
    const on = Number(tr.dataset.index) === index;
    tr.classList.toggle('selected', on);
    tr.setAttribute('aria-selected', on ? 'true' : 'false');
    tr.tabIndex = on ? 0 : -1;
    if (on && focus) {
      tr.focus({ preventScroll: true });
      tr.scrollIntoView({ block: 'nearest' });
    }
  }
}
