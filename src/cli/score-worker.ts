// Worker thread for `score`, `sweep`, `report`, `health` and `serve`: each question's groups all
// come to one thread, in order, so MS-TTRL's cache stays correct.
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../util/errors';
import { preparedOf, type CachedGroup } from '../logs/cache/cached-run';
import { reasoningCosines, type Group } from '../engine';
import { ShardState, scanSetting, scoreLine, sweepGroup, type ScanJob, type ScoreJob, type SweepJob } from './pipeline';
import { reportRow } from './report';
import { healthOf, type HealthJob } from './health';
import { ngramsWasmAvailable } from '../engine';
import { replicatorWasmAvailable } from '../engine';

export type WorkerRequest =
  | { kind: 'score'; seq: number; group: Group; job: ScoreJob }
  | { kind: 'sweep'; seq: number; group: Group; job: SweepJob }
  | { kind: 'report'; seq: number; group: Group; job: ScoreJob }
  | { kind: 'health'; seq: number; group: Group; job: HealthJob }
  | { kind: 'index'; seq: number; group: Group; maxGroupSize: number }
  | { kind: 'scan'; seq: number; job: ScanJob }
  | { kind: 'cosines'; seq: number; texts: string[]; members: number[][] };

// Compile and instantiate the WebAssembly kernels now, while the main thread is still parsing
// the first groups, rather than inside the first group's scoring.
ngramsWasmAvailable();
replicatorWasmAvailable();

const state = new ShardState();
// Fault injection for the tests of a dying thread (src/util/worker-pool.ts): the first worker thread exits on its
// N-th request (not once restarted); any thread exits on a group of the question named by
// CONSENSUS_LENS_TEST_WORKER_EXIT_ON (restarted or not). Never set in normal use.
const exitAt = Number(process.env.CONSENSUS_LENS_TEST_WORKER_EXIT_AT ?? 0);
const exitOn = process.env.CONSENSUS_LENS_TEST_WORKER_EXIT_ON;
let received = 0;
// The pool's count of finished requests (ShardedPool.backlog), in memory shared with it.
const { done, index } = workerData as { done: Int32Array; index: number };
parentPort!.on('message', (m: WorkerRequest) => {
  if (exitAt > 0 && index === 0 && !(workerData as { restarted?: boolean }).restarted && ++received === exitAt) process.exit(70);
  if (exitOn && 'group' in m && (m.group as { questionId?: string }).questionId === exitOn) process.exit(70);
  try {
    if (m.kind === 'cosines') {
      // The arrays' memory moves to the main thread instead of being copied.
      const value = reasoningCosines(m.texts, m.members);
      parentPort!.postMessage({ seq: m.seq, value }, [...new Set(value.map((a) => a.buffer as ArrayBuffer))]);
    } else {
      let value: unknown;
      if (m.kind === 'score') value = scoreLine(m.group, m.job, state.contextsFor(1)[0]);
      else if (m.kind === 'report') value = reportRow(m.group, m.job, state.contextsFor(1)[0]);
      else if (m.kind === 'health') value = healthOf(m.group, m.job, state.contextsFor(1)[0]);
      else if (m.kind === 'index') {
        // the features go back with the answer (fillCache, below)
        preparedOf(m.group as CachedGroup, { reasoning: true, health: true, maxGroupSize: m.maxGroupSize });
        value = null;
      }
      else if (m.kind === 'scan') value = scanSetting(m.job, state);
      else value = sweepGroup(m.group, m.job, state.contextsFor(m.job.settings.length));
      // While the run's cache is written, the group's features go back with the value (src/logs/cache).
      const g = m.kind === 'scan' ? undefined : (m.group as CachedGroup);
      parentPort!.postMessage({ seq: m.seq, value: g?.fillCache ? { value, prepared: g.prepared } : value });
    }
  } catch (e) {
    parentPort!.postMessage({ seq: m.seq, error: errorMessage(e) });
  }
  Atomics.add(done, index, 1);
});
