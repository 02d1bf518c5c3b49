// Worker side of deterministic-budget.test.ts: decides `workerData.pairs` in this thread, with
// fresh caches, and posts the verdicts back.
import { parentPort, workerData } from 'node:worker_threads';
import { verdicts } from './budget-verdicts';

parentPort!.postMessage(verdicts(workerData.pairs as [string, string][]));
