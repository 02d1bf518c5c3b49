// The one pool of worker threads: the CLI's scoring threads (score, sweep, report, serve) and the
// extension's what-if workers (src/extension/workers/whatif-engine.ts). Requests go either to the
// worker a shard key hashes to (`submit`, serve's per-question affinity) or to a worker the caller
// picks (`submitTo`, by `backlog` or its own shard key). Results are awaited in submission order by
// the caller. A worker answers `{ seq, value }` or `{ seq, error }` and counts what it finished in
// `workerData.done[workerData.index]`.
//
// For a long-lived owner (the extension host): `lazy` starts a thread at its first request, and
// `unrefWhenIdle` lets the process end while no request is pending.
//
// A worker that dies (an error, an exit, `kill` by a caller whose request ran out of time) fails
// every request it held with a `WorkerDiedError` — never a promise that stays pending, which would
// let the process end with work silently missing — and is restarted for later requests. Restarts
// are counted in a window of work, not of the pool's lifetime: at most MAX_RESTARTS deaths among
// the last RESTART_WINDOW requests sent (a thread that dies before any work counts in the same
// window, so a crash loop stops at once). A death past that leaves the slot empty: `onExhausted`
// tells a caller that must not go on without it (serve exits), otherwise requests to the slot fail
// at once. `onDeath` tells the caller, whose per-question state on that thread is gone.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fnv1a } from '../engine';

export interface PoolOptions {
  /** Options for each thread (the extension's tests run TypeScript workers through a loader). */
  execArgv?: string[];
  /** Start each thread at its first request (default: all at once). */
  lazy?: boolean;
  /** A thread with no request pending does not keep the process alive. */
  unrefWhenIdle?: boolean;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  worker: number;
}

/** The thread scoring a request died before answering it: the request was not done. */
export class WorkerDiedError extends Error {
  override name = 'WorkerDiedError';
}

/** Deaths allowed among the last RESTART_WINDOW requests sent to the pool. */
export const MAX_RESTARTS = 8;
export const RESTART_WINDOW = 64;

export class ShardedPool {
  private readonly workers: (Worker | undefined)[];
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private closing = false;
  private restarts = 0;
  /** `seq` (requests sent so far) at each recent death: the restart window. */
  private deaths: number[] = [];
  /** Requests sent to each worker. */
  private readonly sent: number[];
  /**
   * Requests each worker has finished, counted by the worker itself in shared memory: readable
   * while this thread is busy and its message queue unread (a caller parsing and scoring in one
   * synchronous stretch still sees how far behind each worker is).
   */
  private readonly done: Int32Array;
  /** Called after worker `i` died (its pending requests already failed). */
  onDeath?: (i: number, why: string) => void;
  /** Called when worker `i` died and cannot be restarted (too many deaths in the window). */
  onExhausted?: (i: number, why: string) => void;

  /** Threads not started yet (`lazy`): started at their first request. */
  private readonly unstarted: boolean[];

  constructor(
    size: number,
    private readonly script = join(__dirname, 'score-worker.js'),
    private readonly opts: PoolOptions = {},
  ) {
    this.sent = new Array(size).fill(0);
    this.done = new Int32Array(new SharedArrayBuffer(4 * size));
    this.unstarted = new Array(size).fill(!!opts.lazy);
    this.workers = Array.from({ length: size }, (_, i) => (opts.lazy ? undefined : this.start(i)));
  }

  private start(i: number): Worker {
    const w = new Worker(this.script, { execArgv: this.opts.execArgv, workerData: { done: this.done, index: i, restarted: this.restarts > 0 } });
    w.on('message', (m: { seq: number; value?: unknown; error?: string }) => {
      const p = this.pending.get(m.seq);
      if (!p) return;
      this.pending.delete(m.seq);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.value);
      // An idle thread must not keep a process (a test, the extension host's exit) alive.
      if (this.opts.unrefWhenIdle && this.pending.size === 0) for (const x of this.workers) x?.unref();
    });
    if (this.opts.unrefWhenIdle) w.unref();
    w.on('error', (e) => this.died(i, w, `failed (${e.message})`));
    w.on('exit', (code) => this.died(i, w, `exited (code ${code})`));
    return w;
  }

  private died(i: number, w: Worker, why: string): void {
    if (this.closing || this.workers[i] !== w) return;
    let lost = 0;
    for (const [seq, p] of this.pending) {
      if (p.worker !== i) continue;
      this.pending.delete(seq);
      p.reject(new WorkerDiedError(`worker thread ${i + 1} ${why} before answering`));
      lost++;
    }
    this.sent[i] = Math.max(Atomics.load(this.done, i), this.sent[i] - lost);
    this.deaths = this.deaths.filter((at) => at > this.seq - RESTART_WINDOW);
    const restart = this.deaths.length < MAX_RESTARTS;
    this.deaths.push(this.seq);
    this.workers[i] = restart ? (this.restarts++, this.start(i)) : undefined;
    if (!restart) this.onExhausted?.(i, why);
    this.onDeath?.(i, why);
  }

  /** Ends worker `i` now (a request on it ran out of time): its requests fail, it is restarted. */
  kill(i: number, why: string): void {
    const w = this.workers[i];
    if (!w) return;
    this.died(i, w, why);
    void w.terminate();
  }

  get size(): number {
    return this.workers.length;
  }

  /** Requests worker `i` has been sent and not yet finished. */
  backlog(i: number): number {
    return this.sent[i] - Atomics.load(this.done, i);
  }

  /** The worker with the smallest backlog (the first of equals). */
  leastBusy(): number {
    let best = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.backlog(i) < this.backlog(best)) best = i;
    return best;
  }

  /** The worker `submit` sends `shardKey`'s requests to. */
  workerFor(shardKey: string): number {
    return fnv1a(shardKey) % this.workers.length;
  }

  submit<T>(shardKey: string, message: Record<string, unknown>): Promise<T> {
    return this.submitTo<T>(this.workerFor(shardKey), message);
  }

  submitTo<T>(i: number, message: Record<string, unknown>): Promise<T> {
    if (this.unstarted[i] && !this.closing) {
      this.unstarted[i] = false;
      this.workers[i] = this.start(i);
    }
    const w = this.workers[i];
    if (!w) return Promise.reject(new WorkerDiedError(`worker thread ${i + 1} is gone (worker threads died more than ${MAX_RESTARTS} times in ${RESTART_WINDOW} requests)`));
    const seq = this.seq++;
    this.sent[i]++;
    if (this.opts.unrefWhenIdle) w.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject, worker: i });
      try {
        w.postMessage({ ...message, seq });
      } catch (e) {
        // A message that cannot be cloned to the thread (DataCloneError, a RangeError on a value
        // nested too deep): this request fails, the thread is fine.
        this.pending.delete(seq);
        this.sent[i]--;
        reject(e);
      }
    });
  }

  /** Thread `i` while it runs (tests). */
  thread(i: number): Worker | undefined {
    return this.workers[i];
  }

  /** Ends every thread; a request still pending fails (never a promise left pending). */
  async close(): Promise<void> {
    this.closing = true;
    for (const [seq, p] of this.pending) {
      this.pending.delete(seq);
      p.reject(new Error('the worker pool was closed'));
    }
    await Promise.all(this.workers.map((w) => w?.terminate()));
  }
}

/** Worker count for a run: both cores by default; `--jobs 0` means in-process. */
export function defaultJobs(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}
