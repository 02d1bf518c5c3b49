// dist/cli.js, the `consensus-lens` command: the CLI bundle (dist/cli-main.js, from main.ts) run
// with V8's code cache (code-cache.ts). CONSENSUS_LENS_CODE_CACHE_REPORT=1 says on stderr whether
// this Node accepted the cache (the package test measures it under the Node that runs it).
import { join } from 'node:path';
import { runBundle } from './code-cache';

const { cacheUsed } = runBundle(join(__dirname, 'cli-main.js'));
if (process.env.CONSENSUS_LENS_CODE_CACHE_REPORT === '1') process.stderr.write(`code cache: ${cacheUsed ? 'used' : 'not used'}\n`);
