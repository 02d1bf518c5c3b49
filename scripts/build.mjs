// One esbuild script for every bundle: the CLI (node), and later the extension host (node) and
// the webview (browser). `node scripts/build.mjs [--watch]`.
import * as esbuild from 'esbuild';
import { chmodSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: 'linked', logLevel: 'warning', legalComments: 'none' };

const bundles = [
  {
    ...common,
    entryPoints: { cli: 'src/cli/main.ts', 'score-worker': 'src/cli/score-worker.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
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
