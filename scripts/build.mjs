// One esbuild script for every bundle: the CLI (node), and later the extension host (node) and
// the webview (browser). `node scripts/build.mjs [--watch]`.
import * as esbuild from 'esbuild';
import { chmodSync } from 'node:fs';
import { buildWasm } from './build-wasm.mjs';

// The WebAssembly kernels first (each .wat → its -wasm.ts module, see build-wasm.mjs), so no
// bundle holds stale bytes. (In --watch mode only at start: after editing a .wat, re-run this.)
if (await buildWasm()) console.log('WebAssembly modules regenerated from their .wat (written above)');

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: 'linked', logLevel: 'warning', legalComments: 'none' };

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
    ...common,
    plugins: [mathjsOutside],
    entryPoints: { cli: 'src/cli/main.ts', 'score-worker': 'src/cli/score-worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    minify: !watch,
  },
  {
    // The VS Code extension host (node); 'vscode' is provided by the host at run time.
    ...common,
    plugins: [mathjsOutside],
    entryPoints: { extension: 'src/extension/extension.ts', 'whatif-worker': 'src/extension/whatif/worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: !watch,
  },
  {
    // The consensus panel (browser). CSS is bundled beside it as dist/webview/main.css.
    ...common,
    entryPoints: { main: 'webview/main.ts', dashboard: 'webview/dashboard/main.ts' },
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
if (!watch) chmodSync('dist/cli.js', 0o755);
