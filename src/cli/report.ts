// `consensus-lens report PATH [--html FILE]` (docs/contract.md#command-line): a per-step summary of a run — groups, regimes,
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
import { readFileSync } from 'node:fs';
import { escapeHtml } from '../util/html';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type * as Crypto from 'node:crypto';
import { isCorrect, accuracyOf, analyseRun, answersEqual, countAccuracy, createRunContext, emptyAccuracy, formatAccuracy, groupHealth, OPERATOR_IDS, scoreGroup, dropPseudoLabelTruth, type AccuracyCount, type GroundTruthMode, type Group, type GroupHealth, type GroupScore, type OperatorId, type Params, type RunContext, } from '../engine';
import type { Notice, ReadStats } from '../logs/log-layer';
import { forEachGroup } from './for-each-group';
import { jobsFrom, maxGroupSizeFrom } from './run-options';
import { reasoningFor, type ScoreJob } from './pipeline';
import { pseudoLabelNote } from './ground-truth';
import { preparedOf, type RunCacheOptions } from '../logs/cache/cached-run';
import { lookupResults } from '../logs/cache/results';
import { Outcome } from './outcome';
import { snakeKeys } from './snake-json';
import { mismatchLine, mismatchSummary, plural, renderHealthSummary } from './health';
import { SERIES_COLOURS, SERIES_COLOURS_DARK, type ReportGroup, type ReportStep, type RunReport, type RunSection, type StreamReport } from './report-types';
import { defaultJobs } from '../util/worker-pool';
import { type CliIO, UsageError, configuredFromFlags, flagBool, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseCommand } from './args';
import { safeText } from '../logs/safe-text';

