// Test bootstrap of the what-if worker thread: Node will not start a worker from a .ts file, so
// this .mjs registers tsx in the thread and imports the TypeScript worker.
import { register } from 'tsx/esm/api';
register();
await import('../../src/extension/workers/whatif-worker.ts');
