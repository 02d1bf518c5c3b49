// `consensus-lens health PATH [--json]`: is the run healthy, and if not, since when and why?
// The per-step timeline, change-point alarms, the confidence premise, the reward-bug classes, the
// degenerate roll-outs and the "how many roll-outs" curve — all from src/engine/analysis/run-health.ts
// (docs/health.md), the same numbers the dashboard draws.
//
// Also accepts the score flags (--kappa, --tau, ...), --configured-operator and --jobs.
import type { Readable } from 'node:stream';
import { analyseRuns, dropPseudoLabelTruth, type GroundTruthMode, groupHealth, rolloutWhatIf, type GroupHealth, type RunHealth, createRunContext, scoreGroup, type Group, type OperatorId, type Params, type RunContext } from '../engine';
import { preparedOf, type RunCacheOptions } from '../logs/cache/cached-run';
import type { Notice, ReadStats } from '../logs/log-layer';
import { Outcome } from './outcome';
import type { MismatchSummary } from './report-types';
import { snakeKeys } from './snake-json';
import { forEachGroup } from './for-each-group';
import { jobsFrom } from './run-options';
import { defaultJobs } from '../util/worker-pool';
import { type CliIO, UsageError, configuredFromFlags, flagBool, flagString, groundTruthFromFlags, paramsFromFlags, parseCommand } from './args';
import { pseudoLabelNote } from './ground-truth';
import { safeText } from '../logs/safe-text';

export interface HealthJob {
  params: Partial<Params>;
  configuredOperator?: OperatorId;
  /** Run the "how many roll-outs" subsampling on this group. */
  whatif?: boolean;
}

/** Health of one group, as every surface computes it (runs in the worker threads too). */
export function healthOf(group: Group, job: HealthJob, ctx: RunContext): GroupHealth {
  const g = preparedOf(group, { reasoning: true, health: true });
  // Every operator, as the dashboard's health records are scored (src/extension/whatif/shard.ts):
  // one that cannot run on the group is simply absent from its record.
  const score = scoreGroup(g, { params: job.params, configuredOperator: job.configuredOperator }, ctx);
  const h = groupHealth(g, score, { configuredOperator: job.configuredOperator, params: job.params, ctx });
  if (job.whatif) {
    const w = rolloutWhatIf(g, score, job.params);
    if (w) h.whatif = w;
  }
  return h;
}

/** The "how many roll-outs" what-if runs on a systematic sample of at most this many groups. */
export const WHATIF_MAX_GROUPS = 256;

export interface HealthBuildOptions {
  stdin?: Readable;
  params?: Partial<Params>;
  configuredOperator?: OperatorId;
  jobs?: number;
  /** Permutations per change-point test (tests use fewer). */
  permutations?: number;
  /** Filled while reading (lines skipped, bytes for the progress line). */
  stats?: ReadStats;
  /** Read through the persisted run cache (src/logs/cache); `--no-cache` leaves it out. */
  cache?: RunCacheOptions;
  /** Called once per group read (the progress line). */
  onGroup?: () => void;
  /** docs/contract.md#ground-truth (default 'auto'). */
  groundTruth?: GroundTruthMode;
}

