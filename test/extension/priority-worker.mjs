// Test worker for priority.ts: sets its own nice value to workerData.pre (when > 0), calls
// lowerThreadPriority and reports its thread id, what the call returned and its nice value after.
import { register } from 'tsx/esm/api';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
register();
const mod = await import('../../src/extension/workers/priority.ts');
const p = mod.threadId ? mod : mod.default; // (a CommonJS module under tsx)
const tid = p.threadId();
if (workerData.pre > 0) setPriority(tid, workerData.pre);
const got = p.lowerThreadPriority();
parentPort.postMessage({ tid, got, nice: getPriority(tid) });
