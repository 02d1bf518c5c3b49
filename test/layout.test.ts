// The tree's layout, held by tests so it does not drift back: no hand-written source file over
// MAX_LINES, no two source files of one name in src/, no import circle among src/ files (nor among
// the Python package's modules), and the engine's core never imports the run-level reporting
// (src/engine/analysis/). Each rule's scanner is checked on a made-up case first, so a rule that
// passes is one that could have failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

/**
 * Files other branches still have to move, rename or split (each a rule they break today, named
 * by its owner). The lead empties this list when the branches are merged: an entry whose file no
 * longer breaks its rule fails the test below, so the list cannot outlive its reason.
 */
// What still breaks a rule while parallel work lands (emptied at each merge; a stale entry fails
// the test below). None today.
const PENDING_OTHER_BRANCHES: { size: string[]; names: string[]; circles: string[][]; pythonCircles: string[][] } = {
  size: [],
  names: [],
  circles: [],
  pythonCircles: [],
};

const MAX_LINES = 700;
/** The answer parsers: one grammar each, kept whole (docs/answers.md). */
const LONG_BY_NATURE = new Set(['src/engine/answers/typed.ts', 'src/engine/answers/latex.ts']);

function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(join(ROOT, dir))) return out;
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === 'node_modules' || name === '__pycache__' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) walk(p, keep, out);
    else if (keep(name)) out.push(p);
  }
  return out;
}
/** Hand-written TypeScript: the `-wasm.ts` modules are generated from their `.wat`. */
const isTs = (name: string) => /\.(ts|mts)$/.test(name) && !name.endsWith('-wasm.ts') && !name.endsWith('.d.ts');
const TS_SRC = walk('src', isTs);
const PY = walk('python/consensus_lens', (n) => n.endsWith('.py'));
const SIZED = [...TS_SRC, ...walk('webview', isTs), ...PY];

// ---- file size ----

function overSize(files: string[], lines: (f: string) => number): string[] {
  return files.filter((f) => !LONG_BY_NATURE.has(f) && lines(f) > MAX_LINES).map((f) => `${f}: ${lines(f)} lines`);
}
const lineCount = (f: string) => readFileSync(join(ROOT, f), 'utf8').replace(/\n$/, '').split('\n').length;

test(`no hand-written source file over ${MAX_LINES} lines (src/, webview/, python/consensus_lens/)`, () => {
  assert.deepEqual(overSize(['a.ts', 'b.ts'], (f) => (f === 'a.ts' ? MAX_LINES + 1 : MAX_LINES)), [`a.ts: ${MAX_LINES + 1} lines`], 'the scan sees a long file');
  assert.ok(SIZED.includes('python/consensus_lens/reward.py') && SIZED.includes('webview/dashboard/main.ts'), 'the scan reads every tree');
  const pending = new Set(PENDING_OTHER_BRANCHES.size);
  assert.deepEqual(
    overSize(SIZED, lineCount).filter((l) => !pending.has(l.split(':')[0])),
    [],
    'split the file by job (ARCHITECTURE.md says where each part goes)',
  );
});

// ---- names ----

function duplicateNames(files: string[]): string[] {
  const by = new Map<string, string[]>();
  for (const f of files) by.set(basename(f), [...(by.get(basename(f)) ?? []), f]);
  return [...by.values()].filter((l) => l.length > 1).map((l) => l.sort().join(' = '));
}

test('no two source files in src/ share a name (one index.ts: the engine entry point)', () => {
  assert.deepEqual(duplicateNames(['src/a/x.ts', 'src/b/x.ts', 'src/b/y.ts']), ['src/a/x.ts = src/b/x.ts'], 'the scan sees a shared name');
  const pending = new Set(PENDING_OTHER_BRANCHES.names);
  assert.deepEqual(duplicateNames(TS_SRC.filter((f) => !pending.has(f))), [], 'name the file after what it holds');
  const index = TS_SRC.filter((f) => basename(f) === 'index.ts' && !pending.has(f));
  assert.deepEqual(index, ['src/engine/index.ts']);
});

