// Property-based fuzzing (fast-check, fixed seeds, bounded runs: < 60 s in all) of what reads
// untrusted bytes and model output: the LaTeX parser, answer comparison, and the parquet, W&B
// table and JSONL readers. Each property is first replayed on the committed corpus
// (test/fuzz/corpus: the inputs that once crashed, hung or exhausted memory, and real writers'
// files as seeds for mutation), then on generated inputs. Every input must give a result or a
// clear error — never a crash, a hang or unbounded memory: each one is timed and the heap checked.
// A counterexample fast-check reports goes into the corpus with its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { answersEqual, explainEquality, clearAnswerCaches } from '../../src/engine/answers/answers';
import { canonicalOf } from '../../src/engine/answers/classes';
import { checkParquet, readParquetColumns } from '../../src/logs/parquet';
import { readWandbTable } from '../../src/logs/wandb';
import { readRun } from '../../src/logs/log-layer';
import { scratchDir } from '../scratch';

const CORPUS = join(import.meta.dirname, 'corpus');
const SEED = 20261202;
/** Per input, far above a bounded cost (answer budgets: 1 M units a parse or comparison, ~50–300 ms here; a reader: milliseconds). */
const MAX_MS = 3000;
const MAX_HEAP_GROWTH = 400 << 20;

async function bounded<T>(what: string, run: () => T | Promise<T>): Promise<T> {
  const h0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const v = await run();
  const ms = performance.now() - t0;
  if (ms >= MAX_MS) console.error(`SLOW ${what}: ${ms.toFixed(0)} ms`);
  assert.ok(ms < MAX_MS, `${what}: ${ms.toFixed(0)} ms`);
  assert.ok(process.memoryUsage().heapUsed - h0 < MAX_HEAP_GROWTH, `${what}: heap grew by ${((process.memoryUsage().heapUsed - h0) / 2 ** 20).toFixed(0)} MB`);
  return v;
}

// mathjs loads on the first numeric evaluation that needs it (seconds under tsx on a loaded
// machine; not work on an answer, so charged nothing): loaded before the inputs are timed.
answersEqual('\\sqrt{-4}', '2i');

const show = (s: string): string => JSON.stringify(s.length > 200 ? s.slice(0, 200) + '…' : s);

// ---------------------------------------------------------------- LaTeX and answers

const ATOMS = [
  '\\sum_{k=1}^{1000}', '\\sum_{i=1}^{9}', '\\prod_{k=1}^{40}', '\\frac{1}{3}', '\\frac', '\\dfrac{2}{7}', '^{5000}', '^{2}', '^', '_',
  '\\begin{pmatrix}1&1\\\\1&0\\end{pmatrix}', '\\begin{pmatrix}', '\\end{pmatrix}', '&', '\\\\', '\\sqrt', '\\sqrt[3]', '!', '\\binom{5000}{2500}',
  '{', '}', '(', ')', '[', ']', '\\{', '\\}', ',', ';', ':', '+', '-', '*', '/', '=', '<', '\\le', '\\pm', '\\infty', '\\pi', '\\cup',
  'x', 'y', 'k', 'i', 'e', '1', '2', '9', '0.5', '1,234', ',234', '10^{10}', '\\text{cm}', '\\%', '$', '\\boxed{', ' ', '\u202e', '\u2066', '\u001b[31m',
];
const latexArb = fc.array(fc.constantFrom(...ATOMS), { minLength: 1, maxLength: 24 }).map((xs) => xs.join(''));
const corpus = <T>(name: string): T[] => JSON.parse(readFileSync(join(CORPUS, name), 'utf8')) as T[];

test('fuzz: the LaTeX parser gives a reading or text for every input, within its budget', { timeout: 60_000 }, async () => {
  for (const s of corpus<string>('latex.json')) await bounded(`corpus ${show(s)}`, () => canonicalOf(s));
  await fc.assert(
    fc.asyncProperty(latexArb, async (s) => {
      const c = await bounded(show(s), () => canonicalOf(s));
      assert.equal(typeof c.normalised, 'string');
      assert.ok(c.readings.length >= 1);
    }),
    { seed: SEED, numRuns: 300 },
  );
});

test('fuzz: answer comparison is reflexive, symmetric and bounded', { timeout: 60_000 }, async () => {
  for (const [a, b] of corpus<[string, string]>('pairs.json')) {
    await bounded(`corpus ${show(a)} ~ ${show(b)}`, () => explainEquality(a, b));
  }
  await fc.assert(
    fc.asyncProperty(latexArb, latexArb, async (a, b) => {
      clearAnswerCaches();
      const ab = await bounded(`${show(a)} ~ ${show(b)}`, () => answersEqual(a, b));
      const ba = answersEqual(b, a);
      assert.equal(ab, ba, `${show(a)} ~ ${show(b)}`);
      assert.equal(answersEqual(a, a), true);
    }),
    { seed: SEED, numRuns: 150 },
  );
});

// ---------------------------------------------------------------- parquet

const parquetSeeds = readdirSync(join(CORPUS, 'parquet')).map((f) => ({ f, bytes: readFileSync(join(CORPUS, 'parquet', f)) }));

