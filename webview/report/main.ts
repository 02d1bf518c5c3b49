// The `consensus-lens report --html` page: renders the report data embedded in the page (a
// <script type="application/json" id="report-data"> block) with DOM calls only — every logged
// value (question ids, labels, answers) goes in through textContent, never as HTML. Bundled by
// scripts/build.mjs (dist/report-page.js) and inlined by the CLI with the page's nonce; the page's
// CSP allows nothing else, so no inline style attribute is used: series colours are classes of the
// page's own stylesheet (`.series-K`).
import { SERIES_COLOURS, type ReportGroup, type ReportStep, type RunReport, type RunSection, type StreamReport } from '../../src/cli/report-types';
import type { RunHealth } from '../../src/engine/browser';

type Cell = string | number | null | undefined;

interface Column<T> {
  label: string;
  value: (row: T) => Cell;
  format?: (v: Cell, row: T) => string;
  /** Text column (left-aligned, ellipsis). */
  text?: boolean;
  cls?: (v: Cell, row: T) => string;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: Cell, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

const pct = (x: Cell): string => (x === null || x === undefined || typeof x !== 'number' ? '-' : `${(100 * x).toFixed(1)}%`);
const num = (x: Cell): string => (x === null || x === undefined || typeof x !== 'number' ? '-' : x.toFixed(3));
const plural = (k: number, w: string): string => `${k} ${k === 1 ? w : `${w}s`}`;

interface Table<T> {
  node: HTMLTableElement;
  setRows(rows: T[]): void;
}

/** A table sortable by any column (click or Enter on its header), with an optional total row. */
function table<T>(columns: Column<T>[], rows: T[], opts: { total?: T; limit?: number } = {}): Table<T> {
  const t = el('table');
  const head = el('tr');
  let sortCol = -1;
  let asc = true;
  const tbody = el('tbody');
  const render = () => {
    const rs = rows.slice();
    if (sortCol >= 0) {
      const key = columns[sortCol].value;
      rs.sort((a, b) => {
        const x = key(a);
        const y = key(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * (asc ? 1 : -1);
      });
    }
    tbody.replaceChildren();
    const limit = opts.limit ?? rs.length;
    for (const r of rs.slice(0, limit)) tbody.append(rowOf(r));
    if (rs.length > limit) {
      const more = el('tr');
      const td = el('td', `${rs.length - limit} more rows (filter to narrow)`, 'text muted');
      td.colSpan = columns.length;
      more.append(td);
      tbody.append(more);
    }
    if (opts.total) {
      const tr = rowOf(opts.total);
      tr.className = 'total';
      tbody.append(tr);
    }
  };
  const rowOf = (r: T): HTMLTableRowElement => {
    const tr = el('tr');
    for (const c of columns) {
      const v = c.value(r);
      const td = el('td', c.format ? c.format(v, r) : v, c.text ? 'text' : '');
      const extra = c.cls?.(v, r);
      if (extra) td.classList.add(extra);
      if (c.text && v !== null && v !== undefined) td.title = String(v);
      tr.append(td);
    }
    return tr;
  };
  columns.forEach((c, i) => {
    const th = el('th', c.label, c.text ? 'text' : '');
    th.tabIndex = 0;
    th.title = 'sort';
    const sort = () => {
      asc = sortCol === i ? !asc : true;
      sortCol = i;
      render();
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        sort();
      }
    });
    head.append(th);
  });
  const thead = el('thead');
  thead.append(head);
  t.append(thead, tbody);
  render();
  return {
    node: t,
    setRows(r) {
      rows = r;
      render();
    },
  };
}

const accuracyCell =
  (op: string) =>
  (v: Cell, s: ReportStep): string => {
    const k = s.accuracy_groups[op];
    return pct(v) + (k !== undefined && k < s.with_truth ? ` (${k})` : '');
  };

function stepColumns(data: RunReport, anyTruth: boolean): Column<ReportStep>[] {
  const ops = data.operators;
  const cols: Column<ReportStep>[] = [
    { label: 'step', value: (s) => (s.step < 0 ? 'all' : s.step) },
    { label: 'groups', value: (s) => s.groups },
    { label: 'saturated', value: (s) => s.regimes.saturated ?? 0 },
    { label: 'contested', value: (s) => s.regimes.contested ?? 0 },
    { label: 'floor', value: (s) => s.regimes['competence-floor'] ?? 0 },
  ];
  for (const o of flipOperators(ops)) cols.push({ label: `flips ${o}`, value: (s) => s.flips[o] ?? 0 });
  for (const o of gateOperators(ops)) cols.push({ label: `gate ${o}`, value: (s) => s.mean_gate[o], format: num });
  if (anyTruth) for (const o of ops) cols.push({ label: `acc ${o}`, value: (s) => s.accuracy[o], format: accuracyCell(o) });
  return cols;
}

