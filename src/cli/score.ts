// `consensus-lens score` and `consensus-lens sweep` (docs/contract.md#command-line).

import { statSync } from 'node:fs';
import { errorMessage } from '../util/errors';
import type { Readable } from 'node:stream';
import { readRun, type Notice, type ReadRunOptions } from '../logs';
import { openRunCache, type CachedGroup, type CachedRun, type Footer, type RunCacheOptions } from '../logs/cache';
import { DEFAULT_MAX_GROUP_SIZE, PARAM_SPECS, checkGroupSize, groupAnswers, needsReasoning, resolveParams, type Group, type OperatorId, type Params } from '../engine';
import { type CliIO, UsageError, configuredFromFlags, flagBool, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseCommand, parseInteger, parseList } from './args';
import { ShardState, addStats, emptyStats, scanSetting, scoreLine, sweepGroup, type ScanJob, type ScanResult, type ScoreJob, type SweepJob, type SweepStats } from './pipeline';
import { indexRun } from './index-run';
import { ShardedPool, WorkerDiedError, defaultJobs } from '../util/worker-pool';
import { Outcome } from './outcome';
import { SWEEP_PROGRESS_EVERY, ShardFilter, parseShard, shardScoreLine, shardSweepLine, sweepProgressLine } from './shard';
import { safeText } from '../logs/safe-text';
import { tempDir } from './temp-dir';

/** How many groups may be in flight (read, not yet written): bounds memory on huge runs. */
const IN_FLIGHT = 16;
/**
 * A worker with this many requests waiting is busy enough: a newly seen question goes to the main
 * thread. Two keep a worker that scores whole groups from running dry while the main thread
 * scores one; `score`'s workers, which compute only the reasoning cosines (a smaller share of a
 * group than the main thread's whole group), need a deeper queue (forEachGroup's `backlog`).
 */
const BACKLOG = 2;
/** The worker queue of `score` with EC or CoRE, whose workers compute only the cosines. */
const COSINES_BACKLOG = 8;
/** Below this many groups the worker start-up costs more than it saves. */
const WORKER_MIN_GROUPS = 8;
/**
 * A file this large holds more than WORKER_MIN_GROUPS groups of any realistic size (8 × 64
 * roll-outs of 2 KB is 1 MiB), so the workers are started before reading: their start-up (a Node
 * context, the worker bundle, the kernels' compilation) then overlaps the parsing of the first
 * groups instead of following it.
 */
const EAGER_WORKERS_BYTES = 1 << 20;

/** Prints notices; `errors` counts the error-level ones (the command then exits non-zero). */
export function noticePrinter(io: CliIO): ((n: Notice) => void) & { errors: number } {
  const print = ((n: Notice) => {
    if (n.level === 'error') print.errors++;
    const at = n.file ? `${n.file}${n.line ? `:${n.line}` : ''}` : '';
    const where = at && !n.message.startsWith(at) ? `${at}: ` : '';
    io.stderr.write(`consensus-lens: ${n.level === 'info' ? '' : `${n.level}: `}${safeText(where + n.message)}\n`);
  }) as ((n: Notice) => void) & { errors: number };
  print.errors = 0;
  return print;
}

/** `--max-group-size N`: the largest group scored (default DEFAULT_MAX_GROUP_SIZE). */
export function maxGroupSizeFrom(flag: string | undefined): number {
  return parseInteger(flag, 'max-group-size', 1) ?? DEFAULT_MAX_GROUP_SIZE;
}

/** A group that could not be scored, as an error notice at its first record. */
function groupFailed(g: Group, e: unknown): Notice {
  const src = g.rollouts[0]?.source;
  const msg = errorMessage(e);
  const who = `step ${g.step}, question ${g.questionId}`;
  return { level: 'error', message: msg.startsWith(who) ? msg : `${who}: not scored: ${msg}`, ...(src ? { file: src.file, line: src.line } : {}) };
}

export function jobsFrom(flag: string | undefined): number {
  return parseInteger(flag, 'jobs', 0, 64) ?? defaultJobs();
}

