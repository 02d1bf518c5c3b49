// A group's version never goes back, and every cache is keyed by it, in every thread:
//  - a followed file rewritten under the store gives the dashboard and a run-wide re-score the new
//    file's numbers (not the features the worker threads prepared from the old file);
//  - a same-length rewrite gives a worker thread the new roll-out texts (not its cached lines);
//  - an index change costs the host no roll-out objects (`rolloutsOf` is the one costly read, and
//    the store's rebuild never calls it; its time on a 256,000-roll-out run is in BENCHMARKS.md).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rolloutsOf, rolloutsMaterialised } from '../../src/logs/log-layer';
import { RunStore } from '../../src/extension/model/run-store';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { defaultParams } from '../../src/extension/slider-params';

const dirs: string[] = [];
const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanup) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const script = join(import.meta.dirname, 'whatif-worker.mjs');

/** One step of questions; `answers[q]` lists question q's boxed answers (one roll-out each). */
function lines(answers: string[][], filler = 'a'): string {
  return (
    answers
      .map((as, q) =>
        JSON.stringify({
          kind: 'group',
          step: 1,
          question_id: `q${q}`,
          ground_truth: '3',
          rollouts: as.map((a, i) => ({ response: `reasoning ${filler.repeat(20)} so the answer is \\boxed{${a}}.`, mean_logprob: -0.1 - 0.01 * i, reward: a === '3' ? 1 : 0 })),
        }),
      )
      .join('\n') + '\n'
  );
}

function newStore(engine: WhatIfEngine): RunStore {
  const store = new RunStore({
    configuredOperator: () => 'core',
    params: defaultParams,
    pollMs: 60_000,
    idleMs: 200,
    prepare: (runId, item, opts) => engine.prepare(runId, item, opts),
  });
  cleanup.push(() => store.dispose());
  return store;
}

/** A file's content changed under a followed run: the next scan must see it (a later mtime, as a writer gives). */
async function rewrite(path: string, content: string, store: RunStore, runId: string): Promise<void> {
  const before = statSync(path).mtimeMs;
  writeFileSync(path, content);
  const t = new Date(before + 5000);
  utimesSync(path, t, t);
  const run = store.runs.get(runId)!;
  await run.index!.refresh();
  await store.idle();
}

const strip = <T extends { ms?: number; at?: number }>(r: T) => ({ ...r, ms: 0, at: 0 });

test('a rewritten followed file: the dashboard and a run-wide re-score compute on the new file (worker threads)', async () => {
  const engine = new WhatIfEngine({ workers: 2, script });
  cleanup.push(() => engine.dispose());
  const dir = mkdtempSync(join(tmpdir(), 'cl-stale-'));
  dirs.push(dir);
  const file = join(dir, 'step-1.jsonl');
  writeFileSync(file, lines([['3', '3', '3', '5'], ['4', '4', '3'], ['3', '3']]));
  const store = newStore(engine);
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  const params = defaultParams();
  const before = await engine.dashboard(storeSource(store, run), params, 'core');
  const rescoreBefore = await engine.rescore(storeSource(store, run), { operator: 'majority', params }, { operator: 'core', params: { ...params, kappa: 1 } });
  assert.equal(before.rows.length, 3);
  assert.equal(before.rows[0].correct?.majority, true);

  // The job is re-run into the same folder: other answers, other sizes (the file is replaced in place).
  await rewrite(file, lines([['5', '5', '5', '5', '3'], ['3', '3', '4'], ['5']], 'b'), store, run.id);
  const afterRows = await engine.dashboard(storeSource(store, run), params, 'core');
  const afterRescore = await engine.rescore(storeSource(store, run), { operator: 'majority', params }, { operator: 'core', params: { ...params, kappa: 1 } });

  // A fresh engine (nothing cached in any thread) is the reference.
  const fresh = new WhatIfEngine({ workers: 2, script });
  cleanup.push(() => fresh.dispose());
  const refRows = await fresh.dashboard(storeSource(store, run), params, 'core');
  const refRescore = await fresh.rescore(storeSource(store, run), { operator: 'majority', params }, { operator: 'core', params: { ...params, kappa: 1 } });
  assert.deepEqual(afterRows.rows.map((r) => r.n), [5, 3, 1]);
  assert.equal(afterRows.rows[0].correct?.majority, false);
  assert.deepEqual(strip(afterRows), strip(refRows));
  assert.deepEqual(afterRescore.diffs, refRescore.diffs);
  assert.equal(afterRescore.rollouts, 9);
  assert.notDeepEqual(afterRescore.diffs, rescoreBefore.diffs);
  // The store's own prepared groups (the explorer, the panel) follow too.
  const g = await store.get({ runId: run.id, step: 1, questionId: 'q0' });
  assert.equal(g?.prepared.n, 5);
  assert.equal(store.summary({ runId: run.id, step: 1, questionId: 'q0' })?.majorityLabel, '5');
});

