// `node bench/resources.mjs [--quick]`: the per-MB resource table of BENCHMARKS.md ("Per-MB
// resources"). For each reader and for answer handling: normal input and the worst input we can
// make for it, at two sizes; wall time and peak memory above the process's baseline, per MB of
// input. Each measurement runs in a fresh process (bench/resource-case.ts). Linear readers keep
// their per-MB figures at both sizes; the "growth" column is (per-MB at the larger size) / (per-MB
// at the smaller), ~1 when linear, ~4 when quadratic.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, statSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';

const quick = process.argv.includes('--quick');
const SIZES = quick ? [1, 2] : [2, 8]; // MB
const MB = 1 << 20;
const dir = mkdtempSync(join(tmpdir(), 'cl-resources-'));
let n = 0;

const words = 'we compute the sum then divide both sides and check the value so the answer is'.split(' ');
// Seeded pseudo-random words: text that compresses as real roll-outs do (not to nothing).
let state = 12345;
const rand = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
const prose = (_i, len) => {
  let s = '';
  while (s.length < len) s += words[Math.floor(rand() * words.length)] + (rand() < 0.3 ? ` ${Math.floor(rand() * 1000)} ` : ' ');
  return s.slice(0, len);
};

function nativeRun(bytes, rollout) {
  const lines = [];
  let size = 0;
  for (let q = 0; size < bytes; q++) {
    const l = JSON.stringify({ kind: 'group', step: 1 + (q % 5), question_id: `q${q}`, rollouts: Array.from({ length: 8 }, (_, i) => ({ response: rollout(q, i), mean_logprob: -0.1 * i })) });
    lines.push(l);
    size += l.length + 1;
  }
  const f = join(dir, `run${n++}`);
  mkdirSync(f);
  writeFileSync(join(f, 'run.jsonl'), lines.join('\n') + '\n');
  return f;
}

const CRAFTED = [
  () => ('1' + ',234'.repeat(600)) + ',2345' + 'x'.repeat(2100), // the last-number fallback's worst case
  () => '\\boxed{\\sum_{i=1}^{1000}\\sum_{j=1}^{1000}(i+j)}',
  () => '\\boxed{\\prod_{k=1}^{40}\\begin{pmatrix}1&1\\\\1&0\\end{pmatrix}}',
  () => '\\boxed{' + [3, 5, 7, 11, 13, 17, 19, 23].map((p) => `\\frac{1}{${p}}^{5000}`).join('+') + '}',
  (i) => '\\boxed{' + '('.repeat(55) + i + ')'.repeat(55) + '}',
];

const INPUTS = {
  jsonl: {
    normal: (mb) => nativeRun(mb * MB, (q, i) => `${prose(q + i, 1800)} \\boxed{${(q + i) % 3}}`),
    // tiny groups of short roll-outs (the most records per MB) and hostile answers
    worst: (mb) => nativeRun(mb * MB, (q, i) => (i % 2 ? CRAFTED[(q + i) % CRAFTED.length](q) : `\\boxed{${i % 3}}`)),
  },
  parquet: {
    normal: (mb) => trlParquet(mb, (r) => `${prose(r, 1800)} \\boxed{${r % 3}}`, 8),
    // one-character completions: the most rows per MB
    worst: (mb) => trlParquet(mb, (r) => String(r % 3), 1),
  },
  wandbTrl: {
    normal: (mb) => trlTable(mb, (r) => `${prose(r, 1800)} \\boxed{${r % 3}}`),
    worst: (mb) => trlTable(mb, (r) => String(r % 3)),
  },
  wandbVerl: {
    normal: (mb) => verlTable(mb, 8),
    // one row, as many columns as the size allows (was quadratic in the columns)
    worst: (mb) => verlTable(mb, Infinity),
  },
};

function trlParquet(mb, completion, promptEvery) {
  const rows = [];
  let size = 0;
  for (let r = 0; size < mb * MB; r++) {
    const c = completion(r);
    rows.push(c);
    size += c.length + 12;
  }
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'step', data: rows.map(() => 3n), type: 'INT64' },
      { name: 'prompt', data: rows.map((_, r) => `question ${Math.floor(r / promptEvery)}`), type: 'STRING' },
      { name: 'completion', data: rows, type: 'STRING' },
      { name: 'accuracy_reward', data: rows.map((_, r) => r % 2), type: 'DOUBLE' },
    ],
  });
  const d = join(dir, `pq${n++}`, 'completions');
  mkdirSync(d, { recursive: true });
  const f = join(d, 'completions_00003.parquet');
  writeFileSync(f, Buffer.from(buf));
  return f;
}

