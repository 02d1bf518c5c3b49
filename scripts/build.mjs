// One esbuild script for every bundle: the CLI (node), and later the extension host (node) and
// the webview (browser). `node scripts/build.mjs [--watch]`.
import * as esbuild from 'esbuild';
import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { buildWasm } from './build-wasm.mjs';

// The WebAssembly kernels first (each .wat → its -wasm.ts module, see build-wasm.mjs), so no
// bundle holds stale bytes. (In --watch mode only at start: after editing a .wat, re-run this.)
if (await buildWasm()) console.log('WebAssembly modules regenerated from their .wat (written above)');

const watch = process.argv.includes('--watch');
// --release (npm run package): no source maps, so no bundle ends with a sourceMappingURL comment
// pointing to a .map the package does not ship.
const release = process.argv.includes('--release');
const common = { bundle: true, sourcemap: release ? false : 'linked', logLevel: 'warning', legalComments: 'none' };

// mathjs is two thirds of every node bundle but only needed for answers that are not exact
// rationals: it gets its own file, dist/mathjs.js, which the bundles require on first use, so
// the CLI, its worker threads and the extension host do not compile it at start-up.
const mathjsOutside = {
  name: 'mathjs-outside',
  setup(build) {
    build.onResolve({ filter: /^mathjs$/ }, () => ({ path: './mathjs.js', external: true }));
  },
};

const bundles = [
  {
    ...common,
    entryPoints: { mathjs: 'node_modules/mathjs/lib/cjs/index.js' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: !watch,
  },
  {
    // The CLI and its worker thread. cli.js and score-worker.js are small entries that run the
    // bundles cli-main.js and score-worker-main.js with V8's code cache (src/cli/code-cache.ts;
    // the caches are made below).
    ...common,
    plugins: [mathjsOutside],
    entryPoints: { cli: 'src/cli/entry.ts', 'score-worker': 'src/cli/score-worker-entry.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    minify: !watch,
  },
  {
    ...common,
    plugins: [mathjsOutside],
    // parquet-worker.js: the TRL reader's parse thread (src/logs/parquet.ts), used by the CLI and
    // the extension host alike (both find it beside their bundle).
    entryPoints: { 'cli-main': 'src/cli/main.ts', 'score-worker-main': 'src/cli/score-worker.ts', 'parquet-worker': 'src/logs/parquet-worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: !watch,
  },
  {
    // The VS Code extension host (node); 'vscode' is provided by the host at run time.
    ...common,
    plugins: [mathjsOutside],
    entryPoints: { extension: 'src/extension/extension.ts', 'whatif-worker': 'src/extension/workers/whatif-worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    // the dump converter's Python source, run as `python -c` (src/extension/convert/converter.ts)
    loader: { '.py': 'text' },
    minify: !watch,
  },
  {
    // The consensus panel (browser). CSS is bundled beside it as dist/webview/main.css.
    ...common,
    // report-page: the `report --html` page's script, which the CLI inlines with the page's nonce.
    entryPoints: { main: 'webview/main.ts', dashboard: 'webview/dashboard/main.ts', compare: 'webview/compare/main.ts', 'report-page': 'webview/report/main.ts' },
    outdir: 'dist/webview',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: !watch,
    loader: { '.css': 'css' },
  },
];

for (const options of bundles) {
  if (watch) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else {
    await esbuild.build(options);
  }
}
if (release) for (const f of readdirSync('dist', { recursive: true })) if (String(f).endsWith('.map')) rmSync(join('dist', String(f)));
if (!watch) {
  chmodSync('dist/cli.js', 0o755);
  codeCaches();
}

/**
 * V8's code cache of the CLI bundles (src/cli/code-cache.ts): each bundle gets a last line with
 * the hash of its text, then a training run (`score --no-cache` of the example run on two threads — a cached run starts no worker —, every
 * operator) writes the bytecode V8 compiled, top level and the functions the run called, beside
 * each bundle as BUNDLE.cache. Without a cache (this step failed, or another Node) the CLI runs
 * as usual, only slower to start.
 */
function codeCaches() {
  for (const f of ['dist/cli-main.js', 'dist/score-worker-main.js']) {
    rmSync(`${f}.cache`, { force: true });
    rmSync(`${f}.cache.tmp`, { force: true });
    const text = readFileSync(f, 'utf8');
    const key = createHash('sha256').update(text).digest('hex').slice(0, 16);
    writeFileSync(f, `${text}//# code-cache-key=${key}\n`);
  }
  const r = spawnSync(process.execPath, ['dist/cli.js', 'score', 'examples/demo-run', '--jobs', '2', '--no-cache'], {
    env: { ...process.env, CONSENSUS_LENS_WRITE_CODE_CACHE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  for (const f of ['dist/cli-main.js', 'dist/score-worker-main.js']) rmSync(`${f}.cache.tmp`, { force: true });
  const made = ['dist/cli-main.js.cache', 'dist/score-worker-main.js.cache'].filter((f) => existsSync(f));
  if (r.status !== 0 || made.length !== 2) console.warn(`code caches not made (${made.length} of 2; exit ${r.status}): ${r.stderr}`);
}