export type { ReportGroup, ReportStep, StreamReport, RunSection, RunReport } from './report-types';

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function groupRow(s: GroupScore, truth: string | null, forms?: readonly string[]): ReportGroup {
  const labels: Record<string, string | null> = {};
  const gates: Record<string, number | null> = {};
  const correct: Record<string, boolean | null> = {};
  for (const [id, r] of Object.entries(s.results)) {
    if (!r) continue;
    labels[id] = r.label;
    gates[id] = finite(r.gate);
    correct[id] = isCorrect(r.label, { groundTruth: truth, groundTruthForms: forms });
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
  if (s.rewardMismatch?.indices.length) row.reward_mismatches = s.rewardMismatch.indices.length;
  return row;
}

/** One row of the report for a group, scored as `score` would (labels, gates, correctness against
 * logged ground truth), and the group's health record (docs/health.md) from the same features.
 * Runs in the worker threads too. */
export function reportRow(group: Group, job: ScoreJob, ctx: RunContext): { row: ReportGroup; health: GroupHealth } {
  const g = preparedOf(group, { reasoning: reasoningFor(group, job), health: true });
  const score = scoreGroup(g, { operators: job.operators, params: job.params, configuredOperator: job.configuredOperator }, ctx);
  const row = groupRow(score, group.groundTruth ?? null, group.groundTruthForms);
  if (group.stream) row.stream = group.stream;
  return { row, health: groupHealth(g, score, { configuredOperator: job.configuredOperator, params: job.params, ctx }) };
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
  /** docs/contract.md#ground-truth: 'auto' (default), 'use' (as logged), 'ignore' (none). */
  groundTruth?: GroundTruthMode;
  operators?: OperatorId[];
  params?: Partial<Params>;
  configuredOperator?: OperatorId;
  title?: string;
  /** Worker threads (0: in-process); default both cores. */
  jobs?: number;
  /** Largest group scored (--max-group-size). */
  maxGroupSize?: number;
  /** Filled while reading (lines skipped; bytes for the progress line). */
  stats?: ReadStats;
  /** Read through the persisted run cache (src/logs/cache); `--no-cache` leaves it out. */
  cache?: RunCacheOptions;
  /** Called once per group read (the progress line). */
  onGroup?: () => void;
}

/**
 * The run a group's report section is: its run name without the folder of its stream, so verl's
 * `rollout/` and `val/`, NeMo RL's `exp/` and `exp/val/`, TRL's `completions/train` and `eval` are
 * one run with a validation section.
 */
export function reportRunOf(run: string | undefined, stream?: 'validation'): string {
  const parts = (run ?? '').split('/').filter(Boolean);
  const last = parts[parts.length - 1];
  const strip = stream === 'validation' ? ['val', 'validation', 'eval', 'evaluation'] : ['rollout', 'rollouts', 'train', 'training'];
  if (last !== undefined && strip.includes(last.toLowerCase())) parts.pop();
  return parts.join('/');
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
  const take = ({ row, health }: { row: ReportGroup; health: GroupHealth }) => {
    for (const id of Object.keys(row.labels)) seenOps.add(id);
    rows.push(row);
    healths.push(health);
    opts.onGroup?.();
  };
  // The rows at this setting on an unchanged run are persisted too (src/logs/cache/results.ts).
  const results = opts.cache && path !== '-' ? await lookupResults<{ row: ReportGroup; health: GroupHealth }>(path, { job, groundTruth: opts.groundTruth ?? 'auto' }, opts.cache.dir) : undefined;
  if (results?.hit) {
    for (const n of results.notices) sink(n);
    for (const v of results.values) take(v);
  } else {
    const values: { row: ReportGroup; health: GroupHealth }[] = [];
    await forEachGroup(
      path,
      sink,
      opts.jobs ?? defaultJobs(),
      (g) => reportRow(g, job, ctx),
      (g) => ({ request: { kind: 'report', group: g, job } }),
      (v) => {
        // a structured copy: the run's later passes below change rows in place
        if (results) values.push(structuredClone(v));
        take(v);
      },
      opts.stdin,
      { read: { groundTruth: opts.groundTruth ?? 'auto', stats: opts.stats }, maxGroupSize: opts.maxGroupSize, cache: opts.cache },
    );
    // a run with skipped lines exits 3: rows read back from the cache must not hide them
    if ((opts.stats?.skipped ?? 0) === 0) results?.save([...notices], values);
  }
  const truthMode = opts.groundTruth ?? 'auto';
  const pseudo = dropPseudoLabelTruth(healths, truthMode);
  const groundTruthNote = pseudo ? pseudoLabelNote(pseudo) : undefined;
  if (groundTruthNote) sink({ level: 'warning', message: `${path}: ground truth ${groundTruthNote}`, file: path === '-' ? undefined : path });
  const operators = OPERATOR_IDS.filter((id) => seenOps.has(id));
  // Each run of the path on its own (as `health` does): steps of different runs are never summed.
  const keys = new Map<string, { rows: ReportGroup[]; healths: GroupHealth[] }>();
  rows.forEach((r, k) => {
    const key = reportRunOf(r.run, r.stream);
    let e = keys.get(key);
    if (!e) keys.set(key, (e = { rows: [], healths: [] }));
    e.rows.push(r);
    e.healths.push(healths[k]);
  });
  const sections = [...keys.entries()]
    .map(([key, e]): RunSection => {
      const train = e.rows.filter((r) => r.stream !== 'validation');
      const val = e.rows.filter((r) => r.stream === 'validation');
      const trainHealth = e.healths.filter((h) => h.stream !== 'validation');
      const { steps, total } = streamReport(train, operators);
      return {
        run: keys.size > 1 ? key || '.' : null,
        steps,
        total,
        ...(val.length ? { validation: streamReport(val, operators) } : {}),
        health: analyseRun(trainHealth.length ? trainHealth : e.healths),
        reward_mismatch: mismatchSummary(trainHealth),
      };
    })
    .sort((a, b) => b.total.groups + (b.validation?.total.groups ?? 0) - a.total.groups - (a.validation?.total.groups ?? 0));
  const top = sections[0] ?? { run: null, ...streamReport([], operators), reward_mismatch: mismatchSummary([]) };
  return {
    format: 'consensus-lens/report/v1',
    title: opts.title ?? `Consensus Lens report: ${path}`,
    path,
    generated: new Date().toISOString(),
    operators,
    params: opts.params ?? {},
    steps: top.steps,
    total: top.total,
    ...(top.validation ? { validation: top.validation } : {}),
    ground_truth_mode: truthMode,
    ...(groundTruthNote ? { ground_truth_note: groundTruthNote } : {}),
    ...(pseudo ? { ground_truth_looks_like_vote: pseudo } : {}),
    groups: rows,
    notices: notices.slice(0, 200),
    ...(top.health ? { health: top.health } : {}),
    reward_mismatch: top.reward_mismatch,
    ...(sections.length > 1 ? { runs: sections } : {}),
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

const pct = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : `${(100 * x).toFixed(1)}%`);
const num = (x: number | null | undefined, d = 3): string => (x === null || x === undefined ? '-' : x.toFixed(d));

/** The per-step summary as aligned text tables: each run of the path on its own. */
export function renderTable(r: RunReport): string {
  const sections: RunSection[] = r.runs ?? [{ run: null, steps: r.steps, total: r.total, validation: r.validation, health: r.health, reward_mismatch: r.reward_mismatch ?? { checked: 0, groups: 0, operators: [] } }];
  const where = r.path === '-' ? 'standard input' : r.path;
  const head = r.runs ? [`${where}: ${plural(r.runs.length, 'run')}; operators ${r.operators.join(', ') || '(none)'}`, ''] : [];
  const body = sections.map((s) => renderSection(r, s, s.run === null ? where : `run ${s.run}`));
  const tail = [...(r.ground_truth_note ? [`ground truth: ${r.ground_truth_note}`] : []), GLOSSARY_LINE];
  return [...head, body.join('\n\n'), '', ...tail].join('\n') + '\n';
}

/** Where the report's terms are defined (printed under every report). */
export const GLOSSARY_LINE = 'terms (regime, saturated, contested, floor, flip, gate, (k), reward mismatch): docs/glossary.md';

function renderSection(r: RunReport, sec: RunSection, name: string): string {
  const ops = r.operators;
  const flipOps = ops.filter((o) => o !== 'majority' && ops.includes('majority'));
  const gateOps = ops.filter((o) => o === 'ec' || o === 'core');
  const t = sec.total;
  const anyTruth = t.with_truth > 0;
  const out: string[] = [];
  if (t.groups === 0) out.push(`${name}: no training groups${sec.validation ? ' (a validation stream only)' : ''}`);
  else {
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
    const rows = [header, ...sec.steps.map((s) => line(s, String(s.step))), line(t, 'all')];
    const widths = header.map((_, c) => Math.max(...rows.map((row) => row[c].length)));
    const fmt = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
    out.push(`${name}: ${plural(sec.steps.length, 'step')}, ${plural(t.groups, 'group')}, ${plural(t.rollouts, 'roll-out')}; operators ${ops.join(', ') || '(none)'}`);
    out.push(fmt(header));
    for (const row of rows.slice(1, -1)) out.push(fmt(row));
    if (sec.steps.length > 1) out.push(fmt(rows[rows.length - 1]));
    const partial = ops.some((o) => t.accuracy_groups[o] !== undefined && t.accuracy_groups[o] < t.with_truth);
    if (anyTruth) out.push(`accuracy: pseudo-label vs logged ground truth over ${plural(t.with_truth, 'group')}${partial ? ', (k) = over the k groups the operator could run on' : ''} (a diagnostic; ground truth is never an input)${r.ground_truth_looks_like_vote ? `; the logged ground truth looks like the pseudo-label (equal to the vote in ${r.ground_truth_looks_like_vote.matching} of ${r.ground_truth_looks_like_vote.groups} groups): if it is, these figures are agreement with the vote, and the health analysis leaves it out` : ''}`);
    else out.push(r.ground_truth_mode === 'ignore' ? 'accuracy: ground truth ignored (--ground-truth ignore)' : 'accuracy: no ground truth logged');
    out.push(mismatchLine(sec.reward_mismatch).replace(/^Reward mismatches/, 'reward mismatch'));
    if (sec.health) out.push(renderHealthSummary(sec.health).trimEnd());
  }
  if (sec.validation) out.push('', ...validationTable(sec.validation, ops));
  return out.join('\n');
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
  const out = [`validation: ${plural(v.steps.length, 'step')}, ${plural(v.total.groups, 'group')}, ${plural(v.total.rollouts, 'roll-out')} (a separate stream: samples scored against the real answer, no consensus rewards)`, fmt(header)];
  for (const row of rows.slice(1, -1)) out.push(fmt(row));
  if (v.steps.length > 1) out.push(fmt(rows[rows.length - 1]));
  out.push(v.total.with_truth ? `validation accuracy: the label vs the real answer over ${plural(v.total.with_truth, 'group')}` : 'validation accuracy: no ground truth logged');
  return out;
}

/** JSON for embedding in a <script> block: '<' (and U+2028/9) escaped so no content can end the block. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/**
 * The page's script: webview/report/main.ts, bundled by scripts/build.mjs beside the CLI
 * (dist/webview/report-page.js; from the sources, the built one).
 */
export function reportPageScript(): string {
  for (const f of [join(__dirname, 'webview', 'report-page.js'), join(__dirname, '..', '..', 'dist', 'webview', 'report-page.js')]) {
    try {
      // "</script" cannot end the inline block: the same text, escaped, in a string or regex
      return readFileSync(f, 'utf8').replace(/<\/script/gi, '<\\/script').replace(/\/\/# sourceMappingURL=.*$/m, '');
    } catch {
      // next candidate
    }
  }
  throw new Error('the report page script (dist/webview/report-page.js) is missing: run npm run build');
}


/** The self-contained report page: one file, no network; its CSP allows only its own style and script (by nonce). */
export function renderHtml(r: RunReport): string {
  // A fresh nonce per page: the one inline script and style run, nothing injected could.
  // node:crypto is required here, on use: loading it costs every CLI start-up ~7 ms.
  const nonce = (require('node:crypto') as typeof Crypto).randomBytes(16).toString('base64');
  const series = (colours: string[]) => colours.map((c, i) => `svg .series-${i} { stroke: ${c}; } svg text.series-${i} { fill: ${c}; stroke: none; }`).join('\n');
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
h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 1.8rem 0 .5rem; } h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.muted { color: var(--muted); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: right; }
th { cursor: pointer; user-select: none; position: sticky; top: 0; background: var(--bg); }
td.text, th.text { text-align: left; max-width: 22rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
tr.total td { font-weight: 600; }
.ok { color: var(--good); } .no { color: var(--bad); }
svg { max-width: 100%; }
svg text.axis { fill: var(--muted); font-size: 11px; }
svg text.legend { font-size: 12px; font-weight: 600; }
svg line.grid { stroke: currentColor; stroke-opacity: .15; }
svg path.line { fill: none; stroke-width: 2; }
${series(SERIES_COLOURS)}
@media (prefers-color-scheme: dark) {
${series(SERIES_COLOURS_DARK)}
}
input[type=search] { padding: .3rem .5rem; min-width: 18rem; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div class="muted" id="meta"></div>
<div id="runs"></div>
<h2>Groups</h2>
<p><label>Filter <input type="search" id="filter" placeholder="question id, label, regime…"></label> <label><input type="checkbox" id="flipsOnly"> only groups where an operator overturns the vote</label></p>
<div id="groups"></div>
<h2>Notices</h2>
<div id="notices"></div>
<p class="muted">Terms (regime, saturated, contested, floor, flip, gate, (k), reward mismatch): docs/glossary.md of Consensus Lens.</p>
<script type="application/json" id="report-data">${embedJson(r)}</script>
<script nonce="${nonce}">
${reportPageScript()}
</script>
</body>
</html>
`;
}

/** `report --json` (docs/schemas/report.schema.json): snake_case keys throughout, as `score` and `health`. */
export function reportJson(r: RunReport): Record<string, unknown> {
  return snakeKeys(r) as Record<string, unknown>;
}

export async function runReport(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('report', argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('report needs a PATH (a run folder or a log file)');
  if (a.positionals.length > 1) throw new UsageError(`report takes one PATH, got ${a.positionals.length}`);
  const html = flagString(a, 'html');
  const configured = configuredFromFlags(a);
  const outcome = new Outcome(io, a);
  const report = await buildReport(
    path,
    {
      operators: operatorsFromFlags(a),
      params: paramsFromFlags(a),
      configuredOperator: configured,
      title: flagString(a, 'title'),
      stdin: io.stdin as Readable,
      jobs: jobsFrom(flagString(a, 'jobs')),
      groundTruth: groundTruthFromFlags(a),
      maxGroupSize: maxGroupSizeFrom(flagString(a, 'max-group-size')),
      stats: outcome.stats,
      onGroup: () => outcome.progress?.tick(),
      cache: flagBool(a, 'no-cache') ? undefined : {},
    },
    outcome.notice,
  );
  const code = outcome.finish();
  if (report.groups.length === 0) {
    io.stderr.write(`consensus-lens report: no groups in ${path}\n`);
    return 1;
  }
  io.stdout.write(flagBool(a, 'json') ? JSON.stringify(reportJson(report)) + '\n' : safeText(renderTable(report), true));
  if (html) {
    await writeFile(html, renderHtml(report));
    if (!flagBool(a, 'json')) io.stdout.write(`report page: ${html}\n`);
  }
  return code;
}
