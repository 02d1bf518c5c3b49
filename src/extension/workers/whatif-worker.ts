// Worker thread of the run-wide what-ifs: owns one shard of every run it is given (its groups'
// prepared features, kept between requests). Requests run one at a time, in arrival order. A thread
// of the one worker pool (src/util/worker-pool.ts): it answers `{ seq, value | error }` and counts
// what it finished in the pool's shared memory.
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../../util/errors';
import { WhatIfShard, type ShardRequest } from './whatif-shard';
import { lowerThreadPriority } from './priority';

// Background work: the editor's thread gets a core first (priority.ts).
lowerThreadPriority();

const shard = new WhatIfShard();
const { done, index } = (workerData ?? {}) as { done?: Int32Array; index?: number };
let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (m: { seq: number; req: ShardRequest }) => {
  queue = queue.then(async () => {
    try {
      parentPort!.postMessage({ seq: m.seq, value: await shard.handle(m.req) });
    } catch (e) {
      parentPort!.postMessage({ seq: m.seq, error: errorMessage(e) });
    }
    if (done && index !== undefined) Atomics.add(done, index, 1);
  });
});
