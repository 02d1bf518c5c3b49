// The code base's habits, held by tests so they do not drift back: a thrown value is read through
// src/util/errors.ts (never cast to Error: a worker, a library or a user's code can throw a string
// or null), and code outside src/engine reaches the engine only through its declared entry points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { asError, errnoCode, errorMessage, errorName, errorStack } from '../src/util/errors';

const ROOT = join(import.meta.dirname, '..');
const SELF = relative(ROOT, import.meta.filename);

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === 'node_modules' || name === 'fixtures' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) sources(p, out);
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('-wasm.ts')) out.push(p);
  }
  return out;
}
const ALL = ['src', 'webview', 'scripts', 'bench', 'test'].flatMap((d) => sources(d)).filter((f) => f !== SELF);

test('errorMessage reads any thrown value, not only an Error', () => {
  assert.equal(errorMessage(new TypeError('bad')), 'bad');
  assert.equal(errorMessage('plain string'), 'plain string');
  assert.equal(errorMessage(null), 'null');
  assert.equal(errorMessage(undefined), 'undefined');
  assert.equal(errorMessage(42), '42');
  assert.equal(errorMessage({ message: 'from a worker' }), 'from a worker');
  assert.equal(errorMessage({ message: 7 }), '[object Object]');
  const errno = Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
  assert.equal(errnoCode(errno), 'ENOENT');
  assert.equal(errnoCode('ENOENT'), undefined);
  assert.equal(errnoCode({ code: 1 }), undefined);
  assert.equal(errorName(new RangeError('x')), 'RangeError');
  assert.equal(errorName(null), undefined);
  const wrapped = asError('thrown text');
  assert.ok(wrapped instanceof Error);
  assert.equal(wrapped.message, 'thrown text');
  assert.equal(asError(errno), errno);
  assert.match(errorStack(new Error('with stack')), /with stack\n\s+at /);
  assert.equal(errorStack(3), '3');
});

test('no thrown value is cast to Error (src/util/errors.ts reads it)', () => {
  const found: string[] = [];
  for (const f of ALL) {
    readFileSync(join(ROOT, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\bas (Error|NodeJS\.ErrnoException)\b/.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, [], 'use errorMessage / errnoCode / errorName / asError from src/util/errors.ts');
});

// The engine's entry points. Its own tests (test/engine, test/answers, test/fuzz) and the
// benchmarks of its kernels (bench/) may reach behind them; nothing else may.
const ENTRY = new Set(['src/engine', 'src/engine/index', 'src/engine/browser']);
const BROWSER_ONLY = ['webview/', 'src/protocol/'];
const MAY_REACH_IN = ['src/engine/', 'test/engine/', 'test/answers/', 'test/fuzz/', 'bench/'];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'([^']+)'/gm;

/** Every module a file imports or re-exports, statically or with import(), resolved from the root (no extension). */
function importsOf(file: string): string[] {
  return specifiers(readFileSync(join(ROOT, file), 'utf8'), file);
}

function specifiers(text: string, file: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[1].startsWith('.')) out.push(normalize(join(dirname(file), m[1])).replace(/\.(js|ts)$/, ''));
  }
  return out;
}

test('outside src/engine, the engine is imported through src/engine/index.ts or browser.ts only', () => {
  const deep: string[] = [];
  for (const f of ALL) {
    if (MAY_REACH_IN.some((d) => f.startsWith(d))) continue;
    for (const target of importsOf(f)) {
      if (!target.startsWith('src/engine')) continue;
      if (!ENTRY.has(target)) deep.push(`${f} → ${target}`);
      else if (BROWSER_ONLY.some((d) => f.startsWith(d)) && target !== 'src/engine/browser') deep.push(`${f} → ${target} (a webview bundle: src/engine/browser.ts)`);
    }
  }
  assert.deepEqual(deep, [], 'export the name from src/engine/index.ts (or browser.ts for the webviews) and import it from there');
});

test('the import scan sees every form of import', () => {
  // the rule above is only as good as this reader: a deep import in each form is found
  assert.ok(importsOf(SELF).includes('src/util/errors'), 'a named import');
  const forms = ["import { x } from '../src/engine/hash';", "export { x } from '../src/engine/hash.js';", "const m = await import('../src/engine/hash');", "import '../src/engine/hash';", "import {\n  a,\n  b,\n} from '../src/engine/hash';"];
  for (const form of forms) assert.deepEqual(specifiers(form, 'test/x.ts'), ['src/engine/hash'], form);
});

// An operator's id is written in its registry (src/engine/operators/ids.ts, registry.ts), its
// module, its tests, its docs and package.json's settings enum; everything else derives lists and
// labels from OPERATOR_IDS / OPERATOR_LABELS / OPERATORS. A line naming three or more operators is
// a hand-written list (it would miss a new operator); the declared subsets below are choices, not
// the list.
const OPERATOR_SUBSETS = new Set(['src/protocol/dashboard-messages.ts']);

test('no hand-written operator lists outside the registry', async () => {
  const { OPERATOR_IDS } = await import('../src/engine');
  const named = (line: string) => OPERATOR_IDS.filter((id) => new RegExp(`['"]${id}['"]|\\b${id}\\s*:`).test(line));
  assert.equal(named("const order = ['majority', 'cisc', 'ec', 'core'];").length, 4, 'the scan sees a list');
  assert.equal(named("{ majority: 'foreground', cisc: 'charts-orange', ec: 'charts-red' }").length, 3, 'and a map');
  const lists: string[] = [];
  for (const f of ALL.filter((x) => x.startsWith('src/') || x.startsWith('webview/'))) {
    if (OPERATOR_SUBSETS.has(f)) continue;
    readFileSync(join(ROOT, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (named(line).length >= 3) lists.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  assert.deepEqual(lists, [], 'derive the list from OPERATOR_IDS (src/engine/operators/ids.ts) or the registry');
});

// A source file over LONG lines has one job and says why it is long in its header ("Long file:");
// a longer file with several jobs is split instead.
const LONG = 600;

test(`every source file over ${LONG} lines says why in its header`, () => {
  const unexplained: string[] = [];
  for (const f of ALL.filter((x) => x.startsWith('src/') || x.startsWith('webview/'))) {
    const lines = readFileSync(join(ROOT, f), 'utf8').split('\n');
    if (lines.length <= LONG) continue;
    const header = lines.slice(0, lines.findIndex((l) => !l.startsWith('//')));
    if (!header.some((l) => l.startsWith('// Long file: '))) unexplained.push(`${f}: ${lines.length} lines`);
  }
  assert.deepEqual(unexplained, [], `split the file, or say in its header why one job needs over ${LONG} lines ("// Long file: …")`);
});
