// A small pool of worker threads. Requests go either to the worker a shard key hashes to (`submit`,
// serve's per-question affinity) or to a worker the caller picks by its backlog (`submitTo`,
// `backlog`). Results are awaited in submission order by the caller.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class ShardedPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private closing = false;
  /** Requests sent to each worker. */
  private readonly sent: number[];
  /**
   * Requests each worker has finished, counted by the worker itself in shared memory: readable
   * while this thread is busy and its message queue unread (a caller parsing and scoring in one
   * synchronous stretch still sees how far behind each worker is).
   */
  private readonly done: Int32Array;

  constructor(size: number, script = join(__dirname, 'score-worker.js')) {
    this.sent = new Array(size).fill(0);
    this.done = new Int32Array(new SharedArrayBuffer(4 * size));
    this.workers = Array.from({ length: size }, (_, i) => {
      const w = new Worker(script, { workerData: { done: this.done, index: i } });
      w.on('message', (m: { seq: number; value?: unknown; error?: string }) => {
        const p = this.pending.get(m.seq);
        if (!p) return;
        this.pending.delete(m.seq);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.value);
      });
      // A worker that fails or exits while requests are pending fails them (never a silent hang).
      const failAll = (e: Error) => {
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
      };
      w.on('error', failAll);
      w.on('exit', (code) => {
        if (!this.closing && this.pending.size) failAll(new Error(`worker thread exited (code ${code}) with ${this.pending.size} requests pending`));
      });
      return w;
    });
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

  submit<T>(shardKey: string, message: Record<string, unknown>): Promise<T> {
    return this.submitTo<T>(shardHash(shardKey) % this.workers.length, message);
  }

  submitTo<T>(i: number, message: Record<string, unknown>): Promise<T> {
    const seq = this.seq++;
    this.sent[i]++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.workers[i].postMessage({ ...message, seq });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** FNV-1a of a shard key (a question id): which worker `submit` sends it to. */
export function shardHash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Worker count for a run: both cores by default; `--jobs 0` means in-process. */
export function defaultJobs(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}