// ---- import circles ----

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'([^']+)'/gm;

/** The src/ files a TypeScript file imports (statically, dynamically, type-only or re-exported), resolved to files. */
function tsImports(file: string, text = readFileSync(join(ROOT, file), 'utf8'), exists = (p: string) => existsSync(join(ROOT, p))): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (!m[1].startsWith('.')) continue;
    const base = normalize(join(dirname(file), m[1])).replace(/\.(js|ts)$/, '');
    const hit = [`${base}.ts`, `${base}.mts`, join(base, 'index.ts')].find(exists);
    if (hit) out.push(hit);
  }
  return out;
}

/**
 * The package modules a Python module imports, at the top or inside a function (both are a
 * dependency). The top-level `if __name__ == "__main__":` block is left out: `python -m` runs the
 * file as the module `__main__`, a module of its own, so what that block imports is the script's
 * dependency, not the library module's (`python -m consensus_lens.verl --dry-run` runs
 * verl_dry_run.py, which imports the library module consensus_lens.verl).
 */
function pyImports(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const dir = dirname(file);
  const out = new Set<string>();
  const library = text.replace(/^if __name__ == ["']__main__["']:\n(?:(?:[ \t]+.*)?\n)*(?:[ \t]+.*)?/m, '');
  for (const m of library.matchAll(/^\s*from\s+(?:\.|consensus_lens\.)(\w+)\s+import\b|^\s*import\s+consensus_lens\.(\w+)/gm)) {
    const mod = join(dir, `${m[1] ?? m[2]}.py`);
    if (mod !== file) out.add(mod);
  }
  return [...out];
}

/** The strongly connected components of more than one file (Tarjan), each sorted, largest first. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

test('the import scan resolves every form and the circle finder finds a circle', () => {
  const files = new Set(['src/a.ts', 'src/b/index.ts', 'src/c.ts']);
  const has = (p: string) => files.has(p);
  assert.deepEqual(tsImports('src/a.ts', "import type { X } from './b';\nexport { y } from './c.js';\nconst z = await import('./a');", has), ['src/b/index.ts', 'src/c.ts', 'src/a.ts']);
  assert.deepEqual(pyImports('python/consensus_lens/a.py', 'def f():\n    from .ray import Pool\nfrom consensus_lens.records import x\nimport os\n'), ['python/consensus_lens/ray.py', 'python/consensus_lens/records.py']);
  assert.deepEqual(pyImports('python/consensus_lens/a.py', 'import os\n\nif __name__ == "__main__":\n    import sys\n\n    from .b import main\n\n    sys.exit(main())\nfrom .c import x\n'), ['python/consensus_lens/c.py']);
  const g = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  assert.deepEqual(circles(g), [['a', 'b', 'c']]);
  assert.deepEqual(circles(new Map([['a', ['b']], ['b', []]])), []);
});

test('no import circle among src/ files (type-only imports included)', () => {
  const graph = new Map(TS_SRC.map((f) => [f, tsImports(f).filter((t) => t.startsWith('src/'))]));
  const pending = new Set(PENDING_OTHER_BRANCHES.circles.map((c) => [...c].sort().join(' ')));
  const found = circles(graph).filter((c) => !pending.has(c.join(' ')));
  assert.deepEqual(found, [], 'a module that needs a name from a module that imports it: move the name down to a module both import');
});

test('no import circle among the Python package modules', () => {
  const graph = new Map(PY.map((f) => [f, pyImports(f)]));
  const pending = new Set(PENDING_OTHER_BRANCHES.pythonCircles.map((c) => [...c].sort().join(' ')));
  assert.deepEqual(
    circles(graph).filter((c) => !pending.has(c.join(' '))),
    [],
    'import the shared name from a module both import',
  );
});

// ---- the engine's layers ----

/** The run-level reporting: over many groups, using the operators. The operators' own maths lives in the core. */
const REPORTING = 'src/engine/analysis/';
/** The engine's entry points re-export both layers. */
const ENGINE_ENTRIES = new Set(['src/engine/index.ts', 'src/engine/browser.ts']);

function coreToReporting(files: string[], importsOf: (f: string) => string[]): string[] {
  const bad: string[] = [];
  for (const f of files) {
    if (!f.startsWith('src/engine/') || f.startsWith(REPORTING) || ENGINE_ENTRIES.has(f)) continue;
    for (const t of importsOf(f)) if (t.startsWith(REPORTING) || ENGINE_ENTRIES.has(t)) bad.push(`${f} → ${t}`);
  }
  return bad;
}

test("the engine's core never imports the run-level reporting (src/engine/analysis/) nor the engine's entry points", () => {
  assert.deepEqual(
    coreToReporting(['src/engine/score.ts', 'src/engine/analysis/x.ts'], (f) => (f === 'src/engine/score.ts' ? ['src/engine/analysis/grpo.ts'] : ['src/engine/score.ts'])),
    ['src/engine/score.ts → src/engine/analysis/grpo.ts'],
    'the scan sees the arrow',
  );
  assert.deepEqual(coreToReporting(TS_SRC, (f) => tsImports(f)), [], 'move the maths an operator needs out of src/engine/analysis/');
});

// ---- the logs layer (ARCHITECTURE.md, "The CLI's read path") ----

/** Reading and assembling (every file of src/logs but these) never imports the caches or the followed index above it. */
const LOGS_ABOVE_READING = /^src\/logs\/(cache\/|follow\/|run-index|log-layer\.ts$)/;

function logsArrows(files: string[], importsOf: (f: string) => string[]): string[] {
  const bad: string[] = [];
  for (const f of files) {
    if (!f.startsWith('src/logs/')) continue;
    for (const t of importsOf(f)) {
      if (t.startsWith('src/cli/') || t.startsWith('src/extension/')) bad.push(`${f} → ${t}`);
      else if (!LOGS_ABOVE_READING.test(f) && LOGS_ABOVE_READING.test(t)) bad.push(`${f} → ${t}`);
      else if (t === 'src/logs/log-layer.ts') bad.push(`${f} → ${t} (re-exports only: import the module itself)`);
    }
  }
  return bad;
}

test('the logs layer: reading never imports the caches or the followed index; nothing in src/logs imports the CLI, the host or log-layer.ts', () => {
  assert.deepEqual(
    logsArrows(['src/logs/read-run.ts', 'src/logs/cache/cached-run.ts'], (f) => (f === 'src/logs/read-run.ts' ? ['src/logs/cache/cache-fill.ts', 'src/logs/records.ts'] : ['src/logs/read-run.ts'])),
    ['src/logs/read-run.ts → src/logs/cache/cache-fill.ts'],
    'the scan sees the arrow',
  );
  assert.deepEqual(logsArrows(TS_SRC, (f) => tsImports(f)), [], 'a reading stage hands its result down; the cache calls the read, never the reverse');
});

// ---- the allow-list ----

test('every PENDING_OTHER_BRANCHES entry still breaks its rule (else remove it)', () => {
  const stale: string[] = [];
  for (const f of PENDING_OTHER_BRANCHES.size) if (!existsSync(join(ROOT, f)) || lineCount(f) <= MAX_LINES) stale.push(`size: ${f}`);
  const dup = new Set(duplicateNames(TS_SRC).flatMap((l) => l.split(' = ')));
  for (const f of PENDING_OTHER_BRANCHES.names) if (!dup.has(f)) stale.push(`names: ${f}`);
  const graph = new Map(TS_SRC.map((f) => [f, tsImports(f).filter((t) => t.startsWith('src/'))]));
  const now = new Set(circles(graph).map((c) => c.join(' ')));
  for (const c of PENDING_OTHER_BRANCHES.circles) if (!now.has([...c].sort().join(' '))) stale.push(`circles: ${c.join(' ')}`);
  const py = new Set(circles(new Map(PY.map((f) => [f, pyImports(f)]))).map((c) => c.join(' ')));
  for (const c of PENDING_OTHER_BRANCHES.pythonCircles) if (!py.has([...c].sort().join(' '))) stale.push(`pythonCircles: ${c.join(' ')}`);
  assert.deepEqual(stale, []);
});