test('a same-length rewrite: a worker thread reads the new roll-out texts, not its cached lines', async () => {
  const engine = new WhatIfEngine({ workers: 1, script });
  cleanup.push(() => engine.dispose());
  const dir = mkdtempSync(join(tmpdir(), 'cl-stale-'));
  dirs.push(dir);
  const file = join(dir, 'step-1.jsonl');
  const v1 = lines([['3', '3', '5'], ['4', '4']], 'a');
  const v2 = lines([['7', '7', '5'], ['4', '4']], 'z');
  assert.equal(v1.length, v2.length);
  writeFileSync(file, v1);
  const store = newStore(engine);
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  const key = { runId: run.id, step: 1, questionId: 'q0' };
  const g1 = await store.get(key);
  assert.ok(g1?.previews[0].includes('aaaa'));
  await rewrite(file, v2, store, run.id);
  assert.equal(statSync(file).size, v1.length);
  const g2 = await store.get(key);
  assert.ok(g2?.previews[0].includes('zzzz'), g2?.previews[0]);
  assert.deepEqual(g2?.prepared.answers, ['7', '7', '5']);
  // And straight through the worker, from the index entry (a fresh request, the thread's caches warm).
  const entry = store.entry(key)!;
  const direct = await engine.prepare(run.id, { key: 'fresh', version: entry.version, step: 1, questionId: 'q0', entry: () => entry }, { keep: true });
  assert.ok(direct.previews.every((p) => !p.includes('aaaa')));
  assert.deepEqual(direct.prepared.answers, ['7', '7', '5']);
});

test("an index change costs the host no roll-out objects: the store's rebuild counts with `n`", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-stale-'));
  dirs.push(dir);
  // group records (packed columns) and roll-out records (assembled)
  const rollouts = Array.from({ length: 6 }, (_, i) => JSON.stringify({ kind: 'rollout', step: 2, question_id: 'r', response: `\\boxed{${i % 2}}`, sample_idx: i }));
  writeFileSync(join(dir, 'run.jsonl'), lines([['1', '2'], ['3', '3', '3']]) + rollouts.join('\n') + '\n');
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  cleanup.push(() => store.dispose());
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  assert.equal(run.rollouts, 11);
  const e = store.entry({ runId: run.id, step: 1, questionId: 'q0' })!;
  // The costly read is a call, not a property: nothing enumerates or clones it by accident.
  assert.equal('rollouts' in e, false);
  const count = rolloutsMaterialised.count;
  assert.equal(rolloutsOf(e).length, 2);
  assert.equal(rolloutsMaterialised.count, count + 2);
  const before = rolloutsMaterialised.count;
  (store as unknown as { rebuild(r: typeof run): void }).rebuild(run);
  assert.equal(rolloutsMaterialised.count, before, 'rebuild materialised roll-outs');
  assert.equal(run.rollouts, 11);
});

test('a late roll-out reopens a followed group: its summary and features follow the new version', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-stale-'));
  dirs.push(dir);
  const file = join(dir, 'run.jsonl');
  const ro = (i: number, a: string) => JSON.stringify({ kind: 'rollout', step: 1, question_id: 'r', sample_idx: i, response: `so \\boxed{${a}}`, mean_logprob: -0.1 }) + '\n';
  writeFileSync(file, ro(0, '1') + ro(1, '1') + ro(2, '0'));
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, pollMs: 60_000, idleMs: 150 });
  cleanup.push(() => store.dispose());
  const run = store.add(dir, 'opened');
  const key = { runId: run.id, step: 1, questionId: 'r' };
  const until = async (cond: () => boolean, what: string) => {
    const t0 = Date.now();
    while (!cond()) {
      if (Date.now() - t0 > 10_000) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  };
  await until(() => !!store.summary(key), 'first summary');
  assert.equal(store.summary(key)?.majorityLabel, '1');
  const v1 = store.entry(key)!.version;
  writeFileSync(file, ro(0, '1') + ro(1, '1') + ro(2, '0') + ro(3, '0') + ro(4, '0') + ro(5, '0'));
  await run.index!.refresh();
  await until(() => store.entry(key)!.n === 6 && store.entry(key)!.complete && store.summary(key)?.majorityLabel === '0', 'the summary of the reopened group');
  assert.ok(store.entry(key)!.version > v1);
  assert.deepEqual((await store.get(key))?.prepared.answers, ['1', '1', '0', '0', '0', '0']);
});
