// Every `docs/<page>.md#<heading>` cited in the repository's code resolves to a heading of that
// page (GitHub's anchor rule), and nothing cites a contract file the repository does not have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const SCANNED = ['src', 'webview', 'python', 'scripts', 'bench', 'test', 'package.json'];
const TEXT = /\.(ts|mts|mjs|js|py|sh|wat|css|html|json|toml|cfg)$/;
const SKIP_DIRS = new Set(['node_modules', '__pycache__', '.venv', '.venv-frameworks', 'dist', '.vscode-test']);
const SELF = relative(ROOT, import.meta.filename);

function files(path: string, out: string[] = []): string[] {
  const st = statSync(path);
  if (st.isFile()) {
    if (TEXT.test(path)) out.push(path);
    return out;
  }
  for (const name of readdirSync(path)) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
    files(join(path, name), out);
  }
  return out;
}

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const CITATION = /docs\/([\w-]+\.md)#([\p{L}\p{N}_-]+)/gu;

/** The citations of one file's text that resolve to nothing. */
function brokenCitations(text: string, rel: string, cache: Map<string, Set<string> | null>): { count: number; broken: string[] } {
  const broken: string[] = [];
  let count = 0;
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(CITATION)) {
      count++;
      const page = join(ROOT, 'docs', m[1]);
      if (!cache.has(page)) cache.set(page, existsSync(page) ? anchors(page) : null);
      const a = cache.get(page);
      if (!a) broken.push(`${rel}:${i + 1}: docs/${m[1]} does not exist`);
      else if (!a.has(m[2])) broken.push(`${rel}:${i + 1}: docs/${m[1]} has no heading #${m[2]}`);
    }
  });
  return { count, broken };
}

test('a citation of a missing heading or page is caught', () => {
  const r = brokenCitations('// docs/contract.md#ec-and-core\n// docs/contract.md#no-such-heading\n# docs/nothing.md#x', 'x.ts', new Map());
  assert.equal(r.count, 3);
  assert.deepEqual(r.broken, ['x.ts:2: docs/contract.md has no heading #no-such-heading', 'x.ts:3: docs/nothing.md does not exist']);
});

test('slug follows GitHub anchors', () => {
  assert.equal(slug('EC and CoRE'), 'ec-and-core');
  assert.equal(slug('Answer extraction'), 'answer-extraction');
  assert.equal(slug('2. Timeline and alarms'), '2-timeline-and-alarms');
  assert.equal(slug('MS-TTRL'), 'ms-ttrl');
});

test('every docs/…md#heading citation in the code resolves to a heading', () => {
  const cache = new Map<string, Set<string> | null>();
  const broken: string[] = [];
  let count = 0;
  for (const f of SCANNED.flatMap((p) => files(join(ROOT, p)))) {
    const rel = relative(ROOT, f);
    if (rel === SELF) continue;
    const r = brokenCitations(readFileSync(f, 'utf8'), rel, cache);
    count += r.count;
    broken.push(...r.broken);
  }
  assert.deepEqual(broken, []);
});

test('the contract page has the headings the code relies on', () => {
  const a = anchors(join(ROOT, 'docs', 'contract.md'));
  for (const h of ['native-format', 'answer-extraction', 'answer-equivalence', 'tie-rule', 'ec-and-core', 'grpo-view', 'command-line']) assert.ok(a.has(h), h);
});
