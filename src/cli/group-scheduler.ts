// The last stage of the CLI's read path (ARCHITECTURE.md, "The CLI's read path"): each group read
// is scored on the main thread or on a worker thread, and its value handed to the sink in the
// order the groups were read.
//
// With two or more jobs the main thread is one of the scoring threads, beside jobs − 1 workers
// (one worker fewer to start: each costs a Node context, the worker bundle and its own JIT
// warm-up). Each question is given to a thread when it is first seen — to the least busy worker
// while that worker has fewer than `backlog` requests waiting, else to the main thread — and keeps
// it: a question's groups are all handled by one thread, in order, so MS-TTRL's per-question cache
// stays correct and the output is the same as in-process. The share of each thread follows the
// work (the main thread also reads and parses the run, which costs more on long texts), and the
// groups the main thread scores are never copied to another thread. A worker may also do only
// part of a group (`remote`'s `finish` then completes it on the main thread).
import { errorMessage } from '../util/errors';
import type { Notice } from '../logs/log-layer';
import type { Group } from '../engine';
import { ShardedPool, WorkerDiedError } from '../util/worker-pool';

/** How many groups may be in flight (read, not yet written): bounds memory on huge runs. */
const IN_FLIGHT = 16;
/**
 * A worker with this many requests waiting is busy enough: a newly seen question goes to the main
 * thread. Two keep a worker that scores whole groups from running dry while the main thread
 * scores one; `score`'s workers, which compute only the reasoning cosines (a smaller share of a
 * group than the main thread's whole group), need a deeper queue (`backlog`).
 */
const BACKLOG = 2;
/** Below this many groups the worker start-up costs more than it saves. */
const WORKER_MIN_GROUPS = 8;
/** `owner` of a question whose worker died with its state. */
const LOST = -2;

/** A group's request to a worker thread, and how its answer becomes the group's value. */
export interface Remote<T> {
  request: Record<string, unknown>;
  finish?: (answer: unknown) => T;
}

export interface SchedulerOptions<T> {
  jobs: number;
  local: (g: Group) => T;
  /** What a worker thread does for a group (its value must be `local(g)`'s). */
  remote: (g: Group) => Remote<T>;
  sink: (value: T, g: Group) => void;
  /** A group that could not be scored, after its error notice. */
  failed: (g: Group) => void;
  onNotice: (n: Notice) => void;
  backlog?: number;
  /** The groups a dead worker held are scored again on the main thread (no per-question state on the workers). */
  rescore?: boolean;
}

/** A group that could not be scored, as an error notice at its first record. */
export function groupFailed(g: Group, e: unknown): Notice {
  const src = g.rollouts[0]?.source;
  const msg = errorMessage(e);
  const who = `step ${g.step}, question ${g.questionId}`;
  return { level: 'error', message: msg.startsWith(who) ? msg : `${who}: not scored: ${msg}`, ...(src ? { file: src.file, line: src.line } : {}) };
}

export class GroupScheduler<T> {
  private readonly workers: number;
  /** With one job the single worker takes every group; with more, the main thread scores too. */
  private readonly mainScores: boolean;
  /** Each question's thread: a worker's index, −1 for the main thread, LOST. */
  private readonly owner = new Map<string, number>();
  private pool: ShardedPool | undefined;
  private readonly buffered: Group[] = [];
  private readonly queue: { g: Group; p: Promise<T> }[] = [];

  constructor(private readonly o: SchedulerOptions<T>) {
    this.workers = o.jobs >= 2 ? o.jobs - 1 : o.jobs;
    this.mainScores = o.jobs >= 2;
  }

  /** Starts the worker threads now, before the first group (their start-up then overlaps the parsing). */
  startEarly(): void {
    if (this.workers > 0 && !this.pool) this.pool = this.newPool();
  }

  /** One group read, in order. */
  async add(g: Group): Promise<void> {
    if (this.workers === 0) return this.runLocal(g);
    if (!this.pool) {
      this.buffered.push(g);
      if (this.buffered.length < WORKER_MIN_GROUPS) return;
      this.pool = this.newPool();
      for (const b of this.buffered.splice(0)) this.dispatch(b);
      return;
    }
    this.dispatch(g);
    await this.drain(IN_FLIGHT);
  }

  /** The run was read: every value is handed to the sink. */
  async finish(): Promise<void> {
    for (const b of this.buffered.splice(0)) this.runLocal(b);
    await this.drain(0);
  }

  /** Also on an error (a worker's error, a read error): live workers would keep the process from exiting. */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  private newPool(): ShardedPool {
    const p = new ShardedPool(this.workers);
    const rescore = this.o.rescore;
    p.onDeath = (i, why) => {
      this.o.onNotice({ level: 'warning', message: `worker thread ${i + 1} ${why}; ${rescore ? 'the groups it held are scored again on the main thread' : 'the groups it held, and their questions\' later groups, are not scored'}` });
      for (const [q, w] of this.owner) if (w === i) rescore ? this.owner.delete(q) : this.owner.set(q, LOST);
    };
    return p;
  }

  private fail(g: Group, e: unknown): void {
    this.o.onNotice(groupFailed(g, e));
    this.o.failed(g);
  }

  // A group that cannot be scored (too large, or one that cannot be sent to a worker thread) is
  // reported with its place in the log and skipped; every other group is still scored.
  private runLocal(g: Group): void {
    let v: T;
    try {
      v = this.o.local(g);
    } catch (e) {
      return this.fail(g, e);
    }
    this.o.sink(v, g);
  }

  private async drain(limit: number): Promise<void> {
    while (this.queue.length > limit) {
      const { g, p } = this.queue.shift()!;
      let v: T;
      try {
        v = await p;
      } catch (e) {
        if (!(e instanceof WorkerDiedError && this.o.rescore)) {
          this.fail(g, e);
          continue;
        }
        // Its thread died: scored again here, in order.
        try {
          v = this.o.local(g);
        } catch (e2) {
          this.fail(g, e2);
          continue;
        }
      }
      this.o.sink(v, g);
    }
  }

  private submit(i: number, g: Group): Promise<T> {
    try {
      const { request, finish } = this.o.remote(g);
      const answer = this.pool!.submitTo<unknown>(i, request);
      // A question's answers come back in order (one worker, first in first out), so `finish`
      // sees each question's groups in order too.
      return finish ? answer.then(finish) : (answer as Promise<T>);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private ownerOf(questionId: string): number {
    let i = this.owner.get(questionId);
    if (i === undefined) {
      const w = this.pool!.leastBusy();
      i = this.mainScores && this.pool!.backlog(w) >= (this.o.backlog ?? BACKLOG) ? -1 : w;
      this.owner.set(questionId, i);
    }
    return i;
  }

  // A rejection is handled when its turn in `drain` comes; until then it must not count as an
  // unhandled rejection (which would end the process).
  private enqueue(g: Group, p: Promise<T>): void {
    p.catch(() => undefined);
    this.queue.push({ g, p });
  }

  // The main thread scores its questions in order with the workers' results.
  private dispatch(g: Group): void {
    const i = this.ownerOf(g.questionId);
    if (i === LOST) {
      this.enqueue(g, Promise.reject(new Error('the worker thread holding its question\'s state (MS-TTRL) died earlier')));
      return;
    }
    if (i < 0) {
      let p: Promise<T>;
      try {
        p = Promise.resolve(this.o.local(g));
      } catch (e) {
        p = Promise.reject(e);
      }
      this.enqueue(g, p);
    } else this.enqueue(g, this.submit(i, g));
  }
}
