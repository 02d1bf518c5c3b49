// A followed run's groups are prepared on the what-if engine's worker threads, not on the
// extension host: the store hands every group to the engine and keeps what comes back (the same
// features prepareGroup computes in-process); a group above the size limit is logged and skipped.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareGroup, type Group } from '../../src/engine';
import { entryToGroup, readRolloutText, rolloutsOf, type GroupEntry } from '../../src/logs/log-layer';
import { RunStore } from '../../src/extension/model/run-store';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { defaultParams } from '../../src/extension/slider-params';
import { preview } from '../../src/engine';
import { WORKER_NICE } from '../../src/extension/workers/priority';

const dirs: string[] = [];
const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanup) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Degenerate roll-outs as collapsed RL models write them: an answer, then 60 KB of filler. */
const FILLERS = [' ', '!', '…', '$', '。', '.'];
function writeHostileRun(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cl-offhost-'));
  dirs.push(dir);
  const lines: string[] = [];
  for (let q = 0; q < 4; q++) {
    const rollouts = Array.from({ length: 6 }, (_, i) => ({ response: `so the answer is \\boxed{${(q + i) % 2 ? 4 : 5}}` + FILLERS[i].repeat(60_000 / FILLERS[i].length), mean_logprob: -0.1 * (i + 1) }));
    lines.push(JSON.stringify({ kind: 'group', step: 1, question_id: `q${q}`, rollouts }));
  }
  lines.push(JSON.stringify({ kind: 'group', step: 1, question_id: 'big', rollouts: Array.from({ length: 9 }, (_, i) => ({ response: `\\boxed{${i % 2}}` })) }));
  writeFileSync(join(dir, 'step-1.jsonl'), lines.join('\n') + '\n');
  return dir;
}

test('the store prepares every group through the engine (worker threads), with the same features as in-process', async () => {
  const engine = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs') });
  cleanup.push(() => engine.dispose());
  const seen: { entry: GroupEntry; questionId: string }[] = [];
  const logged: string[] = [];
  const store = new RunStore({
    configuredOperator: () => 'majority',
    params: defaultParams,
    follow: false,
    log: (m) => logged.push(m),
    prepare: (runId, item, opts) => {
      seen.push({ entry: item.entry!()!, questionId: item.questionId });
      return engine.prepare(runId, item, { ...opts, maxGroupSize: 8 });
    },
  });
  cleanup.push(() => store.dispose());
  const run = store.add(writeHostileRun(), 'opened');
  await store.summariesDone();
  // every group once, the one that cannot be prepared too: the scoring passes that follow (one runs
  // as the first read streams its groups in, one once the run is open) leave it until it changes
  assert.deepEqual(seen.map((g) => g.questionId).sort(), ['big', 'q0', 'q1', 'q2', 'q3']);
  assert.equal(run.summaries.size, 4);
  // what the background scoring prepared is not kept: the views' cache holds what they open
  assert.equal(run.prepared.size, 0);
  const scored = seen.filter((x) => x.questionId !== 'big');
  for (const { entry, questionId } of scored) {
    const texts = await Promise.all(rolloutsOf(entry).map((r) => readRolloutText(r.source)));
    const g: Group = { ...entryToGroup(entry, texts), questionId };
    const key = { runId: run.id, step: 1, questionId: g.questionId };
    const stored = await store.get(key);
    assert.ok(stored, g.questionId);
    assert.equal(store.cached(key), stored);
    const local = prepareGroup(g);
    assert.deepEqual(stored.prepared.answers, local.answers);
    assert.deepEqual([...stored.prepared.classOf], [...local.classOf]);
    assert.deepEqual(stored.prepared.cosines.map((c) => [...c]), local.cosines.map((c) => [...c]));
    assert.equal(stored.previews.length, 6);
    assert.deepEqual(stored.previews, texts.map((t) => preview(t)));
    assert.ok(stored.previews.every((p) => p.length <= 160));
  }
  assert.equal(logged.filter((m) => /question big: 9 roll-outs, more than the group size limit of 8/.test(m)).length, 1, logged.join('\n'));
  // another pass (a change elsewhere in the run) does not try it again; opening it does, quietly
  (store as unknown as { scheduleSummaries(): void }).scheduleSummaries();
  await store.summariesDone();
  assert.equal(seen.filter((g) => g.questionId === 'big').length, 1);
  assert.equal(seen.length, 9, 'each question opened was prepared once more, for the view');
  assert.equal(await store.get({ runId: run.id, step: 1, questionId: 'big' }), undefined);
  assert.equal(seen.filter((g) => g.questionId === 'big').length, 2);
  assert.equal(logged.filter((m) => /question big/.test(m)).length, 1);
});

