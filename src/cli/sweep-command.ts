// `consensus-lens sweep` (docs/contract.md#command-line): every setting of a parameter grid over a
// run, setting-major from the run's persisted features (src/logs/cache), or group by group.
import { errorMessage } from '../util/errors';
import { DEFAULT_MAX_GROUP_SIZE, PARAM_SPECS, resolveParams, type OperatorId, type Params } from '../engine';
import type { Footer } from '../logs/cache/cached-run';
import { type CliIO, UsageError, flagBool, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseCommand, parseList } from './args';
import { ShardState, addStats, emptyStats, scanSetting, sweepGroup, type ScanJob, type ScanResult, type SweepJob, type SweepStats } from './pipeline';
import { forEachGroup } from './for-each-group';
import { indexRun } from './index-run';
import { ShardedPool } from '../util/worker-pool';
import { jobsFrom, maxGroupSizeFrom } from './run-options';
import { Outcome } from './outcome';
import { SWEEP_PROGRESS_EVERY, ShardFilter, parseShard, shardSweepLine, sweepProgressLine } from './shard-filter';
import { tempDir } from './temp-dir';

export async function runSweep(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('sweep', argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('sweep needs a PATH');
  if (a.positionals.length > 1) throw new UsageError(`sweep takes one PATH, got ${a.positionals.length}`);
  const operators = operatorsFromFlags(a) ?? (['core'] as OperatorId[]);
  // Every parameter flag may hold a list; the settings are their cartesian product.
  const axes: [keyof Params, number[]][] = [];
  for (const spec of PARAM_SPECS) {
    const v = flagString(a, spec.flag);
    if (v === undefined) continue;
    axes.push([spec.id, parseList(v, spec.flag)]);
    a.flags.delete(spec.flag);
  }
  const base = paramsFromFlags(a);
  if (!axes.length) throw new UsageError('sweep needs at least one parameter list, e.g. --kappa 0:1:0.1');
  let settings: Partial<Params>[] = [{}];
  for (const [id, values] of axes) settings = settings.flatMap((s) => values.map((v) => ({ ...s, [id]: v })));
  if (settings.length > 10000) throw new UsageError(`${settings.length} settings: at most 10000`);
  // Validate every setting before reading the run.
  for (const s of settings) {
    try {
      resolveParams({ ...base, ...s });
    } catch (e) {
      throw new UsageError(errorMessage(e));
    }
  }
  const maxGroupSize = maxGroupSizeFrom(flagString(a, 'max-group-size'));
  const job: SweepJob = { settings: settings.map((s) => ({ ...base, ...s })), operators, maxGroupSize };
  const shardFlag = flagString(a, 'shard');
  const shard = shardFlag === undefined ? undefined : new ShardFilter(parseShard(shardFlag));
  let done = 0;
  const totals: SweepStats[][] = settings.map(() => operators.map(emptyStats));
  const state = new ShardState();
  const outcome = new Outcome(io, a);
  const jobs = jobsFrom(flagString(a, 'jobs'));
  const groundTruth = groundTruthFromFlags(a);
  const sweepLine = (s: Partial<Params>, op: OperatorId, t: SweepStats): string => {
    const line: Record<string, unknown> = {
      params: s,
      operator: op,
      groups: t.groups,
      flips_vs_majority: t.flips,
      mean_gate: t.groups ? t.gateSum / t.groups : null,
    };
    if (t.withTruth > 0) line.label_accuracy = t.correct / t.withTruth;
    return JSON.stringify(line);
  };
  // Setting-major from the run's persisted features (src/logs/cache): the cache is built first
  // when missing or stale (--no-cache: a private one, removed at the end), then each setting is one
  // pass over the features and its lines are written as soon as it is done.
  if (!shard) {
    const noCache = flagBool(a, 'no-cache');
    // Removed at the end, and on SIGINT/SIGTERM/SIGHUP too (temp-dir.ts).
    const own = noCache ? tempDir('consensus-lens-sweep-') : undefined;
    try {
      const ix = await indexRun(path, outcome.notice, jobs, { read: { groundTruth, stats: outcome.stats }, cache: own ? { dir: own.path } : {}, maxGroupSize, onGroup: () => outcome.progress?.tick() });
      if (ix.footer) {
        if (ix.footer.groups === 0) {
          outcome.finish();
          io.stderr.write(`consensus-lens: nothing to sweep in ${path}\n`);
          return 1;
        }
        await sweepFeatures(ix.file, ix.footer, job, jobs, outcome, (k) => {
          operators.forEach((op, o) => io.stdout.write(sweepLine(settings[k], op, totals[k][o]) + '\n'));
        }, totals, ix.state === 'hit');
        return outcome.finish();
      }
    } finally {
      own?.remove();
    }
    // No cache could be written (a file not read, a group not prepared, a folder not writable):
    // the settings are scored group by group from the texts, read again; the notices were given.
  }
  const { groups } = await forEachGroup(
    path,
    shard ? outcome.notice : () => undefined,
    jobs,
    (g) => sweepGroup(g, job, state.contextsFor(settings.length)),
    (g) => ({ request: { kind: 'sweep', group: g, job } }),
    (stats) => {
      addStats(totals, stats);
      if (shard && ++done % SWEEP_PROGRESS_EVERY === 0) io.stdout.write(sweepProgressLine(done, shard.read) + '\n');
      outcome.progress?.tick();
    },
    undefined,
    { read: { groundTruth, stats: shard ? outcome.stats : undefined }, maxGroupSize, keep: shard?.keep },
  );
  if (groups === 0) {
    outcome.finish();
    io.stderr.write(`consensus-lens: nothing to sweep in ${path}\n`);
    return 1;
  }
  settings.forEach((s, k) => {
    operators.forEach((op, o) => io.stdout.write((shard ? shardSweepLine(s, op, totals[k][o]) : sweepLine(s, op, totals[k][o])) + '\n'));
  });
  if (shard) io.stdout.write(shard.trailer() + '\n');
  // As for score: totals over part of the run are not the run's totals.
  return outcome.finish();
}

/**
 * Every setting of `job` over a cache file's features, setting-major: `onSetting(k)` is called as
 * soon as setting k's totals are complete (in order), while the later settings are being scored.
 * On `jobs` worker threads, each a part of the groups (contiguous, or by question with MS-TTRL so
 * that its outcome cache sees each question's groups in order); in-process with `--jobs 0`.
 */
async function sweepFeatures(file: string, footer: Footer, job: SweepJob, jobs: number, outcome: Outcome, onSetting: (k: number) => void, totals: SweepStats[][], countGroups: boolean): Promise<void> {
  const maxGroupSize = job.maxGroupSize ?? DEFAULT_MAX_GROUP_SIZE;
  const threads = Math.max(0, Math.min(jobs, footer.groups));
  const byQuestion = job.operators.includes('msttrl');
  const parts: { from: number; to: number; part?: { index: number; of: number } }[] = [];
  const n = Math.max(1, threads);
  for (let w = 0; w < n; w++) {
    if (byQuestion) parts.push({ from: footer.offsets[0] ?? footer.end, to: footer.end, ...(n > 1 ? { part: { index: w, of: n } } : {}) });
    else {
      const a = Math.floor((footer.groups * w) / n);
      const b = Math.floor((footer.groups * (w + 1)) / n);
      if (b > a) parts.push({ from: footer.offsets[a], to: b < footer.groups ? footer.offsets[b] : footer.end });
    }
  }
  const take = (k: number, results: ScanResult[]) => {
    for (const r of results) {
      r.stats.forEach((st, o) => addStats([[totals[k][o]]], [[st]]));
      for (const f of r.failed) outcome.notice({ level: 'error', message: f.message, ...(f.file ? { file: f.file, line: f.line } : {}) });
      // the run's groups once (the first setting; unless the pass that built the cache counted them), then the settings done
      if (k === 0 && countGroups) outcome.progress?.tick(r.groups);
    }
    if (outcome.progress) {
      outcome.progress.settings = { done: k + 1, of: job.settings.length };
      outcome.progress.tick(0);
    }
    // The gates summed in the run's order, as a group-by-group pass sums them: the same mean
    // whatever the number of threads.
    job.operators.forEach((_, o) => {
      let order: Float64Array[] = results.map((r) => r.gates[o]);
      if (results.some((r) => r.places)) {
        const all = new Float64Array(footer.groups).fill(Number.NaN);
        for (const r of results) r.places!.forEach((at, i) => (all[at] = r.gates[o][i]));
        order = [all];
      }
      let sum = 0;
      for (const g of order) for (let i = 0; i < g.length; i++) if (!Number.isNaN(g[i])) sum += g[i];
      totals[k][o].gateSum = sum;
    });
    onSetting(k);
  };
  const request = (k: number, p: (typeof parts)[number]): ScanJob => ({ file, ...p, operators: job.operators, params: job.settings[k], setting: k, maxGroupSize });
  if (threads === 0) {
    const state = new ShardState();
    for (let k = 0; k < job.settings.length; k++) take(k, parts.map((p) => scanSetting(request(k, p), state)));
    return;
  }
  const pool = new ShardedPool(parts.length);
  try {
    // Every request is queued at once; each thread passes over its part setting after setting.
    const pending = job.settings.map((_, k) => parts.map((p, w) => pool.submitTo<ScanResult>(w, { kind: 'scan', job: request(k, p) })));
    for (const l of pending) for (const p of l) p.catch(() => undefined);
    for (let k = 0; k < pending.length; k++) take(k, await Promise.all(pending[k]));
  } finally {
    await pool.close();
  }
}