/** Reads a run once and returns its per-group health records (texts are dropped after each group). */
export async function collectHealth(path: string, opts: HealthBuildOptions, onNotice: (n: Notice) => void, whatif = true): Promise<GroupHealth[]> {
  const ctx = createRunContext();
  const records: GroupHealth[] = [];
  const sampled: { index: number; h: GroupHealth }[] = [];
  // Systematic sample with a doubling stride: group i is subsampled when i % stride == 0; when
  // more than WHATIF_MAX_GROUPS are kept the stride doubles and every other one is dropped.
  let stride = 1;
  let index = 0;
  const indexOf = new WeakMap<Group, number>();
  const jobFor = (g: Group): HealthJob => {
    const i = index++;
    indexOf.set(g, i);
    return { params: opts.params ?? {}, configuredOperator: opts.configuredOperator, whatif: whatif && i % stride === 0 };
  };
  await forEachGroup(
    path,
    onNotice,
    opts.jobs ?? defaultJobs(),
    (g) => healthOf(g, jobFor(g), ctx),
    (g) => ({ request: { kind: 'health', group: g, job: jobFor(g) } }),
    (h, g) => {
      records.push(h);
      opts.onGroup?.();
      if (!h.whatif) return;
      const i = indexOf.get(g) ?? 0;
      if (i % stride !== 0) {
        delete h.whatif;
        return;
      }
      sampled.push({ index: i, h });
      while (sampled.length > WHATIF_MAX_GROUPS) {
        stride *= 2;
        for (let k = sampled.length - 1; k >= 0; k--)
          if (sampled[k].index % stride !== 0) {
            delete sampled[k].h.whatif;
            sampled.splice(k, 1);
          }
      }
    },
    opts.stdin,
    { read: { stats: opts.stats, groundTruth: opts.groundTruth ?? 'auto' }, cache: opts.cache },
  );
  return records;
}

/**
 * Groups whose logged rewards differ from the configured operator's (docs/contract.md#grpo-view), the same check
 * `score` and `report` make: a reward bug the classes of docs/health.md may not name.
 */
export type { MismatchSummary } from './report-types';

export function mismatchSummary(records: readonly GroupHealth[]): MismatchSummary {
  const out: MismatchSummary = { checked: 0, groups: 0, operators: [] };
  const ops = new Set<string>();
  for (const h of records) {
    if (h.rewardMatches) {
      out.unnamed ??= { groups: 0, matches: {} };
      out.unnamed.groups++;
      for (const op of h.rewardMatches) out.unnamed.matches[op] = (out.unnamed.matches[op] ?? 0) + 1;
    }
    if (!h.rewards) continue;
    out.checked++;
    ops.add(h.rewards.configured);
    if (h.rewards.logged.some((v, i) => Math.abs(v - h.rewards!.expected[i]) > 1e-6)) out.groups++;
  }
  out.operators = [...ops];
  return out;
}

export interface RunHealthReport {
  run: string | null;
  health: RunHealth;
  mismatch: MismatchSummary;
}

/** The health of each run under PATH (one entry unless the folder holds several runs), largest first. */
export async function buildHealth(path: string, opts: HealthBuildOptions, onNotice: (n: Notice) => void): Promise<RunHealthReport[]> {
  const records = await collectHealth(path, opts, onNotice);
  // As `report` does: under auto, a verl "gts" that looks like the vote is left out of the analysis, and that is said.
  const pseudo = dropPseudoLabelTruth(records, opts.groundTruth ?? 'auto');
  if (pseudo) onNotice({ level: 'warning', message: `${path}: ground truth ${pseudoLabelNote(pseudo)}`, ...(path === '-' ? {} : { file: path }) });
  return analyseRuns(records, { permutations: opts.permutations, configuredOperator: opts.configuredOperator }).map((r) => ({ ...r, mismatch: mismatchSummary(records.filter((h) => (h.run ?? null) === r.run || (r.run === null && !h.run))) }));
}

