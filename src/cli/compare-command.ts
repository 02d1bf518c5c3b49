// `consensus-lens compare RUN_A RUN_B [--json]`: two runs side by side (README "Comparing
// runs"): per step each run's label accuracy, reward accuracy, majority ratio, mean gate and
// groups with learning signal; each run's health alarms; where the labels part on the questions
// both saw. The numbers come from src/engine/analysis/runs-compare.ts over the same per-group
// health records `health` computes.
//
// --operator-a / --operator-b: the operator each run is read with (default --configured-operator,
// else the vote); `compare RUN RUN --operator-a majority --operator-b core` compares two
// operators on one run. Also accepts the score flags (--kappa, --tau, ...) and --jobs.
import { resolve } from 'node:path';
import { analyseRun, pseudoLabelEvidence, type GroundTruthMode, COMPARE_SERIES, compareRuns, trainingRecords, type RunsComparison, OPERATOR_IDS, type OperatorId, type Params } from '../engine';
import type { Notice } from '../logs/log-layer';
import { collectHealth, ACCURACY_DEFINITIONS } from './health';
import { pseudoLabelNote } from './ground-truth';
import { jobsFrom, noticePrinter } from './run-options';
import { type CliIO, UsageError, configuredFromFlags, groundTruthFromFlags, flagBool, flagString, paramsFromFlags, parseCommand } from './args';
import { snakeKeys } from './snake-json';
import { safeText } from '../logs/safe-text';

export interface CompareOptions {
  operatorA: OperatorId;
  operatorB: OperatorId;
  params?: Partial<Params>;
  jobs?: number;
  /** Permutations per change-point test (tests use fewer). */
  permutations?: number;
  /** docs/contract.md#ground-truth (default 'auto'). */
  groundTruth?: GroundTruthMode;
}

async function side(path: string, operator: OperatorId, opts: CompareOptions, onNotice: (n: Notice) => void) {
  const all = await collectHealth(path, { params: opts.params, configuredOperator: operator, jobs: opts.jobs, groundTruth: opts.groundTruth }, onNotice, false);
  const records = trainingRecords(all, path, (message) => onNotice({ level: 'warning', message }));
  // Under auto, a verl "gts" that looks like the vote is said, and the accuracy against it still
  // shown (a comparison of two runs' labels is what the reader came for); `ignore` drops it.
  const pseudo = (opts.groundTruth ?? 'auto') === 'auto' ? pseudoLabelEvidence(records) : null;
  if (pseudo) onNotice({ level: 'warning', message: `${path}: ground truth ${pseudoLabelNote(pseudo)}`, file: path });
  return { records, health: analyseRun(records, { configuredOperator: operator, permutations: opts.permutations }) };
}

export async function buildComparison(pathA: string, pathB: string, opts: CompareOptions, onNotice: (n: Notice) => void): Promise<RunsComparison> {
  const a = await side(pathA, opts.operatorA, opts, onNotice);
  const b = await side(pathB, opts.operatorB, opts, onNotice);
  return compareRuns({ name: pathA, operator: opts.operatorA, ...a }, { name: pathB, operator: opts.operatorB, ...b });
}

const f = (x: number | null | undefined, d = 2): string => (x === null || x === undefined || !Number.isFinite(x) ? '-' : Math.abs(x) >= 1000 ? x.toFixed(0) : x.toFixed(d));
const pct = (k: number, n: number) => (n ? `${((100 * k) / n).toFixed(1)}%` : '-');
const label = (l: string | null) => (l === null ? '(none)' : JSON.stringify(l));

/** How many parting questions the text lists (--json has all). */
export const TEXT_DISAGREEMENTS = 20;

