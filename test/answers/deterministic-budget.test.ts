// The answer verdicts never depend on machine load, speed or thread (docs/answers.md, "Work and
// size bounds"): the budget counts units of work, not time. Under a 50 ms clock each of these
// could fail: a busy machine or a slow unit timed pairs out ("not decided"), and the stack of the
// thread decided whether a deep answer overflowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { budget, limits, setUnitHookForTests } from '../../src/engine/answers/budget';
import { compareCanonical } from '../../src/engine/answers/equivalence';
import { canonicalOf, clearAnswerCaches } from '../../src/engine/answers/classes';
import { verdicts, type Verdict } from './budget-verdicts';
import { GRADED_PAIRS, HEAVY_PAIR, OVER_BUDGET_PAIR, SOLUTION_SET_PAIRS, suitePairs } from './suite-pairs';

const BOOT = join(import.meta.dirname, 'ts-worker.mjs');
const WORKER = pathToFileURL(join(import.meta.dirname, 'budget-worker.ts')).href;

/** The verdicts of `pairs` decided in a new worker thread (optionally with a given stack). */
function inWorker(pairs: [string, string][], stackSizeMb?: number): Promise<Verdict[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(BOOT, { workerData: { file: WORKER, pairs }, ...(stackSizeMb ? { resourceLimits: { stackSizeMb } } : {}) });
    w.once('message', (v: Verdict[]) => {
      resolve(v);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

/** Threads that keep every core busy until terminated (resolves once all of them run). */
async function saturate(n: number): Promise<Worker[]> {
  const spin = "require('node:worker_threads').parentPort.postMessage('on'); for (;;) {}";
  const ws = Array.from({ length: n }, () => new Worker(spin, { eval: true }));
  await Promise.all(ws.map((w) => new Promise((r) => w.once('message', r))));
  return ws;
}

const pairs = (): [string, string][] => [...suitePairs(), ...GRADED_PAIRS, OVER_BUDGET_PAIR];

test('the suites decide identically while every core is saturated by busy threads', { timeout: 60_000 }, async () => {
  // Each run in a new thread: cold code, as in a process's first comparisons, is the slowest.
  const idle = await inWorker(pairs());
  assert.deepEqual(idle.slice(-1 - GRADED_PAIRS.length, -1).map((v) => v.equal), GRADED_PAIRS.map(() => true), 'the heavy pairs are decided');
  assert.equal(idle.at(-1)!.undecided, true);
  const busy = await saturate(availableParallelism() + 1);
  try {
    assert.deepEqual(await inWorker(pairs()), idle);
  } finally {
    await Promise.all(busy.map((w) => w.terminate()));
  }
});

test('every unit of work 20× slower: the same verdicts, reasons and units', { timeout: 60_000 }, () => {
  // A graded pair of ~120 K units: tens of ms, so several 50 ms deadlines' worth when 20× slower.
  const some = [...SOLUTION_SET_PAIRS, GRADED_PAIRS[0]!, ...suitePairs().slice(0, 10)];
  verdicts(some); // warm: mathjs loaded and the code compiled, so the time below is the units' own
  const t0 = performance.now();
  const base = verdicts(some);
  const ms = performance.now() - t0;
  const units = base.reduce((s, v) => s + (v.units ?? 0), 0);
  // 19 more of the time a unit takes, spent in the hook: a run ~20× as long. At most 2 µs a unit
  // (20× a unit's cost on a quiet machine, BENCHMARKS.md), so a loaded machine does not stretch
  // the test: the graded pair alone then takes ~250 ms, five 50 ms deadlines.
  const extraMs = Math.min((19 * ms) / units, 0.002);
  setUnitHookForTests((n) => {
    const until = performance.now() + n * extraMs;
    while (performance.now() < until);
  });
  try {
    const t1 = performance.now();
    const slow = verdicts(some);
    const slowMs = performance.now() - t1;
    assert.ok(slowMs >= extraMs * units, `the hook slowed the run (${ms.toFixed(0)} ms → ${slowMs.toFixed(0)} ms)`);
    assert.deepEqual(slow, base);
    assert.equal(slow.at(SOLUTION_SET_PAIRS.length)!.equal, true, 'the graded pair is decided');
  } finally {
    setUnitHookForTests(null);
  }
  assert.equal(budget.onUnit, null);
});

test('the same pairs in the main thread and in worker threads: the same verdicts, deep answers included', { timeout: 60_000 }, async () => {
  const deep: [string, string][] = [
    // 1,990 nested factorials: over the depth cap, so text, in every thread (under no cap this
    // overflowed the main thread's stack and was decided in a worker's larger one).
    ['1' + '!'.repeat(1990), '1'],
    // Within the cap: decided, in every thread with the stack docs/answers.md names.
    ['-'.repeat(1090) + 'x', 'x'],
    ['1' + '!'.repeat(360), '1'],
    ['x^{' + '-'.repeat(1090) + '2}', 'x^{2}'],
    HEAVY_PAIR,
  ];
  const main = verdicts(deep);
  assert.match(main[0]!.rewrites, /over the parse budget \(nested more than 1100 deep\)/);
  assert.deepEqual(main.slice(1).map((v) => v.equal), [true, true, true, true]);
  assert.deepEqual(await inWorker(deep), main);
  assert.deepEqual(await inWorker(deep, 0.5), main); // half the main thread's stack
});

test('a hostile pair is "not decided" after the same units every time, in any thread, cold or warm', { timeout: 60_000 }, async () => {
  const [a, b] = OVER_BUDGET_PAIR;
  const runs: number[] = [];
  for (let k = 0; k < 2; k++) {
    clearAnswerCaches();
    const r = compareCanonical(canonicalOf(a), canonicalOf(b));
    assert.equal(r.equal, false);
    assert.equal(r.undecided, true);
    assert.equal(r.reason, `not decided (over the work budget (${limits.compareUnits} units)): treated as not equal`);
    runs.push(r.units!);
  }
  // Warm: the answers' cached values are charged again when read, so the count is the same.
  runs.push(compareCanonical(canonicalOf(a), canonicalOf(b)).units!);
  const [w] = await inWorker([OVER_BUDGET_PAIR]);
  runs.push(w!.units!);
  assert.equal(w!.undecided, true);
  assert.ok(runs[0]! > limits.compareUnits);
  assert.deepEqual(runs, runs.map(() => runs[0]));
  // The count is the pair's own: with room for all of it, the whole comparison costs the same
  // units cold and warm (~2.1 M), and is then decided.
  const saved = limits.compareUnits;
  try {
    limits.compareUnits = 4 * saved;
    const full: number[] = [];
    for (const cold of [true, false]) {
      if (cold) clearAnswerCaches();
      const r = compareCanonical(canonicalOf(a), canonicalOf(b));
      assert.equal(r.undecided, undefined, r.reason);
      full.push(r.units!);
    }
    assert.ok(full[0]! > saved, `${full[0]} units`);
    assert.equal(full[1], full[0]);
  } finally {
    limits.compareUnits = saved;
  }
});