/** A seed file with a few bytes overwritten, inserted or removed (declared sizes, varints, offsets). */
const parquetArb = fc
  .record({
    seed: fc.nat({ max: parquetSeeds.length - 1 }),
    edits: fc.array(fc.record({ kind: fc.constantFrom('set', 'insert', 'delete', 'varint'), at: fc.nat(), byte: fc.nat({ max: 255 }) }), { minLength: 1, maxLength: 6 }),
  })
  .map(({ seed, edits }) => {
    const b = [...parquetSeeds[seed]!.bytes];
    for (const e of edits) {
      const at = e.at % Math.max(1, b.length);
      if (e.kind === 'set') b[at] = e.byte;
      else if (e.kind === 'insert') b.splice(at, 0, e.byte);
      else if (e.kind === 'delete') b.splice(at, 1);
      else b.splice(at, 1, 0xff, 0xff, 0xff, 0x7f); // a large declared number where a varint was
    }
    return Uint8Array.from(b);
  });

test('fuzz: mutated parquet files are checked and decoded off-thread into rows or a clear error', { timeout: 60_000 }, async () => {
  const dir = scratchDir('cl-fuzz-pq-');
  let n = 0;
  const one = async (bytes: Uint8Array, what: string): Promise<void> => {
    const file = join(dir, `f${n++}.parquet`);
    writeFileSync(file, bytes);
    await bounded(what, async () => {
      try {
        checkParquet(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
      } catch (e) {
        assert.ok(e instanceof Error, what);
      }
      try {
        const t = await readParquetColumns(file);
        assert.ok(t.rows >= 0 && t.rows <= 1 << 20);
      } catch (e) {
        assert.ok(e instanceof Error && e.message.length > 0, what);
      }
    });
  };
  // the parse thread starts (and compiles under tsx) before the clock does
  await readParquetColumns(join(CORPUS, 'parquet', 'good.parquet'));
  for (const { f, bytes } of parquetSeeds) await one(bytes, `corpus ${f}`);
  await fc.assert(fc.asyncProperty(parquetArb, (b) => one(b, `mutant of ${b.length} bytes`)), { seed: SEED, numRuns: 120 });
});

// ---------------------------------------------------------------- W&B tables

const cellArb = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.constant(null), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }));
const columnArb = fc.oneof(
  fc.constantFrom('step', 'prompt', 'completion', 'advantage', 'mode', 'correctness_reward', 'format_reward', 'images'),
  fc.nat({ max: 6 }).chain((k) => fc.constantFrom(`input_${k}`, `output_${k}`, `score_${k}`)),
  fc.string({ maxLength: 8 }),
);
const tableArb = fc.oneof(
  fc.record({ columns: fc.array(columnArb, { maxLength: 12 }), data: fc.array(fc.array(cellArb, { maxLength: 14 }), { maxLength: 12 }) }).map((t) => JSON.stringify(t)),
  fc.string({ maxLength: 60 }),
  fc.json(),
);

test('fuzz: W&B tables are read into groups or refused with a clear error', { timeout: 60_000 }, async () => {
  const dir = scratchDir('cl-fuzz-wb-');
  let n = 0;
  const one = async (text: string, what: string): Promise<void> => {
    const file = join(dir, `t_${n++}_abc.table.json`);
    writeFileSync(file, text);
    await bounded(what, async () => {
      try {
        const r = await readWandbTable(file, undefined);
        for (const rec of r.records) if (rec.kind === 'group') assert.ok(rec.rollouts.length >= 1);
      } catch (e) {
        assert.ok(e instanceof Error && e.message.length > 0, what);
      }
    });
  };
  for (const f of readdirSync(join(CORPUS, 'wandb'))) await one(readFileSync(join(CORPUS, 'wandb', f), 'utf8'), `corpus ${f}`);
  await fc.assert(fc.asyncProperty(tableArb, (t) => one(t, show(t))), { seed: SEED, numRuns: 200 });
});

// ---------------------------------------------------------------- JSONL

const recordArb = fc.oneof(
  fc.record({
    kind: fc.constantFrom('group', 'rollout', 'x'),
    step: fc.oneof(fc.nat(), fc.string({ maxLength: 3 }), fc.constant(null)),
    question_id: fc.oneof(fc.string({ maxLength: 6 }), fc.nat()),
    rollouts: fc.array(fc.record({ response: fc.oneof(latexArb.map((s) => `so \\boxed{${s}}`), fc.string()), mean_logprob: fc.oneof(fc.double(), fc.constant(null)) }), { maxLength: 6 }),
  }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
  fc.record({ input: fc.string(), output: fc.string(), score: fc.double(), step: fc.nat(), gts: fc.string() }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
  fc.string({ maxLength: 80 }),
  fc.constantFrom('', '{', '[]', 'null', '\u0000\u0000', '{"a": \u001b]0;t\u0007}'),
);

test('fuzz: JSONL runs are read into groups and notices, never an exception', { timeout: 60_000 }, async () => {
  const root = scratchDir('cl-fuzz-jl-');
  let n = 0;
  const one = async (text: string, what: string): Promise<void> => {
    const dir = join(root, `r${n++}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'run.jsonl'), text);
    await bounded(what, async () => {
      const notices: string[] = [];
      for await (const g of readRun(dir, (x) => notices.push(x.message))) assert.ok(g.rollouts.length >= 1);
    });
  };
  for (const f of readdirSync(join(CORPUS, 'jsonl'))) await one(readFileSync(join(CORPUS, 'jsonl', f), 'utf8'), `corpus ${f}`);
  await fc.assert(
    fc.asyncProperty(fc.array(recordArb, { minLength: 1, maxLength: 12 }), fc.boolean(), (lines, newline) => one(lines.join('\n') + (newline ? '\n' : ''), show(lines.join('\\n')))),
    { seed: SEED, numRuns: 120 },
  );
});