test('what-if engine: a group that cannot be sent to a worker or prepared is reported, the others scored', async () => {
  const engine = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs'), chunk: 4 });
  cleanup.push(() => engine.dispose());
  let deep: Record<string, unknown> = { v: 1 };
  for (let i = 0; i < 20_000; i++) deep = { a: deep };
  const group = (q: string, n: number, extra?: unknown): Group => ({
    step: 1,
    questionId: q,
    rollouts: Array.from({ length: n }, (_, i) => ({ response: `so \\boxed{${i % 2}}`, meanLogprob: -0.1, ...(extra ? { extra } : {}) }) as Group['rollouts'][number]),
  });
  const groups = [group('a', 4), group('deep', 4, deep), group('b', 4), group('huge', 4097), group('c', 4)];
  const source = { id: 'mem', items: () => groups.map((g, i) => ({ key: g.questionId, version: 1, step: g.step, questionId: g.questionId, group: g, index: i })) };
  const setting = { operator: 'majority' as const, params: defaultParams() };
  const r = await engine.rescore(source, setting, { operator: 'core', params: defaultParams() });
  assert.equal(r.cancelled, false);
  assert.deepEqual(r.diffs.map((d) => d.questionId), ['a', 'b', 'c']);
  assert.deepEqual(r.failed.map((f) => f.questionId).sort(), ['deep', 'huge']);
  assert.match(r.failed.find((f) => f.questionId === 'huge')!.message, /4097 roll-outs, more than the group size limit of 4096/);
  const d = await engine.dashboard(source, defaultParams(), 'core');
  assert.equal(d.rows.length, 3);
  assert.equal(d.failed.length, 2);
});

test("a growing run does not make the host re-score another run's questions with outcome checks", async () => {
  const a = mkdtempSync(join(tmpdir(), 'cl-offhost-a-'));
  const b = mkdtempSync(join(tmpdir(), 'cl-offhost-b-'));
  dirs.push(a, b);
  const g = (q: string, checks: boolean) => JSON.stringify({ kind: 'group', step: 1, question_id: q, rollouts: [1, 1, 2].map((x) => ({ response: `\\boxed{${x}}` })), ...(checks ? { outcome_checks: [{ answer: '1', passed: 3, trials: 4 }] } : {}) });
  writeFileSync(join(a, 'step-1.jsonl'), [g('m1', true), g('m2', true)].join('\n') + '\n');
  writeFileSync(join(b, 'step-1.jsonl'), g('x', false) + '\n');
  const store = new RunStore({ configuredOperator: () => 'msttrl', params: defaultParams, pollMs: 100, idleMs: 200 });
  cleanup.push(() => store.dispose());
  const ra = store.add(a, 'opened');
  const rb = store.add(b, 'opened');
  await store.summariesDone();
  assert.equal(ra.summaries.size, 2);
  const before = [...ra.summaries.values()];
  writeFileSync(join(b, 'step-2.jsonl'), g('y', false).replace('"step":1', '"step":2') + '\n');
  for (let i = 0; i < 100 && rb.summaries.size < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    await store.summariesDone();
  }
  assert.equal(rb.summaries.size, 2);
  // The same summary objects: run a's MS-TTRL questions were not scored again.
  assert.deepEqual([...ra.summaries.values()].map((s, i) => s === before[i]), [true, true]);
  // A change in run a itself: a new question leaves the others as they were (MS-TTRL's cache is
  // per question), and the question's next step is scored with the cache its first step left.
  const step2 = (q: string, checks: boolean) => g(q, checks).replace('"step":1', '"step":2');
  writeFileSync(join(a, 'step-2.jsonl'), [step2('m3', true), step2('m1', false)].join('\n') + '\n');
  for (let i = 0; i < 100 && ra.summaries.size < 4; i++) {
    await new Promise((r) => setTimeout(r, 50));
    await store.summariesDone();
  }
  assert.equal(ra.summaries.size, 4);
  assert.deepEqual([...ra.summaries.values()].slice(0, 2).map((s, i) => s === before[i]), [true, true], 'm1 and m2 at step 1 not scored again');
  const m1Later = () => store.summary({ runId: ra.id, step: 2, questionId: 'm1' })!;
  // m1 at step 2 logs no checks: MS-TTRL ran on the cache (its "1" Correct at 3/4, its "2" unchecked)
  assert.ok(m1Later().health?.operators?.msttrl, 'MS-TTRL ran on the cache of step 1');
  const kept = m1Later();
  // m1's step 1 rewritten (its checks now judge "1" Wrong): m1 at step 2 is scored again
  writeFileSync(join(a, 'step-1.jsonl'), [g('m1', true).replace('"passed":3', '"passed":1'), g('m2', true)].join('\n') + '\n');
  for (let i = 0; i < 100 && (m1Later() === kept || !store.summary({ runId: ra.id, step: 1, questionId: 'm1' })); i++) {
    await new Promise((r) => setTimeout(r, 50));
    await store.summariesDone();
  }
  assert.notEqual(m1Later(), kept);
  assert.equal(kept.health!.operators!.msttrl!.label, '1', 'Correct before: the label');
  assert.equal(m1Later().health!.operators!.msttrl!.label, null, 'Wrong now: no label');
});

