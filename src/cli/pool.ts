// A small pool of worker threads with sharding: every message with the same shard key goes to the
// same worker, in order. Results are awaited in submission order by the caller.
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

  constructor(size: number, script = join(__dirname, 'score-worker.js')) {
    this.workers = Array.from({ length: size }, () => {
      const w = new Worker(script);
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

  submit<T>(shardKey: string, message: Record<string, unknown>): Promise<T> {
    const seq = this.seq++;
    const worker = this.workers[shardHash(shardKey) % this.workers.length];
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...message, seq });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** FNV-1a of a shard key (a question id): which thread scores that question's groups. */
export function shardHash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Worker count for a run: both cores by default; `--jobs 0` means in-process. */
export function defaultJobs(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}