const flipOperators = (ops: string[]): string[] => ops.filter((o) => o !== 'majority' && ops.includes('majority'));
const gateOperators = (ops: string[]): string[] => ops.filter((o) => o === 'ec' || o === 'core');

function validationTable(data: RunReport, v: StreamReport): HTMLElement {
  const box = el('div');
  box.append(el('h3', 'Validation (the label vs the real answer)'));
  box.append(el('p', 'A separate stream: validation samples are scored against the real answer; their rewards are not consensus rewards.', 'muted'));
  const cols: Column<ReportStep>[] = [
    { label: 'step', value: (s) => (s.step < 0 ? 'all' : s.step) },
    { label: 'groups', value: (s) => s.groups },
    { label: 'roll-outs', value: (s) => s.rollouts },
    { label: 'with truth', value: (s) => s.with_truth },
  ];
  for (const o of data.operators) cols.push({ label: `acc ${o}`, value: (s) => s.accuracy[o], format: accuracyCell(o) });
  box.append(table(cols, v.steps, { total: v.total }).node);
  return box;
}

const SVG = 'http://www.w3.org/2000/svg';

/** Accuracy (or, without ground truth, the flip rate) per operator over steps. */
export function chart(data: RunReport, steps: ReportStep[], anyTruth: boolean): Element {
  if (steps.length < 2) return el('p', 'one step: no chart', 'muted');
  const ops = data.operators;
  const series = anyTruth
    ? ops.map((o) => ({ name: `acc ${o}`, ys: steps.map((s) => s.accuracy[o] ?? null) }))
    : flipOperators(ops).map((o) => ({ name: `flip rate ${o}`, ys: steps.map((s) => (s.groups ? (s.flips[o] ?? 0) / s.groups : null)) }));
  const W = 720;
  const H = 250;
  const L = 40;
  const B = 54;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', String(W));
  svg.setAttribute('role', 'img');
  const xs = steps.map((s) => s.step);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const X = (v: number) => L + (x1 === x0 ? 0 : (v - x0) / (x1 - x0)) * (W - L - 10);
  const Y = (v: number) => H - B - v * (H - B - 10);
  const add = (tag: string, attrs: Record<string, string | number>, text?: string, cls?: string): SVGElement => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    if (cls) e.setAttribute('class', cls);
    svg.append(e);
    return e;
  };
  for (const v of [0, 0.5, 1]) {
    add('line', { x1: L, x2: W - 10, y1: Y(v), y2: Y(v) }, undefined, 'grid');
    add('text', { x: 4, y: Y(v) + 4 }, `${v * 100}%`, 'axis');
  }
  add('text', { x: L, y: H - B + 16 }, `step ${x0}`, 'axis');
  add('text', { x: W - 60, y: H - B + 16 }, `step ${x1}`, 'axis');
  series.forEach((s, i) => {
    let d = '';
    s.ys.forEach((y, k) => {
      if (y === null) return;
      d += `${d ? 'L' : 'M'}${X(xs[k]).toFixed(1)},${Y(y).toFixed(1)}`;
    });
    const cls = `series-${i % SERIES_COLOURS.length}`;
    const p = add('path', { d }, undefined, `line ${cls}`);
    const title = document.createElementNS(SVG, 'title');
    title.textContent = s.name;
    p.append(title);
    add('text', { x: L + i * 110, y: H - 8 }, s.name, `legend ${cls}`);
  });
  return svg;
}

function healthList(h: RunHealth | undefined): HTMLElement {
  if (!h) return el('p', 'not computed', 'muted');
  const ul = el('ul');
  for (const a of h.alarms) ul.append(el('li', `alarm: ${a.message}`, 'no'));
  for (const p of [h.premise.label, h.premise.truth]) if (p && p.verdict !== 'too few') ul.append(el('li', p.message, p.verdict === 'informative' ? '' : 'no'));
  for (const b of h.rewardBugs) ul.append(el('li', `reward bug (${b.kind}): ${b.message}; e.g. step ${b.example.step} question ${b.example.question_id}`, 'no'));
  if (h.degenerate.pluralities)
    ul.append(el('li', `degenerate pluralities: ${plural(h.degenerate.pluralities, 'question')} whose vote class is mostly empty, truncated or repetition-collapsed roll-outs`));
  for (const n of h.notes) ul.append(el('li', n, 'muted'));
  if (!ul.firstChild) ul.append(el('li', 'no alarm', 'ok'));
  return ul;
}

function mismatchText(s: RunSection): string {
  const m = s.reward_mismatch;
  const by = m.operators.length ? m.operators.join(', ') : 'majority';
  if (!m.checked) return 'Reward mismatches: not checked (no training group logs a reward for every roll-out).';
  return m.groups
    ? `Reward mismatches: in ${plural(m.groups, 'group')} of ${m.checked} the logged reward differs from the configured operator's (${by}).`
    : `Reward mismatches: none (${plural(m.checked, 'group')} checked against ${by}).`;
}