/** A group's request to a worker thread, and how its answer becomes the group's value. */
export interface Remote<T> {
  request: Record<string, unknown>;
  finish?: (answer: unknown) => T;
}

/**
 * Runs `work` on every group of the run, on `jobs` threads when there are enough groups, and
 * hands the results to `sink` in the order the groups were read. Used by score, sweep, report and
 * health.
 *
 * With two or more jobs the main thread is one of the scoring threads, beside jobs − 1 workers
 * (one worker fewer to start: each costs a Node context, the worker bundle and its own JIT
 * warm-up). Each question is given to a thread when it is first seen — to the least busy worker
 * while that worker has fewer than `backlog` requests waiting, else to the main thread — and keeps
 * it: a question's groups are all handled by one thread, in order, so MS-TTRL's per-question cache
 * stays correct and the output is the same as in-process. The share of each thread follows the
 * work (the main thread also reads and parses the run, which costs more on long texts), and the
 * groups the main thread scores are never copied to another thread. A worker may also do only
 * part of a group (`remote`'s `finish` then completes it on the main thread).
 */
export async function forEachGroup<T>(
  path: string,
  onNotice: (n: Notice) => void,
  jobs: number,
  local: (g: Group) => T,
  /**
   * What a worker thread does for a group scored off the main thread: the request it answers, and
   * what the main thread makes of the answer (by default the answer is the value). Either way
   * the value must be `local(g)`'s.
   */
  remote: (g: Group) => Remote<T>,
  sink: (value: T, g: Group) => void,
  stdin?: NodeJS.ReadableStream,
  opts: {
    read?: ReadRunOptions;
    maxGroupSize?: number;
    backlog?: number;
    /** Which groups this process scores (`--shard`); every group read is offered, in order. */
    keep?: (g: Group) => boolean;
    /**
     * Read the run through its persisted cache (src/logs/cache; never for stdin, never for a
     * shard, whose cache would hold only its own groups).
     */
    cache?: RunCacheOptions;
    /** The run's cache, already opened (a miss or an extension) by the caller; with `onlyNew`, only the groups read from the files are handled (building the cache). */
    opened?: CachedRun;
    onlyNew?: boolean;
    /**
     * A worker keeps no per-question state for this work (no MS-TTRL, or only the cosines): the
     * groups a dead worker held are re-scored on the main thread and its questions move on.
     * Otherwise they, and their questions' later groups, are reported as not scored.
     */
    rescore?: boolean;
  } = {},
): Promise<{ groups: number; cache?: { state: CachedRun['state']; file: string; footer?: Footer } }> {
  const workers = jobs >= 2 ? jobs - 1 : jobs;
  // With one job the single worker takes every group; with more, the main thread scores too.
  const mainScores = jobs >= 2;
  /** Each question's thread: a worker's index, or −1 for the main thread. */
  const owner = new Map<string, number>();
  let pool: ShardedPool | undefined;
  const buffered: Group[] = [];
  const queue: { g: Group; p: Promise<T> }[] = [];
  let groups = 0;
  const maxGroupSize = opts.maxGroupSize ?? DEFAULT_MAX_GROUP_SIZE;
  const readOpts = opts.read ?? {};
  /** `owner` of a question whose worker died with its state. */
  const LOST = -2;
  const newPool = (): ShardedPool => {
    const p = new ShardedPool(workers);
    p.onDeath = (i, why) => {
      onNotice({ level: 'warning', message: `worker thread ${i + 1} ${why}; ${opts.rescore ? 'the groups it held are scored again on the main thread' : 'the groups it held, and their questions\' later groups, are not scored'}` });
      for (const [q, o] of owner) if (o === i) opts.rescore ? owner.delete(q) : owner.set(q, LOST);
    };
    return p;
  };
  const cached: CachedRun | undefined = opts.opened ?? (opts.cache && !opts.keep && path !== '-' ? await openRunCache(path, onNotice, readOpts, opts.cache) : undefined);
  // From the cache nothing is parsed: the workers' early start would only be overhead.
  if (workers > 0 && path !== '-' && cached?.state !== 'hit' && fileSize(path) >= EAGER_WORKERS_BYTES) pool = newPool();
  const userSink = sink;
  // Each group's features go to the cache once its work is done (in the run's order); a group that
  // failed has none, and then no cache is written.
  sink = (v, g) => {
    userSink(v, g);
    cached?.done(g);
  };
  const failed = (g: Group, e: unknown) => {
    onNotice(groupFailed(g, e));
    cached?.done(g as CachedGroup & { prepared?: undefined });
  };
  if (cached && cached.state !== 'hit') {
    // While the cache is written a worker computes the group's whole features and sends them back with the value.
    const userRemote = remote;
    remote = (g) => {
      const r = userRemote(g);
      if (!(g as CachedGroup).fillCache) return r;
      return {
        request: r.request,
        finish: (answer) => {
          const a = answer as { value: unknown; prepared: CachedGroup['prepared'] };
          (g as CachedGroup).prepared = a.prepared;
          return r.finish ? r.finish(a.value) : (a.value as T);
        },
      };
    };
  }
  // A group that cannot be scored (too large, or one that cannot be sent to a worker thread) is
  // reported with its place in the log and skipped; every other group is still scored.
  const runLocal = (g: Group) => {
    let v: T;
    try {
      v = local(g);
    } catch (e) {
      return failed(g, e);
    }
    sink(v, g);
  };
  const drain = async (limit: number) => {
    while (queue.length > limit) {
      const { g, p } = queue.shift()!;
      let v: T;
      try {
        v = await p;
      } catch (e) {
        if (!(e instanceof WorkerDiedError && opts.rescore)) {
          failed(g, e);
          continue;
        }
        // Its thread died: scored again here, in order.
        try {
          v = local(g);
        } catch (e2) {
          failed(g, e2);
          continue;
        }
      }
      sink(v, g);
    }
  };
  const submit = (i: number, g: Group): Promise<T> => {
    try {
      const { request, finish } = remote(g);
      const answer = pool!.submitTo<unknown>(i, request);
      // A question's answers come back in order (one worker, first in first out), so `finish`
      // sees each question's groups in order too.
      return finish ? answer.then(finish) : (answer as Promise<T>);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const ownerOf = (questionId: string): number => {
    let i = owner.get(questionId);
    if (i === undefined) {
      const w = pool!.leastBusy();
      i = mainScores && pool!.backlog(w) >= (opts.backlog ?? BACKLOG) ? -1 : w;
      owner.set(questionId, i);
    }
    return i;
  };
  // A rejection is handled when its turn in `drain` comes; until then it must not count as an
  // unhandled rejection (which would end the process).
  const enqueue = (g: Group, p: Promise<T>) => {
    p.catch(() => undefined);
    queue.push({ g, p });
  };
  // The main thread scores its questions in order with the workers' results.
  const dispatch = (g: Group) => {
    const i = ownerOf(g.questionId);
    if (i === LOST) {
      enqueue(g, Promise.reject(new Error('the worker thread holding its question\'s state (MS-TTRL) died earlier')));
      return;
    }
    if (i < 0) {
      let p: Promise<T>;
      try {
        p = Promise.resolve(local(g));
      } catch (e) {
        p = Promise.reject(e);
      }
      enqueue(g, p);
    } else enqueue(g, submit(i, g));
  };
  try {
    const source = cached ? (opts.onlyNew && cached.fresh ? cached.fresh : cached.groups) : readRun(path, onNotice, stdin ? { ...readOpts, stdin: stdin as Readable } : readOpts);
    for await (const g of source) {
      groups++;
      if (opts.keep && !opts.keep(g)) continue;
      try {
        checkGroupSize(g, maxGroupSize);
      } catch (e) {
        failed(g, e);
        continue;
      }
      if (workers === 0) {
        runLocal(g);
        continue;
      }
      if (!pool) {
        buffered.push(g);
        if (buffered.length < WORKER_MIN_GROUPS) continue;
        pool = newPool();
        for (const b of buffered.splice(0)) dispatch(b);
        continue;
      }
      dispatch(g);
      await drain(IN_FLIGHT);
    }
    for (const b of buffered) runLocal(b);
    await drain(0);
    const footer = cached?.state === 'hit' ? cached.footer : cached?.finish();
    if (cached) return { groups, cache: { state: cached.state, file: cached.file, footer } };
  } finally {
    // Also on an error (a worker's error, a read error): live workers would keep the process
    // from exiting.
    await pool?.close();
  }
  return { groups };
}

function fileSize(path: string): number {
  try {
    const st = statSync(path);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}

export async function runScore(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('score', argv);
  const path = a.positionals[0] ?? '-';
  if (a.positionals.length > 1) throw new UsageError(`score takes one PATH, got ${a.positionals.length}`);
  const configured = configuredFromFlags(a);
  const maxGroupSize = maxGroupSizeFrom(flagString(a, 'max-group-size'));
  const job: ScoreJob = { operators: operatorsFromFlags(a), params: paramsFromFlags(a), configuredOperator: configured, maxGroupSize };
  const shardFlag = flagString(a, 'shard');
  const shard = shardFlag === undefined ? undefined : new ShardFilter(parseShard(shardFlag));
  const state = new ShardState();
  const ctx = state.contextsFor(1)[0];
  const outcome = new Outcome(io, a);
  // With EC or CoRE, a worker thread computes only a group's reasoning cosines (TF-IDF and the
  // within-class products, the kernels' share of the work) from its texts, and the main thread
  // does the rest: answers before, the operators and the output after. The threads then run
  // different code, each compiled once (a whole group on both threads had V8 optimise the same
  // functions twice, ~0.1 CPU s of a short run), and every operator's state stays on the main
  // thread. Without them there is nothing heavy to share: the worker scores whole groups.
  const split = needsReasoning(job.operators);
  const noCache = flagBool(a, 'no-cache') || shard !== undefined;
  const { groups } = await forEachGroup(
    path,
    outcome.notice,
    jobsFrom(flagString(a, 'jobs')),
    (g) => scoreLine(g, job, ctx),
    (g): Remote<string> => {
      // a group with its features from the cache, or whose features go to the cache: a whole group
      const c = g as CachedGroup;
      if (!split || c.prepared || c.fillCache) return { request: { kind: 'score', group: g, job } };
      const answers = groupAnswers(g);
      return {
        request: { kind: 'cosines', texts: g.rollouts.map((r) => r.response ?? ''), members: answers.classes.map((c) => c.members) },
        finish: (cosines) => scoreLine(g, job, ctx, { answers, cosines: cosines as Float64Array[] }),
      };
    },
    (line, g) => {
      io.stdout.write((shard ? shardScoreLine(shard.ordinal(g), line) : line) + '\n');
      outcome.progress?.tick();
    },
    io.stdin,
    {
      read: { groundTruth: groundTruthFromFlags(a), stats: outcome.stats },
      maxGroupSize,
      backlog: split ? COSINES_BACKLOG : undefined,
      keep: shard?.keep,
      // the same cache as report, sweep and health (never for stdin nor a shard: forEachGroup)
      cache: noCache ? undefined : {},
      // The cosines carry no state; whole groups (always through the cache) do only with MS-TTRL
      // (operators unset: all).
      rescore: (split && (noCache || path === '-')) || (job.operators !== undefined && !job.operators.includes('msttrl')),
    },
  );
  if (shard && groups > 0) io.stdout.write(shard.trailer() + '\n');
  if (groups === 0) {
    outcome.finish();
    io.stderr.write(`consensus-lens: nothing to score in ${path === '-' ? 'standard input' : path}\n`);
    return 1;
  }
  // An error-level notice (a group not scored, a file that could not be read) is a failure even
  // when other groups were written, and skipped input lines exit 3 (outcome.ts): a pipeline must
  // not take a partial output for a whole one.
  return outcome.finish();
}

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
