// `consensus-lens report PATH [--html FILE]` (SPEC §6): a per-step summary of a run — groups, regimes,
// pseudo-label flips per operator against the vote, mean gate (ec/core), label accuracy where ground
// truth is logged (a diagnostic, never an input) — printed as a table; with --html, also a
// self-contained report page.
//
// The page: one HTML file with inline CSS and JS, no network; the data is embedded as JSON in a
// <script type="application/json"> block (every '<' escaped as \u003c, so no log content can close
// the block), and the page's script renders it with textContent only — answers and labels are model
// output and are never injected as HTML. (SPEC asks for the webview bundle; this page uses its own
// small renderer so that the report works without the extension build. The data block is the
// stable part: the webview can render the same JSON.)
//
// Streams: a run's training roll-outs and its validation dumps (verl's validation_data_dir, TRL's
// eval completions, NeMo RL's val_data_step files, verl's W&B validation table) share step numbers
// but not meaning: validation samples are scored against the real answer and their rewards are not
// consensus rewards. They are summed up in separate sections; for validation the number that
// matters is the accuracy of the vote against the real answer.
//
// Ground truth that is the pseudo-label: a TTRL port that writes the majority label into `gts`
// makes every group's ground truth equal to its vote. When that is what the data shows (see
// detectPseudoLabel), `--ground-truth auto` (the default) says so and leaves accuracy out;
// `--ground-truth ignore` drops logged ground truth as it is read.
//
// Also accepts the score flags (--operators, --kappa, ...), --configured-operator, --ground-truth
// and --title.
import { writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type * as Crypto from 'node:crypto';
import { answersEqual, createRunContext, type Group, type GroupScore, type OperatorId, type Params } from '../engine';
import type { Notice } from '../logs';
import { forEachGroup, jobsFrom, maxGroupSizeFrom } from './score';
import { matchesTruth, type ScoreJob } from './pipeline';
import { needsReasoning, prepareGroup, scoreGroup } from '../engine';
import { analyseRuns, groupHealth, stripTruth, type GroupHealth, type RunHealth } from '../engine/analysis/health';
import { renderHealthSummary } from './health';
import type { RunContext } from '../engine';
import { defaultJobs } from './pool';
import { accuracyOf, countAccuracy, emptyAccuracy, formatAccuracy, type AccuracyCount } from '../engine/analysis/accuracy';
import { CliIO, UsageError, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseArgs } from './args';
import { safeText } from '../logs/safe-text';

export interface ReportGroup {
  step: number;
  question_id: string;
  run?: string;
  n: number;
  regime: string;
  majority_ratio: number | null;
  overturn: boolean | null;
  ground_truth: string | null;
  labels: Record<string, string | null>;
  gates: Record<string, number | null>;
  /** Per operator: label equals ground truth (null without ground truth or without a label). */
  correct: Record<string, boolean | null>;
  unavailable: Record<string, string>;
  confidence?: 'used' | 'missing';
  reward_mismatches?: number;
  /** 'validation' for a validation dump's group. */
  stream?: 'validation';
}

export interface ReportStep {
  step: number;
  groups: number;
  rollouts: number;
  regimes: Record<string, number>;
  /** Per operator other than majority: groups whose label differs from majority's. */
  flips: Record<string, number>;
  /** Per operator: mean gate over the groups it ran on. */
  mean_gate: Record<string, number | null>;
  /** Per operator: label accuracy over the groups with ground truth it ran on (absent when none). */
  accuracy: Record<string, number | null>;
  /** Per operator: how many groups with ground truth the accuracy is over. */
  accuracy_groups: Record<string, number>;
  with_truth: number;
  reward_mismatch_groups: number;
}

export interface StreamReport {
  steps: ReportStep[];
  total: ReportStep;
}

export interface RunReport {
  format: 'consensus-lens/report/v1';
  title: string;
  path: string;
  generated: string;
  operators: string[];
  params: Partial<Params>;
  /** The training stream (every group that is not a validation dump's). */
  steps: ReportStep[];
  total: ReportStep;
  /** The validation stream, when the run has one. */
  validation?: StreamReport;
  /** Set when logged ground truth was left out of accuracy, and why. */
  ground_truth_note?: string;
  groups: ReportGroup[];
  notices: Notice[];
  /** Run health (docs/health.md): alarms, the confidence premise, reward bugs, degenerate roll-outs
   * (of the largest run when the path holds several; each is in `health_runs`). */
  health?: RunHealth;
  health_runs?: { run: string | null; health: RunHealth }[];
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function groupRow(s: GroupScore, truth: string | null, forms?: readonly string[]): ReportGroup {
  const labels: Record<string, string | null> = {};
  const gates: Record<string, number | null> = {};
  const correct: Record<string, boolean | null> = {};
  for (const [id, r] of Object.entries(s.results)) {
    if (!r) continue;
    labels[id] = r.label;
    gates[id] = finite(r.gate);
    correct[id] = matchesTruth(r.label, truth, forms);
  }
  const row: ReportGroup = {
    step: s.step,
    question_id: s.questionId,
    n: s.n,
    regime: s.analysis.regime,
    majority_ratio: finite(s.analysis.majorityRatio),
    overturn: s.analysis.overturn,
    ground_truth: truth,
    labels,
    gates,
    correct,
    unavailable: { ...(s.unavailable as Record<string, string>) },
  };
  if (s.run !== undefined) row.run = s.run;
  if (s.results.core?.confidence) row.confidence = s.results.core.confidence;
  if (s.rewardMismatch && s.rewardMismatch.indices.length) row.reward_mismatches = s.rewardMismatch.indices.length;
  return row;
}

/** One row of the report for a group, scored as `score` would (labels, gates, correctness against
 * logged ground truth), and the group's health record (docs/health.md) from the same features.
 * Runs in the worker threads too. */
export function reportRow(group: Group, job: ScoreJob, ctx: RunContext): { row: ReportGroup; health: GroupHealth } {
  const g = prepareGroup(group, { reasoning: needsReasoning(job.operators), health: true });
  const score = scoreGroup(g, { operators: job.operators, params: job.params, configuredOperator: job.configuredOperator }, ctx);
  const row = groupRow(score, group.groundTruth ?? null, group.groundTruthForms);
  if (group.stream) row.stream = group.stream;
  return { row, health: groupHealth(g, score, { configuredOperator: job.configuredOperator, params: job.params, ctx }) };
}

/**
 * Is the logged ground truth the vote itself (a TTRL pseudo-label written into `gts`)? Yes when, over
 * the training groups with ground truth, it equals the majority label on (nearly) every group — at
 * least 95% of at least 8 groups, including at least 3 contested ones (a unanimous vote equals a
 * real answer too easily to count). The TTRL writer computes its label with its own extraction,
 * so a few groups may differ.
 */
export function detectPseudoLabel(rows: readonly ReportGroup[]): { groups: number; matching: number } | null {
  let groups = 0;
  let matching = 0;
  let contested = 0;
  for (const r of rows) {
    if (r.stream === 'validation' || r.ground_truth === null || !('majority' in r.labels)) continue;
    groups++;
    if (r.correct.majority === true) {
      matching++;
      if (r.majority_ratio !== null && r.majority_ratio < 1) contested++;
    }
  }
  return groups >= 8 && contested >= 3 && matching >= 0.95 * groups ? { groups, matching } : null;
}

/** Aggregates group rows (all of one step, or the whole run) into a summary line. */
export function summarize(step: number, rows: ReportGroup[], operators: string[]): ReportStep {
  const out: ReportStep = { step, groups: rows.length, rollouts: 0, regimes: {}, flips: {}, mean_gate: {}, accuracy: {}, accuracy_groups: {}, with_truth: 0, reward_mismatch_groups: 0 };
  const gateSum: Record<string, number> = {};
  const gateN: Record<string, number> = {};
  const acc: Record<string, AccuracyCount> = {};
  for (const r of rows) {
    out.rollouts += r.n;
    out.regimes[r.regime] = (out.regimes[r.regime] ?? 0) + 1;
    if (r.ground_truth !== null) out.with_truth++;
    if (r.reward_mismatches) out.reward_mismatch_groups++;
    for (const op of operators) {
      if (!(op in r.labels)) continue;
      if (op !== 'majority' && 'majority' in r.labels && !sameLabel(r.labels[op], r.labels.majority)) out.flips[op] = (out.flips[op] ?? 0) + 1;
      else if (op !== 'majority' && 'majority' in r.labels) out.flips[op] ??= 0;
      const g = r.gates[op];
      if (g !== null && g !== undefined) {
        gateSum[op] = (gateSum[op] ?? 0) + g;
        gateN[op] = (gateN[op] ?? 0) + 1;
      }
      countAccuracy((acc[op] ??= emptyAccuracy()), r.correct[op]);
    }
  }
  for (const op of operators) {
    if (gateN[op]) out.mean_gate[op] = finite(gateSum[op] / gateN[op]);
    const a = acc[op] && accuracyOf(acc[op]);
    if (a !== undefined && a !== null) {
      out.accuracy[op] = finite(a);
      out.accuracy_groups[op] = acc[op].over;
    }
  }
  return out;
}

function sameLabel(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return a === b || answersEqual(a, b);
}

export interface BuildOptions {
  /** The stream read for PATH '-' (native JSONL). */
  stdin?: Readable;
  /** 'auto' (default): logged ground truth, unless the data shows it is the vote; 'ignore': none. */
  groundTruth?: 'auto' | 'ignore';
  operators?: OperatorId[];
  params?: Partial<Params>;
  configuredOperator?: OperatorId;
  title?: string;
  /** Worker threads (0: in-process); default both cores. */
  jobs?: number;
  /** Largest group scored (--max-group-size). */
  maxGroupSize?: number;
}

/** Reads and scores a whole run (one pass, texts dropped after each group is prepared). */
export async function buildReport(path: string, opts: BuildOptions, onNotice: (n: Notice) => void): Promise<RunReport> {
  const notices: Notice[] = [];
  const ctx = createRunContext();
  const rows: ReportGroup[] = [];
  const healths: GroupHealth[] = [];
  const seenOps = new Set<string>();
  const sink = (n: Notice) => {
    notices.push(n);
    onNotice(n);
  };
  const job: ScoreJob = { operators: opts.operators, params: opts.params ?? {}, configuredOperator: opts.configuredOperator, maxGroupSize: opts.maxGroupSize };
  await forEachGroup(
    path,
    sink,
    opts.jobs ?? defaultJobs(),
    (g) => reportRow(g, job, ctx),
    (g) => ({ request: { kind: 'report', group: g, job } }),
    ({ row, health }) => {
      for (const id of Object.keys(row.labels)) seenOps.add(id);
      rows.push(row);
      healths.push(health);
    },
    opts.stdin,
    { read: { groundTruth: opts.groundTruth ?? 'auto' }, maxGroupSize: opts.maxGroupSize },
  );
  let groundTruthNote: string | undefined;
  const pseudo = (opts.groundTruth ?? 'auto') === 'auto' ? detectPseudoLabel(rows) : null;
  if (pseudo) {
    groundTruthNote = `the logged ground truth equals the majority vote on ${pseudo.matching} of ${pseudo.groups} training groups: it is the pseudo-label (TTRL writes the vote into "gts"), not the real answer; accuracy leaves it out (--ground-truth ignore drops it; the setting consensusLens.groundTruth does the same in the editor)`;
    sink({ level: 'warning', message: `${path}: ${groundTruthNote}`, file: path === '-' ? undefined : path });
    for (const r of rows) {
      if (r.stream === 'validation' || r.ground_truth === null) continue;
      r.ground_truth = null;
      for (const op of Object.keys(r.correct)) r.correct[op] = null;
    }
    // The health analysis must not take the pseudo-label for the truth either (it would find the
    // vote "accurate" and the rewards "tracking the truth").
    stripTruth(healths);
  }
  const order = ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl'];
  const operators = [...seenOps].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const train = rows.filter((r) => r.stream !== 'validation');
  const val = rows.filter((r) => r.stream === 'validation');
  const { steps, total } = streamReport(train, operators);
  return {
    format: 'consensus-lens/report/v1',
    title: opts.title ?? `Consensus Lens report: ${path}`,
    path,
    generated: new Date().toISOString(),
    operators,
    params: opts.params ?? {},
    steps,
    total,
    ...(val.length ? { validation: streamReport(val, operators) } : {}),
    ...(groundTruthNote ? { ground_truth_note: groundTruthNote } : {}),
    groups: rows,
    notices: notices.slice(0, 200),
    ...healthFields(analyseRuns(healths)),
  };
}

function streamReport(rows: ReportGroup[], operators: string[]): StreamReport {
  const bySteps = new Map<number, ReportGroup[]>();
  for (const r of rows) {
    const list = bySteps.get(r.step);
    if (list) list.push(r);
    else bySteps.set(r.step, [r]);
  }
  const steps = [...bySteps.keys()].sort((a, b) => a - b).map((s) => summarize(s, bySteps.get(s)!, operators));
  return { steps, total: summarize(-1, rows, operators) };
}

function healthFields(runs: { run: string | null; health: RunHealth }[]): Pick<RunReport, 'health' | 'health_runs'> {
  return runs.length > 1 ? { health: runs[0].health, health_runs: runs } : { health: runs[0].health };
}

const pct = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : `${(100 * x).toFixed(1)}%`);
const num = (x: number | null | undefined, d = 3): string => (x === null || x === undefined ? '-' : x.toFixed(d));

/** The per-step summary as an aligned text table. */
export function renderTable(r: RunReport): string {
  const ops = r.operators;
  const flipOps = ops.filter((o) => o !== 'majority' && ops.includes('majority'));
  const gateOps = ops.filter((o) => o === 'ec' || o === 'core');
  const anyTruth = r.total.with_truth > 0;
  const header = ['step', 'groups', 'saturated', 'contested', 'floor', ...flipOps.map((o) => `flips ${o}`), ...gateOps.map((o) => `gate ${o}`), ...(anyTruth ? ops.map((o) => `acc ${o}`) : [])];
  const line = (s: ReportStep, label: string): string[] => [
    label,
    String(s.groups),
    String(s.regimes.saturated ?? 0),
    String(s.regimes.contested ?? 0),
    String(s.regimes['competence-floor'] ?? 0),
    ...flipOps.map((o) => String(s.flips[o] ?? 0)),
    ...gateOps.map((o) => num(s.mean_gate[o])),
    ...(anyTruth ? ops.map((o) => formatAccuracy(s.accuracy[o], s.accuracy_groups[o], s.with_truth)) : []),
  ];
  const rows = [header, ...r.steps.map((s) => line(s, String(s.step))), line(r.total, 'all')];
  const widths = header.map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const fmt = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const out: string[] = [];
  const t = r.total;
  out.push(`${r.path === '-' ? 'standard input' : r.path}: ${r.steps.length} steps, ${t.groups} groups, ${t.rollouts} roll-outs; operators ${ops.join(', ') || '(none)'}`);
  out.push(fmt(header));
  for (const row of rows.slice(1, -1)) out.push(fmt(row));
  if (r.steps.length > 1 || r.steps.length === 0) out.push(fmt(rows[rows.length - 1]));
  const partial = ops.some((o) => t.accuracy_groups[o] !== undefined && t.accuracy_groups[o] < t.with_truth);
  if (anyTruth) out.push(`accuracy: pseudo-label vs logged ground truth over ${t.with_truth} groups${partial ? ', (k) = over the k groups the operator could run on' : ''} (a diagnostic; ground truth is never an input)`);
  else out.push('accuracy: no ground truth logged');
  if (r.ground_truth_note) out.push(`ground truth: ${r.ground_truth_note}`);
  if (t.reward_mismatch_groups) out.push(`reward mismatch: in ${t.reward_mismatch_groups} groups the logged reward differs from the configured operator's (SPEC §5)`);
  if (r.health_runs) for (const h of r.health_runs) out.push(renderHealthSummary(h.health, h.run ?? '-').trimEnd());
  else if (r.health) out.push(renderHealthSummary(r.health).trimEnd());
  if (r.validation) out.push('', ...validationTable(r.validation, ops));
  return out.join('\n') + '\n';
}

/** The validation section: per step, how often each operator's label (the vote first) is the real answer. */
function validationTable(v: StreamReport, ops: string[]): string[] {
  const header = ['step', 'groups', 'roll-outs', 'with truth', ...ops.map((o) => `acc ${o}`)];
  const line = (s: ReportStep, label: string): string[] => [
    label,
    String(s.groups),
    String(s.rollouts),
    String(s.with_truth),
    ...ops.map((o) => pct(s.accuracy[o]) + (s.accuracy_groups[o] !== undefined && s.accuracy_groups[o] < s.with_truth ? ` (${s.accuracy_groups[o]})` : '')),
  ];
  const rows = [header, ...v.steps.map((s) => line(s, String(s.step))), line(v.total, 'all')];
  const widths = header.map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const fmt = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const out = [`validation: ${v.steps.length} steps, ${v.total.groups} groups, ${v.total.rollouts} roll-outs (a separate stream: samples scored against the real answer, no consensus rewards)`, fmt(header)];
  for (const row of rows.slice(1, -1)) out.push(fmt(row));
  if (v.steps.length > 1) out.push(fmt(rows[rows.length - 1]));
  out.push(v.total.with_truth ? `validation accuracy: the label vs the real answer over ${v.total.with_truth} groups` : 'validation accuracy: no ground truth logged');
  return out;
}

/** JSON for embedding in a <script> block: '<' (and U+2028/9) escaped so no content can end the block. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The self-contained report page. */
export function renderHtml(r: RunReport): string {
  // A fresh nonce per page: the one inline script runs, nothing injected could.
  // node:crypto is required here, on use: loading it costs every CLI start-up ~7 ms.
  const nonce = (require('node:crypto') as typeof Crypto).randomBytes(16).toString('base64');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(r.title)}</title>
<style nonce="${nonce}">
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #656d76; --line: #d0d7de; --accent: #0969da; --bad: #cf222e; --good: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --line: #30363d; --accent: #4493f8; --bad: #f85149; --good: #3fb950; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 2rem; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
.muted { color: var(--muted); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: right; }
th { cursor: pointer; user-select: none; position: sticky; top: 0; background: var(--bg); }
td.text, th.text { text-align: left; max-width: 22rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
tr.total td { font-weight: 600; }
.ok { color: var(--good); } .no { color: var(--bad); }
svg { max-width: 100%; } svg text { fill: var(--muted); font-size: 11px; }
input[type=search] { padding: .3rem .5rem; min-width: 18rem; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div class="muted" id="meta"></div>
<h2>Per step</h2>
<div id="steps"></div>
<div id="validation"></div>
<h2>Over steps</h2>
<div id="chart"></div>
<h2>Groups</h2>
<p><label>Filter <input type="search" id="filter" placeholder="question id, label, regime…"></label> <label><input type="checkbox" id="flipsOnly"> only groups where an operator overturns the vote</label></p>
<div id="groups"></div>
<h2>Health</h2>
<div id="health"></div>
<h2>Notices</h2>
<div id="notices"></div>
<script type="application/json" id="report-data">${embedJson(r)}</script>
<script nonce="${nonce}">
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; }
  function pct(x) { return x === null || x === undefined ? '-' : (100 * x).toFixed(1) + '%'; }
  function num(x) { return x === null || x === undefined ? '-' : Number(x).toFixed(3); }
  var ops = data.operators;
  var flipOps = ops.filter(function (o) { return o !== 'majority' && ops.indexOf('majority') >= 0; });
  var gateOps = ops.filter(function (o) { return o === 'ec' || o === 'core'; });
  var anyTruth = data.total.with_truth > 0;
  if (!anyTruth) document.getElementById('chart').previousElementSibling.textContent = 'Flip rate over steps (no ground truth logged)';
  document.getElementById('title').textContent = data.title;
  document.getElementById('meta').textContent = data.steps.length + ' steps, ' + data.total.groups + ' groups, ' + data.total.rollouts + ' roll-outs; operators: ' + ops.join(', ') + '; generated ' + data.generated +
    (anyTruth ? '' : '; no ground truth logged');

  function table(columns, rows, opts) {
    var t = el('table'), thead = el('thead'), tr = el('tr');
    var sortCol = -1, asc = true;
    columns.forEach(function (c, i) {
      var th = el('th', c.label, c.text ? 'text' : '');
      th.tabIndex = 0;
      th.title = 'sort';
      var sort = function () { asc = sortCol === i ? !asc : true; sortCol = i; render(); };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
      tr.appendChild(th);
    });
    thead.appendChild(tr); t.appendChild(thead);
    var tbody = el('tbody'); t.appendChild(tbody);
    function render() {
      var rs = rows.slice();
      if (sortCol >= 0) {
        var key = columns[sortCol].sort || columns[sortCol].value;
        rs.sort(function (a, b) { var x = key(a), y = key(b); if (x === y) return 0; if (x === null || x === undefined) return 1; if (y === null || y === undefined) return -1; return (x < y ? -1 : 1) * (asc ? 1 : -1); });
      }
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      var limit = opts && opts.limit ? opts.limit : rs.length;
      rs.slice(0, limit).forEach(function (r) {
        var row = el('tr');
        columns.forEach(function (c) { var v = c.value(r); var td = el('td', c.format ? c.format(v, r) : v, c.text ? 'text' : ''); if (c.cls) td.className += ' ' + c.cls(v, r); if (c.text && v !== null && v !== undefined) td.title = String(v); row.appendChild(td); });
        tbody.appendChild(row);
      });
      if (rs.length > limit) { var more = el('tr'); var td = el('td', (rs.length - limit) + ' more rows (filter to narrow)', 'text muted'); td.colSpan = columns.length; more.appendChild(td); tbody.appendChild(more); }
      if (opts && opts.total) { var tr2 = el('tr', undefined, 'total'); columns.forEach(function (c) { tr2.appendChild(el('td', c.format ? c.format(c.value(opts.total), opts.total) : c.value(opts.total), c.text ? 'text' : '')); }); tbody.appendChild(tr2); }
    }
    render();
    return { node: t, render: render, setRows: function (r) { rows = r; render(); } };
  }

  var stepCols = [
    { label: 'step', value: function (s) { return s.step < 0 ? 'all' : s.step; } },
    { label: 'groups', value: function (s) { return s.groups; } },
    { label: 'saturated', value: function (s) { return s.regimes.saturated || 0; } },
    { label: 'contested', value: function (s) { return s.regimes.contested || 0; } },
    { label: 'floor', value: function (s) { return s.regimes['competence-floor'] || 0; } }
  ];
  flipOps.forEach(function (o) { stepCols.push({ label: 'flips ' + o, value: function (s) { return s.flips[o] || 0; } }); });
  gateOps.forEach(function (o) { stepCols.push({ label: 'gate ' + o, value: function (s) { return s.mean_gate[o]; }, format: num }); });
  if (anyTruth) ops.forEach(function (o) { stepCols.push({ label: 'acc ' + o, value: function (s) { return s.accuracy[o]; }, format: function (v, s) { var k = s.accuracy_groups[o]; return pct(v) + (k !== undefined && k < s.with_truth ? ' (' + k + ')' : ''); } }); });
  document.getElementById('steps').appendChild(table(stepCols, data.steps, { total: data.total }).node);
  if (data.ground_truth_note) document.getElementById('steps').appendChild(el('p', 'Ground truth: ' + data.ground_truth_note, 'muted'));
  if (data.validation) {
    var vbox = document.getElementById('validation');
    vbox.appendChild(el('h2', 'Validation (the label vs the real answer)'));
    vbox.appendChild(el('p', 'A separate stream: validation samples are scored against the real answer; their rewards are not consensus rewards.', 'muted'));
    var valCols = [
      { label: 'step', value: function (s) { return s.step < 0 ? 'all' : s.step; } },
      { label: 'groups', value: function (s) { return s.groups; } },
      { label: 'roll-outs', value: function (s) { return s.rollouts; } },
      { label: 'with truth', value: function (s) { return s.with_truth; } }
    ];
    ops.forEach(function (o) { valCols.push({ label: 'acc ' + o, value: function (s) { return s.accuracy[o]; }, format: function (v, s) { var k = s.accuracy_groups[o]; return pct(v) + (k !== undefined && k < s.with_truth ? ' (' + k + ')' : ''); } }); });
    vbox.appendChild(table(valCols, data.validation.steps, { total: data.validation.total }).node);
  }

  // a small SVG line chart: accuracy (or flips) per operator over steps
  (function chart() {
    var steps = data.steps; if (steps.length < 2) { document.getElementById('chart').appendChild(el('p', 'one step: no chart', 'muted')); return; }
    var series = anyTruth ? ops.map(function (o) { return { name: 'acc ' + o, ys: steps.map(function (s) { return s.accuracy[o]; }) }; })
      : flipOps.map(function (o) { return { name: 'flip rate ' + o, ys: steps.map(function (s) { return s.groups ? (s.flips[o] || 0) / s.groups : null; }) }; });
    var W = 720, H = 250, L = 40, B = 54, NS = 'http://www.w3.org/2000/svg';
    var svg = document.createElementNS(NS, 'svg'); svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H); svg.setAttribute('width', W); svg.setAttribute('role', 'img');
    var xs = steps.map(function (s) { return s.step; }); var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs) || 1;
    function X(v) { return L + (x1 === x0 ? 0 : (v - x0) / (x1 - x0)) * (W - L - 10); } function Y(v) { return (H - B) - v * (H - B - 10); }
    function add(tag, attrs, text) { var e = document.createElementNS(NS, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; svg.appendChild(e); return e; }
    [0, 0.5, 1].forEach(function (v) { add('line', { x1: L, x2: W - 10, y1: Y(v), y2: Y(v), stroke: 'currentColor', 'stroke-opacity': 0.15 }); add('text', { x: 4, y: Y(v) + 4 }, (v * 100) + '%'); });
    add('text', { x: L, y: H - B + 16 }, 'step ' + x0); add('text', { x: W - 60, y: H - B + 16 }, 'step ' + x1);
    var colours = ['#0969da', '#bf3989', '#1a7f37', '#9a6700', '#8250df', '#cf222e'];
    series.forEach(function (s, i) {
      var d = ''; s.ys.forEach(function (y, k) { if (y === null || y === undefined) return; d += (d ? 'L' : 'M') + X(xs[k]).toFixed(1) + ',' + Y(y).toFixed(1); });
      var p = add('path', { d: d, fill: 'none', stroke: colours[i % colours.length], 'stroke-width': 2 }); var title = document.createElementNS(NS, 'title'); title.textContent = s.name; p.appendChild(title);
      add('text', { x: L + i * 110, y: H - 8, fill: colours[i % colours.length], style: 'fill:' + colours[i % colours.length] }, s.name);
    });
    document.getElementById('chart').appendChild(svg);
  })();

  var groupCols = [
    { label: 'step', value: function (g) { return g.step; } },
    { label: 'question', value: function (g) { return (g.run ? g.run + ' ' : '') + g.question_id; }, text: true },
    { label: 'N', value: function (g) { return g.n; } },
    { label: 'regime', value: function (g) { return g.regime; }, text: true },
    { label: 'top share', value: function (g) { return g.majority_ratio; }, format: pct }
  ];
  ops.forEach(function (o) {
    groupCols.push({ label: o, value: function (g) { return o in g.labels ? g.labels[o] : (g.unavailable[o] ? '(n/a)' : null); }, text: true,
      format: function (v, g) { return !(o in g.labels) ? v : v === null ? '— (no label)' : v === '' ? '"" (empty)' : v; },
      cls: function (v, g) { var c = g.correct[o]; return c === true ? 'ok' : c === false ? 'no' : ''; } });
  });
  gateOps.forEach(function (o) { groupCols.push({ label: 'gate ' + o, value: function (g) { return g.gates[o]; }, format: num }); });
  if (anyTruth) groupCols.push({ label: 'ground truth', value: function (g) { return g.ground_truth; }, text: true });
  var gt = table(groupCols, data.groups, { limit: 2000 });
  document.getElementById('groups').appendChild(gt.node);
  function applyFilter() {
    var q = document.getElementById('filter').value.toLowerCase(); var flips = document.getElementById('flipsOnly').checked;
    gt.setRows(data.groups.filter(function (g) {
      if (flips && !Object.keys(g.labels).some(function (o) { return o !== 'majority' && g.labels[o] !== g.labels.majority; })) return false;
      if (!q) return true;
      var hay = [g.question_id, g.regime, g.run || ''].concat(Object.keys(g.labels).map(function (o) { return String(g.labels[o]); })).join(' ').toLowerCase();
      return hay.indexOf(q) >= 0;
    }));
  }
  document.getElementById('filter').addEventListener('input', applyFilter);
  document.getElementById('flipsOnly').addEventListener('change', applyFilter);

  // Run health (docs/health.md): alarms, the confidence premise, reward bugs, degenerate pluralities.
  (function health() {
    var h = data.health, box = document.getElementById('health');
    if (!h) { box.appendChild(el('p', 'not computed', 'muted')); return; }
    var ul = el('ul');
    h.alarms.forEach(function (a) { ul.appendChild(el('li', 'alarm: ' + a.message, 'no')); });
    [h.premise.label, h.premise.truth].forEach(function (p) { if (p && p.verdict !== 'too few') ul.appendChild(el('li', p.message, p.verdict === 'informative' ? '' : 'no')); });
    h.rewardBugs.forEach(function (b) { ul.appendChild(el('li', 'reward bug (' + b.kind + '): ' + b.message + '; e.g. step ' + b.example.step + ' question ' + b.example.question_id, 'no')); });
    if (h.degenerate.pluralities) ul.appendChild(el('li', 'degenerate pluralities: ' + h.degenerate.pluralities + ' questions whose vote class is mostly empty, truncated or repetition-collapsed roll-outs'));
    h.notes.forEach(function (n) { ul.appendChild(el('li', n, 'muted')); });
    if (!ul.firstChild) ul.appendChild(el('li', 'no alarm', 'ok'));
    box.appendChild(ul);
  })();

  var nl = document.getElementById('notices');
  if (!data.notices.length) nl.appendChild(el('p', 'none', 'muted'));
  else { var ul = el('ul'); data.notices.forEach(function (n) { ul.appendChild(el('li', n.level + ': ' + n.message)); }); nl.appendChild(ul); }
})();
</script>
</body>
</html>
`;
}

export async function runReport(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('report needs a PATH (a run folder or a log file)');
  if (a.positionals.length > 1) throw new UsageError(`report takes one PATH, got ${a.positionals.length}`);
  const html = flagString(a, 'html');
  const configured = flagString(a, 'configured-operator') as OperatorId | undefined;
  let errors = 0;
  const report = await buildReport(
    path,
    { operators: operatorsFromFlags(a), params: paramsFromFlags(a), configuredOperator: configured, title: flagString(a, 'title'), stdin: io.stdin as Readable, jobs: jobsFrom(flagString(a, 'jobs')), groundTruth: groundTruthFromFlags(a), maxGroupSize: maxGroupSizeFrom(flagString(a, 'max-group-size')) },
    (n) => {
      if (n.level === 'error') errors++;
      const where = n.file && !n.message.startsWith(n.file) ? `${n.file}${n.line ? `:${n.line}` : ''}: ` : '';
      io.stderr.write(`consensus-lens: ${n.level === 'info' ? '' : `${n.level}: `}${safeText(where + n.message)}\n`);
    },
  );
  if (report.total.groups === 0) {
    io.stderr.write(`consensus-lens report: no groups in ${path}\n`);
    return 1;
  }
  io.stdout.write(safeText(renderTable(report), true));
  if (html) {
    await writeFile(html, renderHtml(report));
    io.stdout.write(`report page: ${html}\n`);
  }
  return errors > 0 ? 1 : 0;
}
