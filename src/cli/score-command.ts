// `consensus-lens score` (docs/contract.md#command-line): one JSON line per group, through the read
// path of for-each-group.ts.
import { needsReasoning, groupAnswers } from '../engine';
import type { CachedGroup } from '../logs/cache/cached-run';
import { type CliIO, UsageError, configuredFromFlags, flagBool, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseCommand } from './args';
import { ShardState, scoreLine, type ScoreJob } from './pipeline';
import { forEachGroup, type Remote } from './for-each-group';
import { jobsFrom, maxGroupSizeFrom } from './run-options';
import { Outcome } from './outcome';
import { ShardFilter, parseShard, shardScoreLine } from './shard-filter';

/** The worker queue of `score` with EC or CoRE, whose workers compute only the cosines (group-scheduler.ts BACKLOG). */
const COSINES_BACKLOG = 8;

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