function sections(data: RunReport): RunSection[] {
  return (
    data.runs ?? [
      { run: null, steps: data.steps, total: data.total, validation: data.validation, health: data.health, reward_mismatch: data.reward_mismatch ?? { checked: 0, groups: 0, operators: [] } },
    ]
  );
}

export function render(data: RunReport): void {
  const byId = (id: string) => document.getElementById(id)!;
  const ops = data.operators;
  const runs = sections(data);
  byId('title').textContent = data.title;
  const t = data.total;
  byId('meta').textContent =
    `${runs.length > 1 ? `${plural(runs.length, 'run')}; ` : ''}${plural(data.steps.length, 'step')}, ${plural(t.groups, 'group')}, ${plural(t.rollouts, 'roll-out')}${runs.length > 1 ? ' (the largest run)' : ''}; operators: ${ops.join(', ')}; generated ${data.generated}`;
  const box = byId('runs');
  for (const s of runs) {
    const sec = el('section', undefined, 'run');
    if (s.run !== null) sec.append(el('h2', `Run ${s.run}`));
    const anyTruth = s.total.with_truth > 0;
    if (s.total.groups > 0) {
      sec.append(el('h3', 'Per step'));
      sec.append(table(stepColumns(data, anyTruth), s.steps, { total: s.total }).node);
      sec.append(
        el(
          'p',
          anyTruth ? `accuracy: pseudo-label vs logged ground truth over ${plural(s.total.with_truth, 'group')} (a diagnostic; ground truth is never an input)` : 'accuracy: no ground truth logged',
          'muted',
        ),
      );
      sec.append(el('p', mismatchText(s), s.reward_mismatch.groups ? 'no' : 'muted'));
      sec.append(el('h3', anyTruth ? 'Accuracy over steps' : 'Flip rate over steps (no ground truth logged)'));
      const c = el('div', undefined, 'chart');
      c.append(chart(data, s.steps, anyTruth));
      sec.append(c);
      sec.append(el('h3', 'Health'));
      sec.append(healthList(s.health));
    } else sec.append(el('p', 'no training groups (a validation stream only)', 'muted'));
    if (s.validation) sec.append(validationTable(data, s.validation));
    box.append(sec);
  }
  if (data.ground_truth_note) box.append(el('p', `Ground truth: ${data.ground_truth_note}`, 'muted'));

  const anyTruth = data.groups.some((g) => g.ground_truth !== null);
  const gateOps = gateOperators(ops);
  const groupCols: Column<ReportGroup>[] = [
    { label: 'step', value: (g) => g.step },
    { label: 'question', value: (g) => (g.run ? `${g.run} ` : '') + g.question_id, text: true },
    { label: 'N', value: (g) => g.n },
    { label: 'regime', value: (g) => g.regime, text: true },
    { label: 'top share', value: (g) => g.majority_ratio, format: pct },
  ];
  for (const o of ops) {
    groupCols.push({
      label: o,
      value: (g) => (o in g.labels ? g.labels[o] : g.unavailable[o] ? '(n/a)' : null),
      text: true,
      format: (v, g) => (!(o in g.labels) ? String(v ?? '') : v === null ? '— (no label)' : v === '' ? '"" (empty)' : String(v)),
      cls: (_v, g) => (g.correct[o] === true ? 'ok' : g.correct[o] === false ? 'no' : ''),
    });
  }
  for (const o of gateOps) groupCols.push({ label: `gate ${o}`, value: (g) => g.gates[o], format: num });
  if (anyTruth) groupCols.push({ label: 'ground truth', value: (g) => g.ground_truth, text: true });
  const gt = table(groupCols, data.groups, { limit: 2000 });
  byId('groups').append(gt.node);
  const filter = byId('filter') as HTMLInputElement;
  const flipsOnly = byId('flipsOnly') as HTMLInputElement;
  const apply = () => {
    const q = filter.value.toLowerCase();
    gt.setRows(
      data.groups.filter((g) => {
        if (flipsOnly.checked && !Object.keys(g.labels).some((o) => o !== 'majority' && g.labels[o] !== g.labels.majority)) return false;
        if (!q) return true;
        const hay = [g.question_id, g.regime, g.run ?? '', ...Object.values(g.labels).map(String)].join(' ').toLowerCase();
        return hay.includes(q);
      }),
    );
  };
  filter.addEventListener('input', apply);
  flipsOnly.addEventListener('change', apply);

  const nl = byId('notices');
  if (!data.notices.length) nl.append(el('p', 'none', 'muted'));
  else {
    const ul = el('ul');
    for (const n of data.notices) ul.append(el('li', `${n.level}: ${n.message}`));
    nl.append(ul);
  }
  document.body.dataset.rendered = 'true';
}

render(JSON.parse(document.getElementById('report-data')!.textContent ?? '{}') as RunReport);