export function renderComparison(c: RunsComparison): string {
  const out: string[] = [];
  const [A, B] = c.runs;
  for (const [tag, r] of [['A', A], ['B', B]] as const) {
    out.push(`${tag}: ${r.name} (read with ${r.operator}): ${r.steps} steps, ${r.groups} groups, ${r.rollouts} roll-outs; label accuracy ${r.labelAccuracy.value === null ? '-' : `${pct(r.labelAccuracy.correct, r.labelAccuracy.over)} (${r.labelAccuracy.correct}/${r.labelAccuracy.over})`}, reward accuracy ${f(r.rewardAccuracy)}`);
  }
  out.push('');
  const cols = COMPARE_SERIES.filter((s) => s.id !== 'rollouts_seen');
  const SHORT: Record<string, string> = { label_accuracy: 'acc', reward_accuracy: 'rw-acc', majority_ratio: 'maj', gate: 'gate', signal_groups: 'signal' };
  const header = ['step', ...cols.flatMap((s) => [`${SHORT[s.id]} A`, `${SHORT[s.id]} B`])];
  const rows = c.steps.map((st, k) => [String(st), ...cols.flatMap((s) => [f(A.series[s.id][k], s.digits), f(B.series[s.id][k], s.digits)])]);
  const widths = header.map((_, i) => Math.max(header[i].length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => '  ' + r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  out.push('Per step (aligned by step; "-": the run has no data there):');
  out.push(fmt(header));
  for (const r of rows) out.push(fmt(r));
  out.push('  ' + cols.map((s) => `${SHORT[s.id]} = ${s.label}`).join('; '));
  out.push(`  ${ACCURACY_DEFINITIONS}`);
  out.push('');
  for (const [tag, r] of [['A', A], ['B', B]] as const) {
    out.push(r.alarms.length ? `Alarms of ${tag} (${r.alarms.length}):` : `Alarms of ${tag}: none`);
    for (const al of r.alarms) out.push(`  ${al.message}  (p = ${al.p.toFixed(3)})`);
  }
  out.push('');
  const s = c.shared;
  out.push(`Questions both runs saw: ${s.questions} (${s.pairs} paired occurrences, ${s.compared} where both operators ran); labels agree on ${s.agree}, part on ${s.part} (${pct(s.part, s.compared)})`);
  if (s.withTruth) out.push(`  with logged ground truth (${s.withTruth} pairs): A correct ${pct(s.aCorrect, s.withTruth)}, B correct ${pct(s.bCorrect, s.withTruth)}`);
  if (s.part) out.push(`  where they part, the ground truth agrees with A on ${s.aRight}, with B on ${s.bRight}, with neither on ${s.neitherRight}${s.part > s.partWithTruth ? `; ${s.part - s.partWithTruth} without ground truth` : ''}`);
  if (c.disagreements.length) {
    out.push('');
    out.push(`Where the labels part${c.disagreements.length > TEXT_DISAGREEMENTS ? ` (first ${TEXT_DISAGREEMENTS} of ${c.disagreements.length}; --json lists all)` : ''}:`);
    for (const d of c.disagreements.slice(0, TEXT_DISAGREEMENTS)) {
      const at = d.stepA === d.stepB ? `step ${d.stepA}` : `step ${d.stepA} (B: ${d.stepB})`;
      const who = d.agrees === null ? '' : d.agrees === 'neither' ? `; ground truth ${label(d.truth)}: neither` : d.agrees === 'both' ? `; ground truth ${label(d.truth)}: both` : `; ground truth ${label(d.truth)}: ${d.agrees.toUpperCase()}`;
      out.push(`  ${at}  question ${d.questionId}: A ${label(d.labelA)}  B ${label(d.labelB)}${who}`);
    }
  }
  const notes = [...A.notes, ...B.notes];
  if (notes.length) out.push('');
  for (const n of notes) out.push(`note: ${n}`);
  return out.join('\n') + '\n';
}

function operatorFlag(v: string | undefined, flag: string): OperatorId | undefined {
  if (v === undefined) return undefined;
  if (!(OPERATOR_IDS as readonly string[]).includes(v)) throw new UsageError(`--${flag}: unknown operator "${v}" (one of ${OPERATOR_IDS.join(', ')})`);
  return v as OperatorId;
}

export async function runCompare(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('compare', argv);
  if (a.positionals.length !== 2) throw new UsageError(`compare takes two runs (RUN_A RUN_B: folders or log files), got ${a.positionals.length}`);
  const [pathA, pathB] = a.positionals;
  if (pathA === '-' || pathB === '-') throw new UsageError('compare reads two runs from disk: standard input ("-") is not one');
  const configured = configuredFromFlags(a) ?? 'majority';
  const operatorA = operatorFlag(flagString(a, 'operator-a'), 'operator-a') ?? configured;
  const operatorB = operatorFlag(flagString(a, 'operator-b'), 'operator-b') ?? configured;
  if (resolve(pathA) === resolve(pathB) && operatorA === operatorB) throw new UsageError(`comparing ${pathA} with itself under one operator (${operatorA}): give --operator-a and --operator-b`);
  const print = noticePrinter(io);
  const c = await buildComparison(pathA, pathB, { operatorA, operatorB, params: paramsFromFlags(a), jobs: jobsFrom(flagString(a, 'jobs')), groundTruth: groundTruthFromFlags(a) }, print);
  for (const [i, r] of c.runs.entries())
    if (r.groups === 0) {
      io.stderr.write(`consensus-lens compare: no groups in ${i === 0 ? pathA : pathB}\n`);
      return 1;
    }
  // --json: snake_case keys, as every JSON the command prints.
  io.stdout.write(flagBool(a, 'json') ? JSON.stringify(snakeKeys(c)) + '\n' : safeText(renderComparison(c), true));
  return print.errors > 0 ? 1 : 0;
}
