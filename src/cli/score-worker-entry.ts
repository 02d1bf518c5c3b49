// dist/score-worker.js, the CLI's worker thread: its bundle (dist/score-worker-main.js, from
// score-worker.ts) run with V8's code cache (code-cache.ts).
import { join } from 'node:path';
import { runBundle } from './code-cache';

runBundle(join(__dirname, 'score-worker-main.js'));
