// The host's layers (ARCHITECTURE.md "Layers of the host"), held so the arrows that must never be
// drawn stay undrawn:
//   - the worker runtime (src/extension/workers/) runs inside worker threads: it imports the engine,
//     the log layer, the protocol's shapes and src/util — never the host (src/extension outside
//     workers/) and never 'vscode';
//   - the host reaches the workers only through their entry, src/extension/workers/runtime.ts (the
//     run model in src/extension/model/ above all: it must not know the threads, the shards or
//     their messages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const WORKERS = 'src/extension/workers/';
const ENTRY = 'src/extension/workers/runtime';
/** What a worker file may import besides its own folder (and Node's built-in modules). */
const WORKERS_MAY_IMPORT = ['src/engine', 'src/logs', 'src/protocol', 'src/util'];

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) sources(p, out);
    else if (/\.(ts|mts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'([^']+)'/gm;

/** A file's imports: relative ones resolved from the root (no extension), bare ones as written. */
function importsOf(text: string, file: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1].startsWith('.') ? normalize(join(dirname(file), m[1])).replace(/\.(js|ts)$/, '') : m[1]);
  return out;
}

const builtin = (spec: string): boolean => spec.startsWith('node:') || builtinModules.includes(spec);
const under = (target: string, dir: string): boolean => target === dir || target.startsWith(`${dir}/`);

/** The arrows a file draws that the layers forbid. */
function violations(file: string, text: string): string[] {
  const out: string[] = [];
  for (const target of importsOf(text, file)) {
    if (file.startsWith(WORKERS)) {
      if (target.startsWith('src/') || target.startsWith('.')) {
        if (!under(target, WORKERS.slice(0, -1)) && !WORKERS_MAY_IMPORT.some((d) => under(target, d))) out.push(`${file} → ${target} (a worker imports the host)`);
      } else if (!builtin(target)) out.push(`${file} → '${target}' (a worker imports a package: ${target === 'vscode' ? 'the editor' : 'not a layer below it'})`);
    } else if (file.startsWith('src/extension/') && under(target, WORKERS.slice(0, -1)) && target !== ENTRY) {
      out.push(`${file} → ${target} (the host reaches the workers only through ${ENTRY}.ts)`);
    }
  }
  return out;
}

test('the worker runtime never imports the host or vscode; the host (the run model above all) reaches it only through its entry', () => {
  const found = sources('src/extension').flatMap((f) => violations(f, readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(found, []);
});

test('the layer rule sees the arrows it forbids', () => {
  // the rule above is only as good as this reader: each forbidden arrow, in each form, is found
  const bad: [string, string][] = [
    ['src/extension/workers/whatif-shard.ts', "import { RunStore } from '../model/run-store';"],
    ['src/extension/workers/whatif-shard.ts', "import type { QuestionView } from '../settings';"],
    ['src/extension/workers/whatif-engine.ts', "import * as vscode from 'vscode';"],
    ['src/extension/workers/load-group.ts', "const m = await import('../../extension/model/scoring');"],
    ['src/extension/model/run-store.ts', "import { WhatIfShard } from '../workers/whatif-shard';"],
    ['src/extension/model/prepared-groups.ts', "export { loadGroup } from '../workers/load-group.js';"],
    ['src/extension/whatif/whatif-controller.ts', "import { WhatIfEngine } from '../workers/whatif-engine';"],
  ];
  for (const [file, text] of bad) assert.equal(violations(file, text).length, 1, `${file}: ${text}`);
  const fine: [string, string][] = [
    ['src/extension/workers/whatif-shard.ts', "import { prepareGroup } from '../../engine';\nimport { readRolloutText } from '../../logs/log-layer';\nimport type { RunViewModel } from '../../protocol/compare-messages';\nimport { parentPort } from 'node:worker_threads';\nimport { readlinkSync } from 'fs';\nimport { loadGroup } from './load-group';"],
    ['src/extension/model/run-store.ts', "import { prepareEntry, type RunItem } from '../workers/runtime';"],
  ];
  for (const [file, text] of fine) assert.deepEqual(violations(file, text), [], `${file}: ${text}`);
});
