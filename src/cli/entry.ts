// dist/cli.js, the `consensus-lens` command: the CLI bundle (dist/cli-main.js, from main.ts) run
// with V8's code cache (code-cache.ts).
import { join } from 'node:path';
import { runBundle } from './code-cache';

runBundle(join(__dirname, 'cli-main.js'));
