// `consensus-lens watch PATH` — the headless live view (for a tmux pane on a GPU box): follows a run
// and prints one JSON line per newly completed group (the shape `score` writes, docs/contract.md#command-line) on stdout,
// and notices on stderr, until interrupted (SIGINT: exit 130, as shells expect of Ctrl-C; SIGTERM:
// exit 0). A PATH that does not exist yet is waited for (a training job is often started after the
// viewer): a notice says so, and it is checked every --poll-ms (default 1000).
//
// Groups already on disk when watch starts are printed too (as they complete), then new ones as they
// arrive. When a group is complete is decided by the run index (src/logs/run-index.ts): a group
// record at once; roll-out records at the run's modal group size, when their file moves on to a later
// step, or after --idle-ms (default 2000) without a new roll-out. A group that changes after it was
// printed (late roll-outs, or a prompt repeated within the step) is reopened by the index and
// printed again once when it completes anew, with a notice; a group whose file is truncated or
// replaced is printed again when it completes anew. A file that ends mid-line is still being
// written: none of its groups completes by idleness (no partial group is printed).
//
// Flags: the score flags (--operators, --kappa, ...), --configured-operator, --poll (polling instead
// of file-system events; automatic on NFS/Lustre and other network file systems), --poll-ms N,
// --idle-ms N, --ground-truth auto|ignore.
import { stat } from 'node:fs/promises';
import { errorMessage } from '../util/errors';
import { createRunContext } from '../engine';
import { RunIndex, type GroupKey } from '../logs/log-layer';
import { type CliIO, UsageError, configuredFromFlags, flagBool, flagString, groundTruthFromFlags, operatorsFromFlags, paramsFromFlags, parseCommand, parseInteger } from './args';
import { scoreLine, type ScoreJob } from './pipeline';
import { noticePrinter } from './run-options';

export interface WatchOptions {
  /** Stops watching (tests; the CLI stops on SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

export async function runWatch(argv: string[], io: CliIO, opts: WatchOptions = {}): Promise<number> {
  const a = parseCommand('watch', argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('watch needs a PATH (a run folder or a log file)');
  if (a.positionals.length > 1) throw new UsageError(`watch takes one PATH, got ${a.positionals.length}`);
  if (path === '-') throw new UsageError('watch follows files; use score for standard input');
  const configured = configuredFromFlags(a);
  const job: ScoreJob = { operators: operatorsFromFlags(a), params: paramsFromFlags(a), configuredOperator: configured };
  const pollMs = parseInteger(flagString(a, 'poll-ms'), 'poll-ms', 50);
  const idleMs = parseInteger(flagString(a, 'idle-ms'), 'idle-ms', 0);
  const notice = noticePrinter(io);
  const ctx = createRunContext();
  let interrupted = false;
  const stopped = new Promise<void>((resolve) => {
    if (opts.signal) {
      if (opts.signal.aborted) return resolve();
      opts.signal.addEventListener('abort', () => resolve(), { once: true });
    } else {
      process.once('SIGINT', () => {
        interrupted = true;
        resolve();
      });
      process.once('SIGTERM', () => resolve());
    }
  });
  let stop = false;
  void stopped.then(() => (stop = true));
  // Wait for a run that is not there yet.
  if (!(await exists(path))) {
    notice({ level: 'info', message: `${path} does not exist yet: waiting for it (Ctrl-C to stop)` });
    while (!stop && !(await exists(path))) await Promise.race([stopped, new Promise((r) => setTimeout(r, pollMs ?? 1000))]);
    if (stop) return interrupted ? 130 : 0;
  }

  const index = await RunIndex.open(path, { follow: true, poll: flagBool(a, 'poll'), pollMs, idleMs, onNotice: notice, groundTruth: groundTruthFromFlags(a) });
  /** Revision printed per group key (absent: not printed, or dropped since). */
  const printed = new Map<GroupKey, number>();
  let queue: Promise<void> = Promise.resolve();
  const print = (key: GroupKey, _why: 'completed' | 'changed') =>
    (queue = queue.then(async () => {
      const e = index.group(key);
      if (!e?.complete) return;
      if (printed.get(key) === e.version) return;
      try {
        const g = await index.loadGroup(key);
        const line = scoreLine(g, job, ctx);
        if (printed.has(key)) {
          notice({ level: 'info', message: `step ${e.step} question ${e.questionId}: changed after it was printed (now ${e.n} roll-outs); printed again`, file: e.firstSource.file });
        }
        printed.set(key, e.version);
        io.stdout.write(line + '\n');
      } catch (err) {
        notice({ level: 'warning', message: `step ${e.step} question ${e.questionId}: ${errorMessage(err)}` });
      }
    }));
  index.onDidChange((ev) => {
    for (const k of ev.removed) printed.delete(k);
    for (const k of ev.completed) print(k, 'completed');
    for (const k of ev.changed) print(k, 'changed');
  });
  // groups complete before the listener was attached (group records read during open)
  for (const e of index.groups()) if (e.complete) print(e.key, 'completed');

  await stopped;
  index.close();
  await queue;
  return interrupted ? 130 : 0;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