function trlTable(mb, completion) {
  const data = [];
  let size = 0;
  for (let r = 0; size < mb * MB; r++) {
    const row = ['3', `question ${r >> 3}`, completion(r), r % 2, 0.5];
    data.push(row);
    size += JSON.stringify(row).length + 1;
  }
  const f = join(dir, `completions_3_${(n++).toString(16)}aa.table.json`);
  writeFileSync(f, JSON.stringify({ columns: ['step', 'prompt', 'completion', 'correctness_reward', 'advantage'], data }));
  return f;
}

function verlTable(mb, samples) {
  const cell = (k) => [`question ${k % 50}`, `${prose(k, samples === Infinity ? 20 : 1800)} \\boxed{${k % 3}}`, k % 2];
  const perRow = samples === Infinity ? Math.ceil((mb * MB) / 60) : samples;
  const columns = ['step'];
  for (let k = 1; k <= perRow; k++) columns.push(`input_${k}`, `output_${k}`, `score_${k}`);
  const data = [];
  let size = 0;
  for (let r = 0; size < mb * MB; r++) {
    const row = [r];
    for (let k = 0; k < perRow; k++) row.push(...cell(r * perRow + k));
    data.push(row);
    size += JSON.stringify(row).length;
  }
  const f = join(dir, `generations_${(n++).toString()}_abcd.table.json`);
  writeFileSync(f, JSON.stringify({ columns, data }));
  return f;
}

function answersInput(mb, worst) {
  const out = [];
  let size = 0;
  for (let i = 0; size < mb * MB; i++) {
    const r = worst ? CRAFTED[i % CRAFTED.length](i) : `${prose(i, 1800)} so the answer is \\boxed{${i % 7}}`;
    out.push(r);
    size += r.length;
  }
  const f = join(dir, `answers${n++}.json`);
  writeFileSync(f, JSON.stringify(out));
  return f;
}

/** A tiny parquet file: the parse thread is started (and compiled under tsx) before the clock. */
const WARM_PARQUET = trlParquet(0.001, () => 'x', 1);

function measure(kind, path) {
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/resource-case.ts', kind, path, WARM_PARQUET], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${kind} ${path}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function sizeOf(path) {
  const st = statSync(path);
  return st.isDirectory() ? statSync(join(path, 'run.jsonl')).size : st.size;
}

const rows = [];
const cases = [
  ['JSONL run, `score`', 'score', 'jsonl'],
  ['JSONL run, run index (extension)', 'index', 'jsonl'],
  ['TRL parquet', 'parquet', 'parquet'],
  ['W&B TRL completions table', 'wandb', 'wandbTrl'],
  ['W&B verl validation table', 'wandb', 'wandbVerl'],
  ['answers (extraction + classes)', 'answers', null],
];
for (const [label, kind, input] of cases) {
  for (const which of ['normal', 'worst']) {
    const per = SIZES.map((mb) => {
      const path = input ? INPUTS[input][which](mb) : answersInput(mb, which === 'worst');
      const inMb = sizeOf(path) / MB;
      const m = measure(kind, path);
      return { inMb, msPerMb: m.ms / inMb, mbPerMb: m.peakMb / inMb };
    });
    const [a, b] = per;
    rows.push({ label, which, a, b, growth: b.msPerMb / a.msPerMb });
    process.stderr.write(`${label} ${which}: ${JSON.stringify(per)}\n`);
  }
}
const f = (x, d = 1) => x.toFixed(d);
console.log(`| reader | input | ms / MB at ${SIZES[0]} MB | ms / MB at ${SIZES[1]} MB | time growth | peak MB / MB at ${SIZES[0]} MB | peak MB / MB at ${SIZES[1]} MB |`);
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.label} | ${r.which} | ${f(r.a.msPerMb)} | ${f(r.b.msPerMb)} | ${f(r.growth, 2)} | ${f(r.a.mbPerMb, 2)} | ${f(r.b.mbPerMb, 2)} |`);
