// Runs a TypeScript module in a worker thread (tests only): registers tsx's loader in the worker,
// then imports `workerData.file`.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.file);