/** Which operator, if any, the logged rewards of groups that name none equal. */
function rewardMatchWords(u: NonNullable<MismatchSummary['unnamed']>): string {
  const best = Object.entries(u.matches).sort((a, b) => b[1] - a[1]);
  if (!best.length) return `the logged rewards match no consensus operator's in any of ${plural(u.groups, 'group')}: a verifier reward?`;
  const [op, k] = best[0];
  const also = best.filter(([o, n]) => o !== op && n === k).map(([o]) => o);
  return `the logged rewards equal ${op}'s${also.length ? ` (and ${also.join(', ')}'s)` : ''} in ${k} of ${plural(u.groups, 'group')}`;
}

/** The reward-mismatch line of `health` and `report`. */
export function mismatchLine(m: MismatchSummary): string {
  const by = m.operators.length ? m.operators.join(', ') : 'majority';
  if (!m.checked && m.unnamed) return `Reward mismatches: not checked — the log names no consensus operator (--configured-operator OP checks against one); ${rewardMatchWords(m.unnamed)}`;
  if (!m.checked) return 'Reward mismatches: not checked (no training group logs a reward for every roll-out)';
  return m.groups
    ? `Reward mismatches: in ${plural(m.groups, 'group')} of ${m.checked} the logged reward differs from the configured operator's (${by}); consensus-lens score lists the roll-outs`
    : `Reward mismatches: none (${m.checked} ${m.checked === 1 ? 'group' : 'groups'} checked against ${by})`;
}

export const plural = (k: number, w: string, ws = `${w}s`): string => `${k} ${k === 1 ? w : ws}`;

const f = (x: number | null | undefined, d = 2): string => (x === null || x === undefined || !Number.isFinite(x) ? '-' : Math.abs(x) >= 1000 ? x.toFixed(0) : x.toFixed(d));

/** Column headings of the timeline table (short; the legend under it names them). */
const SHORT: Record<string, string> = {
  majority_ratio: 'maj',
  answer_entropy: 'H',
  distinct_answers: 'distinct',
  no_answer_share: 'no-ans',
  degenerate_share: 'degen',
  unformatted_share: 'unfmt',
  near_duplicate_share: 'near-dup',
  degenerate_plurality_share: 'degen-plur',
  response_length: 'length',
  gate: 'gate',
  confidence: 'conf',
  auroc_label: 'auroc',
  auroc_truth: 'auroc-gt',
  label_accuracy: 'acc',
  reward_accuracy: 'rw-acc',
  reward_mismatch_share: 'mismatch',
  signal_groups: 'signal',
};

/** The one-line definitions users ask for (they confuse the two accuracies). */
export const ACCURACY_DEFINITIONS =
  'label accuracy = share of questions whose pseudo-label equals the logged ground truth; reward accuracy = share of roll-outs whose pseudo-reward (1 in the label\u2019s class) equals the reward the true answer gives, so it stays high under a wrong label when most roll-outs are wrong anyway (0 either way) (docs/health.md §2)';

/** The learning-signal section of `health` (docs/health.md §6). */
export function renderLearningSignal(h: RunHealth): string[] {
  const ls = h.learningSignal;
  if (!ls) return [];
  const out: string[] = [];
  out.push(`Learning signal (groups whose effective GRPO advantage A_i·w_q is non-zero: the part of the batch that still teaches; the run trains with ${ls.configured}):`);
  out.push('  whole run: ' + ls.operators.map((op) => `${op} ${f(ls.total[op]?.groups)} of groups (${f(ls.total[op]?.rollouts)} of roll-outs)`).join(', '));
  const sat = ls.saturated.filter((v): v is number => v !== null);
  const satMean = sat.length ? sat.reduce((a, b) => a + b, 0) / sat.length : null;
  let line = `  saturated (every roll-out gives the same answer: no signal under the vote): ${f(satMean)} of groups per step on average`;
  const kept = ls.saturatedCoreSignal?.filter((v): v is number => v !== null) ?? [];
  if (kept.length) line += `; CoRE's graded rewards keep signal in ${f(kept.reduce((a, b) => a + b, 0) / kept.length)} of them`;
  out.push(line);
  if (h.steps.length) {
    const header = ['step', ...ls.operators, 'saturated', ...(ls.coreVsVote ? ['core\u2212vote'] : [])];
    const rows = h.steps.map((step, k) => [String(step), ...ls.operators.map((op) => f(ls.groups[op]![k])), f(ls.saturated[k]), ...(ls.coreVsVote ? [f(ls.coreVsVote[k])] : [])]);
    const widths = header.map((_, c) => Math.max(header[c].length, ...rows.map((r) => r[c].length)));
    const fmt = (r: string[]) => '  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
    out.push(fmt(header));
    for (const r of rows) out.push(fmt(r));
    out.push('  per operator: share of the step\u2019s groups with signal; core\u2212vote: CoRE\u2019s share minus the vote\u2019s');
  }
  out.push('');
  return out;
}

/** The health section `report` prints (alarms, premise, reward bugs, degenerate pluralities). */
export function renderHealthSummary(h: RunHealth, run?: string | null): string {
  const out: string[] = [];
  out.push(`health${run ? ` of ${run}` : ''}: ${h.alarms.length ? `${h.alarms.length} alarm${h.alarms.length === 1 ? '' : 's'}` : 'no alarm'}${h.rewardBugs.length ? `, ${h.rewardBugs.length} reward-bug class${h.rewardBugs.length === 1 ? '' : 'es'}` : ''} (consensus-lens health for the timeline)`);
  for (const a of h.alarms) out.push(`  alarm: ${a.message}`);
  const premises = [h.premise.label, h.premise.truth].filter((p) => p && p.verdict !== 'too few');
  for (const p of premises) out.push(`  ${p!.verdict === 'informative' ? '' : 'warning: '}${p!.message}`);
  for (const b of h.rewardBugs) out.push(`  reward bug (${b.kind}): ${b.message}; e.g. step ${b.example.step} question ${b.example.question_id}`);
  const d = h.degenerate;
  if (d.pluralities) {
    const rescued = Object.entries(d.rescued).map(([op, k]) => `${op} ${k}`).join(', ');
    out.push(`  degenerate pluralities: ${d.pluralities} question${d.pluralities === 1 ? '' : 's'} where the vote's class is mostly empty, truncated or repetition-collapsed roll-outs${rescued ? ` (another label from: ${rescued})` : ''}; e.g. step ${d.examples[0].step} question ${d.examples[0].question_id}`);
  }
  return out.join('\n') + '\n';
}

/** The full text of `health`. */
export function renderHealth(h: RunHealth, path: string, mismatch?: MismatchSummary): string {
  const out: string[] = [];
  out.push(`${path === '-' ? 'standard input' : path}: ${plural(h.steps.length, 'step')}, ${plural(h.groups, 'group')}, ${plural(h.rollouts, 'roll-out')}`);
  out.push('');
  out.push(h.alarms.length ? `Alarms (${h.alarms.length}):` : 'Alarms: none');
  for (const a of h.alarms) out.push(`  ${a.message}  (p = ${a.p.toFixed(3)})`);
  out.push('');
  if (h.premise.label.groups === 0 && (!h.premise.truth || h.premise.truth.groups === 0)) out.push('Confidence premise: not checked (no question with confidences and both kinds of roll-out)');
  else {
    out.push('Confidence premise:');
    out.push(`  ${h.premise.label.message}`);
    if (h.premise.truth) out.push(`  ${h.premise.truth.message}`);
  }
  out.push('');
  out.push(h.rewardBugs.length ? 'Reward bugs:' : mismatch?.groups ? 'Reward bugs: no known class (see the mismatches below)' : 'Reward bugs: none found');
  for (const b of h.rewardBugs) out.push(`  [${b.kind}] ${b.message}; e.g. step ${b.example.step} question ${b.example.question_id}${b.example.run ? ` (${b.example.run})` : ''}`);
  if (mismatch) out.push(mismatchLine(mismatch));
  out.push('');
  const d = h.degenerate;
  const fl = d.flags;
  out.push(
    `Degenerate roll-outs: ${d.degenerateRollouts} of ${h.rollouts} (empty ${fl.empty}, truncated ${fl.truncated}, repetition-collapsed ${fl.repetitive}); no answer ${fl.noAnswer}, unformatted ${fl.unformatted}, near-duplicate ${fl.nearDuplicate}`,
  );
  if (d.pluralities) {
    const rescued = Object.entries(d.rescued).map(([op, k]) => `${op} ${k}`).join(', ');
    out.push(`  degenerate pluralities: ${plural(d.pluralities, "question")}${rescued ? `; another label from ${rescued}` : ''}`);
    for (const e of d.examples.slice(0, 5)) out.push(`    step ${e.step} question ${e.question_id}${e.run ? ` (${e.run})` : ''}: vote label ${e.label === '' ? '"" (empty box)' : JSON.stringify(e.label)}`);
  }
  out.push('');
  const w = h.rolloutsWhatIf;
  if (w) {
    out.push(`How many roll-outs (${w.metric === 'accuracy' ? 'pseudo-label accuracy vs ground truth' : 'agreement with the full-N label'}; ${w.draws} seeded draws per N' over ${w.groups} groups; idf not refit):`);
    const rows = [["N'", ...w.sizes], ...Object.entries(w.values).map(([op, vals]) => [op, ...vals!.map((v) => f(v))])];
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    for (const r of rows) out.push('  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    out.push('');
  }
  out.push(...renderLearningSignal(h));
  if (h.series.length && h.steps.length) {
    out.push('Timeline:');
    const header = ['step', ...h.series.map((s) => SHORT[s.id] ?? s.id)];
    const rows = h.steps.map((step, k) => [String(step), ...h.series.map((s) => f(s.values[k], s.id === 'response_length' ? 0 : s.id === 'distinct_answers' ? 1 : 2))]);
    const alarmAt = new Set(h.alarms.map((a) => `${a.step}|${a.series}`));
    rows.forEach((r, k) => h.series.forEach((s, c) => alarmAt.has(`${h.steps[k]}|${s.id}`) && (r[c + 1] = '*' + r[c + 1])));
    const widths = header.map((_, c) => Math.max(header[c].length, ...rows.map((r) => r[c].length)));
    const fmt = (r: string[]) => '  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
    out.push(fmt(header));
    for (const r of rows) out.push(fmt(r));
    out.push('  ' + h.series.map((s) => `${SHORT[s.id] ?? s.id} = ${s.label}`).join('; ') + (h.alarms.length ? '; * = an alarm starts here' : ''));
    if (h.series.some((s) => s.id === 'label_accuracy' || s.id === 'reward_accuracy')) out.push(`  ${ACCURACY_DEFINITIONS}`);
    out.push('');
  }
  for (const n of h.notes) out.push(`note: ${n}`);
  return out.join('\n').replace(/\n+$/, '') + '\n';
}

export async function runHealth(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('health', argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('health needs a PATH (a run folder or a log file)');
  if (a.positionals.length > 1) throw new UsageError(`health takes one PATH, got ${a.positionals.length}`);
  const configured = configuredFromFlags(a);
  const outcome = new Outcome(io, a);
  const runs = await buildHealth(
    path,
    { params: paramsFromFlags(a), configuredOperator: configured, stdin: io.stdin as Readable, jobs: jobsFrom(flagString(a, 'jobs')), stats: outcome.stats, onGroup: () => outcome.progress?.tick(), cache: flagBool(a, 'no-cache') ? undefined : {}, groundTruth: groundTruthFromFlags(a) },
    outcome.notice,
  );
  const h = runs[0].health;
  if (h.groups === 0) {
    outcome.finish();
    io.stderr.write(`consensus-lens health: no groups in ${path}\n`);
    return 1;
  }
  const code = outcome.finish();
  // Several runs (verl's rollout/ and validation/): the largest at the top level, each in `runs`.
  if (flagBool(a, 'json')) io.stdout.write(JSON.stringify(healthJson(path, runs)) + '\n');
  else io.stdout.write(safeText(runs.map((r) => renderHealth(r.health, runs.length > 1 ? `${path} (run ${r.run ?? '-'})` : path, r.mismatch)).join('\n'), true));
  return code;
}

/** `health --json` (docs/schemas/health.schema.json): snake_case keys, as `score` and `report`. */
export function healthJson(path: string, runs: RunHealthReport[]): Record<string, unknown> {
  const one = (r: RunHealthReport) => snakeKeys({ ...(r.run !== null ? { run: r.run } : {}), ...r.health, reward_mismatch: r.mismatch }) as Record<string, unknown>;
  return { path, ...one(runs[0]), ...(runs.length > 1 ? { runs: runs.map(one) } : {}) };
}
