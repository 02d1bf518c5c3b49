// Worker thread for `score` and `sweep`: groups arrive sharded by question, so each question's
// groups are seen in order by one worker and MS-TTRL's cache stays correct.
import { parentPort } from 'node:worker_threads';
import type { Group } from '../engine';
import { ShardState, scoreLine, sweepGroup, type ScoreJob, type SweepJob } from './pipeline';
import { reportRow } from './report';
import { healthOf, type HealthJob } from './health';
import { ngramsWasmAvailable } from '../engine/features/tfidf';
import { replicatorWasmAvailable } from '../engine/dynamics/replicator';

export type WorkerRequest =
  | { kind: 'score'; seq: number; group: Group; job: ScoreJob }
  | { kind: 'sweep'; seq: number; group: Group; job: SweepJob }
  | { kind: 'report'; seq: number; group: Group; job: ScoreJob }
  | { kind: 'health'; seq: number; group: Group; job: HealthJob };

// Compile and instantiate the WebAssembly kernels now, while the main thread is still parsing
// the first groups, rather than inside the first group's scoring.
ngramsWasmAvailable();
replicatorWasmAvailable();

const state = new ShardState();
parentPort!.on('message', (m: WorkerRequest) => {
  try {
    if (m.kind === 'score') parentPort!.postMessage({ seq: m.seq, value: scoreLine(m.group, m.job, state.contextsFor(1)[0]) });
    else if (m.kind === 'report') parentPort!.postMessage({ seq: m.seq, value: reportRow(m.group, m.job, state.contextsFor(1)[0]) });
    else if (m.kind === 'health') parentPort!.postMessage({ seq: m.seq, value: healthOf(m.group, m.job, state.contextsFor(1)[0]) });
    else parentPort!.postMessage({ seq: m.seq, value: sweepGroup(m.group, m.job, state.contextsFor(m.job.settings.length)) });
  } catch (e) {
    parentPort!.postMessage({ seq: m.seq, error: (e as Error).message ?? String(e) });
  }
});
