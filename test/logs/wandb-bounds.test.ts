// W&B table files are read column by column from their bytes on the parse thread (json-table.ts,
// parquet.ts): a table many times larger than the asking thread's heap, wide with log_extra
// columns, is read by a host whose own heap could not parse it whole, and its roll-outs carry only
// the columns the views use. The cell bound and malformed JSON are errors naming the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cellAt, readTableColumns, tableShape } from '../../src/logs/json-table.js';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

function tableDir(name: string, body: string): string {
  const dir = scratchDir('cl-wandb-');
  const media = join(dir, 'wandb', 'run-20250101_000000-abc123', 'files', 'media', 'table');
  mkdirSync(media, { recursive: true });
  writeFileSync(join(media, name), body);
  return dir;
}

/** RunIndex.open in a child whose heap is `heapMb`: the table's groups, a roll-out's extra keys and the notices. */
function openInChild(dir: string, heapMb: number): { status: number | null; out: string; err: string } {
  const script = `
    const { RunIndex } = require(${JSON.stringify(join(ROOT, 'src/logs/log-layer.ts'))});
    (async () => {
      const notices = [];
      const idx = await RunIndex.open(${JSON.stringify(dir)}, { follow: false, onNotice: (n) => notices.push(n.level + ': ' + n.message) });
      const groups = idx.groups();
      const g = groups.length ? await idx.loadGroup(groups[0].key) : undefined;
      console.log(JSON.stringify({ groups: groups.length, n: g ? g.rollouts.length : 0, extra: g ? Object.keys(g.rollouts[0].extra ?? {}) : [], text: g ? g.rollouts[1].response : '', notices }));
      process.exit(0);
    })().catch((e) => { console.error('REJECTED ' + e.message); process.exit(3); });`;
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

test('a TRL W&B table wider and larger than the host heap is read off its thread; roll-outs keep only the used columns', () => {
  // TRL ≥ 1.0's shape (a mode column; log_extra columns after the rewards): 1,000 rows (125 groups
  // of 8) with 60 log_extra columns of 1.5 KB each, a ~90 MB table
  const extras = Array.from({ length: 60 }, (_, k) => `extra_${k}`);
  const pad = 'x'.repeat(1500);
  const rows: string[] = [];
  for (let q = 0; q < 125; q++) {
    for (let i = 0; i < 8; i++) rows.push(JSON.stringify(['train', '3', `question ${q}?`, `roll-out ${i}: \\boxed{${(q + i) % 3}}`, (q + i) % 3 === 0 ? 1 : 0, 0.5, ...extras.map((e) => `${e}:${q}:${i}:${pad}`), 0.25]));
  }
  const body = `{"columns":${JSON.stringify(['mode', 'step', 'prompt', 'completion', 'accuracy_reward', 'format_reward', ...extras, 'advantage'])},"data":[${rows.join(',')}]}`;
  assert.ok(body.length > 85e6, `${body.length}`);
  const dir = tableDir('completions_3_0a1b2c3d.table.json', body);
  const r = openInChild(dir, 120);
  assert.equal(r.status, 0, `child exited ${r.status}: ${r.err.slice(-1500)}`);
  const res = JSON.parse(r.out.trim().split('\n').pop()!) as { groups: number; n: number; extra: string[]; text: string; notices: string[] };
  assert.equal(res.groups, 125, JSON.stringify(res.notices));
  assert.equal(res.n, 8);
  assert.equal(res.text, 'roll-out 1: \\boxed{1}');
  // the log_extra columns are not read (every roll-out carried all 60 before)
  assert.deepEqual(res.extra.filter((k) => k.startsWith('extra_')), []);
  assert.deepEqual(res.extra.filter((k) => k.endsWith('_reward')).sort(), ['accuracy_reward', 'format_reward']);
});

test('json-table: only the asked cells are parsed; rows that are not arrays are left out; NaN is missing; malformed JSON and the cell bound are errors', () => {
  const b = Buffer.from(' { "data" : [ ["a", {"x": [1, "]"]}, NaN ], 7, ["b\\"]", null, 2.5, "extra"], [] ], "columns": ["s", "o", "n"], "nrows": 3 } ');
  const shape = tableShape(b);
  assert.deepEqual(shape.names, ['s', 'o', 'n']);
  const t = readTableColumns(b, shape, ['n', 's'], 100);
  assert.deepEqual(t.names, ['s', 'n']);
  assert.equal(t.rows, 3);
  const col = (name: string) => Array.from({ length: t.rows }, (_, r) => cellAt(t, r, t.names.indexOf(name)));
  assert.deepEqual(col('s'), ['a', 'b"]', undefined]);
  assert.deepEqual(col('n'), [null, 2.5, undefined]);
  assert.throws(() => readTableColumns(b, shape, ['s', 'o', 'n'], 5), /more than 5 cells of the columns read/);
  assert.throws(() => tableShape(Buffer.from('{"columns": ["a"], "data": [["x]]}')), /not JSON \(an unterminated string/);
  assert.throws(() => tableShape(Buffer.from('{"columns": ["a"], "data": [["x"]')), /not JSON/);
  assert.throws(() => tableShape(Buffer.from('{"rows": []}')), /not a W&B table/);
});