test('what-if engine: the configured group size limit reaches the workers', async () => {
  const engine = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs'), maxGroupSize: () => 4 });
  cleanup.push(() => engine.dispose());
  const group = (q: string, n: number): Group => ({ step: 1, questionId: q, rollouts: Array.from({ length: n }, (_, i) => ({ response: `\\boxed{${i % 2}}` })) });
  const groups = [group('four', 4), group('five', 5)];
  const source = { id: 'lim', items: () => groups.map((g) => ({ key: g.questionId, version: 1, step: 1, questionId: g.questionId, group: g })) };
  const r = await engine.rescore(source, { operator: 'majority', params: defaultParams() }, { operator: 'majority', params: defaultParams() });
  assert.deepEqual(r.diffs.map((d) => d.questionId), ['four']);
  assert.match(r.failed[0].message, /question five: 5 roll-outs, more than the group size limit of 4/);
});

/** The nice value of thread `tid` of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
const niceOf = (tid: number): number => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
const threads = (): number[] => readdirSync('/proc/self/task').map(Number);

test('the what-if worker threads run at a lower priority than the host\'s thread (Linux: a nice value per thread)', { skip: process.platform !== 'linux' }, async () => {
  await stat(tmpdir()); // the I/O thread pool exists before any worker lowers its priority
  const main = niceOf(process.pid);
  const before = new Set(threads());
  const engine = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs'), chunk: 1 });
  cleanup.push(() => engine.dispose());
  const group = (q: string): Group => ({ step: 1, questionId: q, rollouts: Array.from({ length: 3 }, (_, i) => ({ response: `\\boxed{${i % 2}}` })) });
  const groups = ['a', 'b', 'c', 'd', 'e', 'f'].map(group);
  const source = { id: 'nice', items: () => groups.map((g) => ({ key: g.questionId, version: 1, step: 1, questionId: g.questionId, group: g })) };
  const r = await engine.rescore(source, { operator: 'majority', params: defaultParams() }, { operator: 'core', params: defaultParams() });
  assert.equal(r.diffs.length, 6);
  assert.equal(engine.workerCount, 2);
  const fresh = threads().filter((t) => !before.has(t));
  assert.ok(fresh.filter((t) => niceOf(t) === WORKER_NICE).length >= 2, `nice values of the new threads: ${fresh.map(niceOf)}`);
  assert.equal(niceOf(process.pid), main, "the host's thread keeps its priority");
  assert.ok(niceOf(process.pid) < WORKER_NICE);
});

test('lowerThreadPriority: the calling thread only, never raised back', { skip: process.platform !== 'linux' }, async () => {
  const run = (pre: number) =>
    new Promise<{ tid: number; got: number; nice: number }>((resolve, reject) => {
      const w = new Worker(join(import.meta.dirname, 'priority-worker.mjs'), { workerData: { pre } });
      w.once('message', (m) => {
        void w.terminate();
        resolve(m);
      });
      w.once('error', reject);
    });
  const main = niceOf(process.pid);
  const a = await run(0);
  assert.notEqual(a.tid, process.pid);
  assert.deepEqual([a.got, a.nice], [WORKER_NICE, WORKER_NICE]);
  const b = await run(15);
  assert.deepEqual([b.got, b.nice], [15, 15]);
  assert.equal(niceOf(process.pid), main);
});

test("a what-if worker that dies fails only its own requests; the other worker's are answered", async () => {
  const engine = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs') });
  cleanup.push(() => engine.dispose());
  // Private access: two requests in flight, one on each worker, and the first worker's death
  // signalled before either reply can arrive (replies come back as later message events).
  const e = engine as unknown as { slots: unknown[]; pool: { thread(i: number): Worker | undefined }; send(slot: unknown, req: unknown): Promise<unknown> };
  const group: Group = { step: 1, questionId: 'q', rollouts: Array.from({ length: 4 }, (_, i) => ({ response: `\\boxed{${i % 2}}` })) };
  const req = { kind: 'prepare', item: { key: 'q', version: 1, step: 1, questionId: 'q', group }, keep: false };
  const first = e.send(e.slots[0], req);
  const second = e.send(e.slots[1], req);
  const dead = e.pool.thread(0)!;
  dead.emit('exit', 1);
  await assert.rejects(first, /worker thread 1 exited \(code 1\) before answering/);
  assert.notEqual(e.pool.thread(0), dead, 'a new thread in its place');
  await assert.doesNotReject(second);
  await dead.terminate();
});
