// The store over a persisted index (StoreOptions.persistDir, the extension's global storage): a run
// reopened in a new store (a new window) reads its saved index and summaries, not its logs, and
// shows exactly what a fresh read shows; a file rewritten under the saved index gives fresh values
// in the explorer's summaries, a prepared group and the dashboard; a corrupt saved index is rebuilt.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { RunStore } from '../../src/extension/model/run-store';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { defaultParams } from '../../src/extension/slider-params';
import { buildView, lightSummary as lightSummaryOf, outcomeContext, type QuestionSummary } from '../../src/extension/model/scoring';
import { analyseRun, labelFreeCopies, type OperatorId } from '../../src/engine';
import { randomHistory } from '../logs/random-history';

const dirs: string[] = [];
const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanup) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

function step(s: number, answers: string[][]): string {
  return answers
    .map((as, q) =>
      JSON.stringify({
        kind: 'group',
        step: s,
        question_id: `q${q}`,
        ground_truth: '3',
        rollouts: as.map((a, i) => ({ response: `reasoning so the answer is \\boxed{${a}}.`, mean_logprob: -0.1 - 0.01 * i, reward: a === '3' ? 1 : 0 })),
      }),
    )
    .join('\n')
    .concat('\n');
}

/** `checkpointGroups` set: the store also reads 64 bytes at a time and streams each, so that its checkpoints fall part way through files. */
function newStore(persist: string | undefined, engine?: WhatIfEngine, idleMs = 100, operator: OperatorId = 'core', checkpointGroups?: number): RunStore {
  const store = new RunStore({
    readBlock: checkpointGroups === undefined ? undefined : 64,
    streamMs: checkpointGroups === undefined ? undefined : 0,
    configuredOperator: () => operator,
    params: defaultParams,
    pollMs: 60_000,
    idleMs,
    saveDelayMs: 10,
    checkpointGroups,
    persistDir: () => persist,
    prepare: engine ? (runId, item, opts) => engine.prepare(runId, item, opts) : undefined,
  });
  cleanup.push(() => store.dispose());
  return store;
}

/** What the explorer shows: steps, questions, and each question's summary. */
function explorer(store: RunStore, runId: string) {
  const run = store.runs.get(runId)!;
  // each summary without its health record: a restored summary is light (the record stays on disk)
  const light = (x: QuestionSummary | undefined) => {
    if (!x) return x;
    const { health: _h, healthSaved: _s, ...rest } = x;
    return rest;
  };
  return [...run.steps].map(([s, keys]) => [s, Array.from(keys, (k) => [store.keyOf(run, k)!.questionId, light(run.summaries.get(k))])]);
}

async function opened(store: RunStore, dir: string) {
  const run = store.add(dir, 'opened');
  await store.savesDone();
  return run;
}

test('a run reopened in a new store reads its saved index and summaries; a rewrite gives fresh values; corruption is rebuilt', async () => {
  const engine = new WhatIfEngine({ workers: 1, script: join(import.meta.dirname, 'whatif-worker.mjs') });
  cleanup.push(() => engine.dispose());
  const dir = temp('cl-persist-run-');
  const storage = temp('cl-persist-storage-');
  const a = join(dir, 'step-1.jsonl');
  writeFileSync(a, step(1, [['3', '3', '3', '5'], ['4', '4', '3'], ['3', '3']]));
  writeFileSync(join(dir, 'step-2.jsonl'), step(2, [['1', '2', '2'], ['3']]));

  const first = newStore(storage, engine);
  const r1 = await opened(first, dir);
  assert.equal(r1.index!.persisted.state, 'none');
  assert.ok(r1.index!.bytesReadAtOpen > 0);
  const shown = explorer(first, r1.id);
  assert.equal(shown.flatMap(([, qs]) => qs as unknown[]).length, 5);
  assert.ok((shown[0][1] as [string, unknown][]).every(([, s]) => s !== undefined), 'every question scored');
  assert.equal(readdirSync(storage).filter((f) => f.endsWith('.cli')).length, 1, 'one saved index');
  const records1 = await first.healthRecords(r1);
  assert.equal(records1.length, 5);
  first.dispose();

  // a new window: nothing read from the logs, nothing prepared, the same explorer content
  let prepared = 0;
  const second = new RunStore({
    configuredOperator: () => 'core',
    params: defaultParams,
    pollMs: 60_000,
    idleMs: 100,
    saveDelayMs: 10,
    persistDir: () => storage,
    prepare: (runId, item, opts) => {
      prepared++;
      return engine.prepare(runId, item, opts);
    },
  });
  cleanup.push(() => second.dispose());
  const r2 = await opened(second, dir);
  assert.equal(r2.index!.persisted.state, 'restored');
  assert.equal(r2.index!.bytesReadAtOpen, 0, 'no log byte read');
  assert.equal(prepared, 0, 'no group prepared: the summaries came with the index');
  assert.deepEqual(explorer(second, r2.id), shown);
  assert.equal(r2.savedVersion, r2.version, 'nothing new to save');
  // light summaries: the health records are read back from the saved index, as they were; the run's analysis came with it
  assert.ok([...r2.summaries.values()].every((x) => x.healthSaved && !x.health));
  assert.deepEqual(await second.healthRecords(r2), records1);
  assert.deepEqual(r2.savedHealth, { size: 5, health: analyseRun(labelFreeCopies(records1)) });
  // the same as a store without a saved index
  const plain = newStore(undefined, engine);
  const rp = await opened(plain, dir);
  assert.deepEqual(explorer(plain, rp.id), shown);
  plain.dispose();
  second.dispose();

  // another setting: the index is used, the summaries are scored again
  const other = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, pollMs: 60_000, idleMs: 100, saveDelayMs: 10, persistDir: () => storage });
  cleanup.push(() => other.dispose());
  const ro = await opened(other, dir);
  assert.equal(ro.index!.bytesReadAtOpen, 0);
  assert.equal([...ro.summaries.values()].length, 5, 'scored again for the other setting');
  other.dispose();

  // step 1 rewritten under the saved index (same length, times put back): fresh values everywhere
  const t = readFileSync(a, 'utf8');
  const u = t.replace(/boxed\{3\}/g, 'boxed{7}');
  assert.equal(u.length, t.length);
  const st = statSync(a);
  writeFileSync(a, u);
  utimesSync(a, st.atime, st.mtime);
  const third = newStore(storage, engine);
  const r3 = await opened(third, dir);
  assert.deepEqual(r3.index!.persisted, { state: 'restored', trusted: 1, reread: 1 });
  const fresh = newStore(undefined, engine);
  const rf = await opened(fresh, dir);
  assert.deepEqual(explorer(third, r3.id), explorer(fresh, rf.id));
  assert.notDeepEqual(explorer(third, r3.id), shown, 'the rewritten step scores differently');
  const q0 = (await third.get({ runId: r3.id, step: 1, questionId: 'q0' }))!;
  assert.deepEqual(q0.prepared.answers.slice(0, 3), ['7', '7', '7']);
  const d3 = await engine.dashboard(storeSource(third, r3), defaultParams(), 'core');
  const df = await engine.dashboard(storeSource(fresh, rf), defaultParams(), 'core');
  assert.deepEqual({ ...d3, ms: 0, at: 0 }, { ...df, ms: 0, at: 0 });
  third.dispose();
  fresh.dispose();

  // a corrupt saved index: rebuilt from the logs, the same content, saved again whole
  const saved = join(storage, readdirSync(storage).find((f) => f.endsWith('.cli'))!);
  const bytes = readFileSync(saved);
  bytes[bytes.length >> 1] ^= 0xff;
  writeFileSync(saved, bytes);
  const fourth = newStore(storage, engine);
  const r4 = await opened(fourth, dir);
  // a corrupt light record is found at open; a heavy one when a group of it is read back (a
  // question opened), which fails that read and reads the run again
  if (r4.index!.persisted.state === 'restored') {
    const first4 = fourth.keyOf(r4, [...r4.steps.values()][0].at(0)!)!;
    assert.throws(() => fourth.entry(first4), /corrupt|cut short/);
  }
  for (const t0 = Date.now(); r4.index?.persisted.state !== 'rebuilt' && Date.now() - t0 < 10_000; ) await new Promise((r) => setTimeout(r, 20));
  await fourth.savesDone();
  assert.equal(r4.index!.persisted.state, 'rebuilt');
  assert.ok(r4.index!.bytesReadAtOpen > 0);
  assert.deepEqual(explorer(fourth, r4.id), explorer(third, r3.id));
  fourth.dispose();
  const fifth = newStore(storage, engine);
  const r5 = await opened(fifth, dir);
  assert.equal(r5.index!.persisted.state, 'restored', 'the rebuilt index is whole again');
  assert.equal(r5.index!.bytesReadAtOpen, 0);
  fifth.dispose();
});

test('a summary scored while the run is being saved goes into the next save, never lost from the saved index', async () => {
  const dir = temp('cl-persist-race-');
  const storage = temp('cl-persist-storage-');
  writeFileSync(join(dir, 'step-1.jsonl'), step(1, [['3', '3', '5'], ['4', '4', '3'], ['3', '3']]));
  const make = () => {
    const s = new RunStore({ configuredOperator: () => 'core', params: defaultParams, pollMs: 60_000, idleMs: 100, saveDelayMs: 60_000, persistDir: () => storage, prepare: undefined });
    cleanup.push(() => s.dispose());
    return s;
  };
  const first = make();
  const run = first.add(dir, 'opened');
  await first.summariesDone();
  const k = run.steps.get(1)!.at(0)!;
  const scored = run.summaries.get(k)!;
  assert.ok(scored.health, 'scored in this process: a whole summary');
  // The scoring pass sets summaries as it goes and bumps the run's version in batches: k's summary
  // is set after the save has written k's group, and the save ends at the version it started at.
  run.summaries.delete(k);
  const index = run.index!;
  const save = index.save.bind(index);
  index.save = (extra) =>
    save(
      extra && {
        ...extra,
        of: (e) => {
          const x = extra.of!(e);
          if (e.key === k) run.summaries.set(k, scored);
          return x;
        },
      },
    );
  assert.ok((await first.save(run)) > 0);
  index.save = save;
  assert.equal(run.summaries.get(k), scored, 'not in the file: kept whole (a light summary would stand for a record the file lacks)');
  run.version++; // the pass's batch ends: the run is saved again
  assert.ok((await first.save(run)) > 0);
  first.dispose();
  const second = make();
  const r2 = second.add(dir, 'opened');
  await second.idle();
  assert.equal(r2.index!.persisted.state, 'restored');
  assert.equal(r2.summaries.size, 3, 'every summary came back from the saved index');
  assert.deepEqual(r2.summaries.get(k), lightSummaryOf(scored));
  assert.equal(r2.savedVersion, r2.version, 'restored as saved: nothing to score or save again');
});

test('a run with outcome checks (MS-TTRL) restored as saved is not scored again, nor saved again', async () => {
  const storage = temp('cl-persist-storage-');
  const demo = join(import.meta.dirname, '../../examples/demo-run');
  let prepared = 0;
  const make = () => {
    const s = new RunStore({
      configuredOperator: () => undefined,
      params: defaultParams,
      pollMs: 60_000,
      idleMs: 100,
      saveDelayMs: 10,
      persistDir: () => storage,
      prepare: undefined,
    });
    cleanup.push(() => s.dispose());
    return s;
  };
  const first = make();
  const r1 = await opened(first, demo);
  // the last step's groups complete when their file has been idle: saved complete, they are not
  // completed (and re-scored) again after the second open
  for (const t0 = Date.now(); !r1.index!.groups().every((e) => e.complete) && Date.now() - t0 < 10_000; ) await new Promise((r) => setTimeout(r, 20));
  await first.savesDone();
  assert.ok(r1.index!.groups().every((e) => e.complete), 'every group complete before the second open');
  assert.ok(r1.index!.groups().some((e) => e.outcomeChecks?.length), 'the demo run has outcome checks');
  const shown = explorer(first, r1.id);
  first.dispose();
  const second = make();
  const run = second.add(demo, 'opened');
  const prepare = (second as unknown as { prepare: (...a: unknown[]) => unknown }).prepare.bind(second);
  (second as unknown as { prepare: (...a: unknown[]) => unknown }).prepare = (...a: unknown[]) => {
    prepared++;
    return prepare(...a);
  };
  await second.summariesDone();
  assert.equal(run.index!.persisted.state, 'restored');
  // what the open found, should it score again: which files were read again, how many summaries came back
  const found = JSON.stringify({ persisted: run.index!.persisted, bytesRead: run.index!.bytesReadAtOpen, groups: run.index!.size, notices: run.notices.map((n) => n.message) });
  assert.equal(prepared, 0, `nothing scored again (${found})`);
  assert.equal(run.savedVersion, run.version, 'nothing to save');
  assert.deepEqual(explorer(second, run.id), shown);
  second.dispose();
});

test('random histories of a run under a window that follows it and windows opened from its saved index: the explorer of a fresh read, every time', { timeout: 180_000 }, async () => {
  // with MS-TTRL's outcome checks on questions asked again (configured, or only logged)
  const runs: [number, boolean, OperatorId][] = process.env.CL_PERSIST_SEEDS ? process.env.CL_PERSIST_SEEDS.split(',').flatMap((x) => [[Number(x), false, 'core'], [Number(x), true, 'msttrl']] as [number, boolean, OperatorId][]) : [[5, false, 'core'], [6, true, 'msttrl'], [14, true, 'msttrl'], [7, true, 'core']];
  for (const [seed, outcomeChecks, operator] of runs) {
    const dir = temp('cl-persist-random-run-');
    const storage = temp('cl-persist-random-storage-');
    const h = randomHistory(dir, seed, 8, outcomeChecks);
    h.append('f0.jsonl', 4);
    // a low checkpoint threshold (odd seeds' following window, every reopened one): saves part way
    // through reads and scoring passes, each reopened from by the next window
    const live = newStore(storage, undefined, 20, operator, seed % 2 ? 2 : undefined);
    const run = await opened(live, dir);
    for (let round = 0; round < 12; round++) {
      const what = `seed ${seed}${outcomeChecks ? ` (outcome checks, ${operator})` : ''}, round ${round}: ${h.next()}`;
      await run.index!.refresh();
      // a window that reads the run afresh; roll-out groups complete by idleness (in each window):
      // wait until the windows agree, or time out and show the difference
      const plain = newStore(undefined, undefined, 20, operator);
      const fresh = await opened(plain, dir);
      const other = newStore(storage, undefined, 20, operator, 2);
      const r2 = await opened(other, dir);
      assert.equal(r2.index!.persisted.state, 'restored', what);
      const settled = async () => {
        await Promise.all([live.savesDone(), plain.savesDone(), other.savesDone()]);
        return [explorer(plain, fresh.id), explorer(live, run.id), explorer(other, r2.id)];
      };
      // A file that ends mid-line is being written: its roll-out groups do not complete by
      // idleness, in a window that reads it now; one that saw them complete before keeps them so.
      // Then the questions must be the same, and the summaries shown by both.
      const mid = h.halfWritten > 0;
      const same = (a: ReturnType<typeof explorer>, b: ReturnType<typeof explorer>): boolean => {
        if (!mid) return isDeepStrictEqual(a, b);
        const keys = (x: ReturnType<typeof explorer>) => x.map(([st, qs]) => [st, (qs as [string, unknown][]).map(([q]) => q)]);
        if (!isDeepStrictEqual(keys(a), keys(b))) return false;
        const sums = (x: ReturnType<typeof explorer>) => new Map(x.flatMap(([st, qs]) => (qs as [string, unknown][]).map(([q, v]) => [`${st}/${q}`, v] as const)));
        const sb = sums(b);
        for (const [k, v] of sums(a)) if (v !== undefined && sb.get(k) !== undefined && !isDeepStrictEqual(v, sb.get(k))) return false;
        return true;
      };
      const until = Date.now() + 8000;
      let [expected, shown, reopened] = await settled();
      while (Date.now() < until && !(same(shown, expected) && same(reopened, expected))) {
        await new Promise((r) => setTimeout(r, 100));
        [expected, shown, reopened] = await settled();
      }
      if (!same(shown, expected)) assert.deepEqual(shown, expected, `${what}: the window following the run`);
      if (!same(reopened, expected)) assert.deepEqual(reopened, expected, `${what}: a window opened from the saved index`);
      // a question asked again, scored alone (the panel: its earlier steps' checks replayed), says
      // what the background scoring said of it in run order
      if (outcomeChecks && !mid) {
        for (const [st, keys] of fresh.steps) {
          for (const k of keys) {
            const key = plain.keyOf(fresh, k)!;
            const s = fresh.summaries.get(k);
            if (!s || !key.questionId.startsWith('m')) continue;
            const v = buildView((await plain.get(key))!, defaultParams(), operator, outcomeContext(await plain.outcomeHistory(key), defaultParams()));
            const where = `${what}: ${key.questionId} at step ${st}, alone and in the run`;
            assert.equal(v.mismatches, s.mismatches, where);
            // the rewards the logged ones were checked against (MS-TTRL's when it is configured)
            const expected = s.health?.rewards?.expected;
            if (operator === 'msttrl' && expected) assert.deepEqual(v.rollouts.map((r) => r.rewards.msttrl), expected, where);
          }
        }
      }
      plain.dispose();
      other.dispose();
    }
  }
});

test('a first open saves as it goes (checkpoints): the groups held unsaved stay bounded whatever the run, and a window opened from the saved index shows a fresh read', { timeout: 120_000 }, async () => {
  const dir = temp('cl-checkpoint-run-');
  const storage = temp('cl-checkpoint-storage-');
  // 12 files of 5 steps × 16 questions: 960 groups
  const answers = (s: number, q: number) => Array.from({ length: 8 }, (_, i) => String((s + q + i) % 3 === 0 ? 3 : (s * q + i) % 5));
  for (let f = 0; f < 12; f++) {
    let text = '';
    for (let s = 5 * f + 1; s <= 5 * f + 5; s++) text += step(s, Array.from({ length: 16 }, (_, q) => answers(s, q)));
    writeFileSync(join(dir, `part-${String(f).padStart(2, '0')}.jsonl`), text);
  }
  const make = (checkpointGroups?: number) => {
    const s = new RunStore({ configuredOperator: () => 'core', params: defaultParams, pollMs: 60_000, idleMs: 100, saveDelayMs: 10, streamMs: 0, checkpointGroups, persistDir: () => storage });
    cleanup.push(() => s.dispose());
    return s;
  };
  const first = make(40);
  let held = 0;
  let saves = 0;
  const run = first.add(dir, 'opened');
  const sample = () => {
    const i = run.index;
    if (i) held = Math.max(held, i.unsavedCount() + run.summaries.unsavedCount());
  };
  const timer = setInterval(sample, 2);
  first.onChange(sample);
  const index = () => run.index!;
  await new Promise<void>((r) => {
    const t = setInterval(() => {
      if (!run.index) return;
      clearInterval(t);
      const save = run.index.save.bind(run.index);
      run.index.save = (extra) => {
        saves++;
        return save(extra);
      };
      r();
    }, 0);
  });
  await first.savesDone();
  clearInterval(timer);
  assert.equal(index().size, 960);
  // The bound: the threshold, what one streamed change brings (a file: 80 groups), and what is
  // scored while a checkpoint is being written (on a loaded machine, more): ~100 seen, 1,920
  // (every group and every summary) without checkpoints.
  assert.ok(held < 320, `at most ${held} groups held unsaved`);
  assert.ok(saves >= 5, `${saves} saves`);
  const shown = explorer(first, run.id);
  first.dispose();

  const plain = newStore(undefined);
  const fresh = await opened(plain, dir);
  assert.deepEqual(shown, explorer(plain, fresh.id));
  const second = make();
  const r2 = second.add(dir, 'opened');
  await second.idle();
  assert.equal(r2.index!.persisted.state, 'restored');
  assert.equal(r2.index!.bytesReadAtOpen, 0);
  assert.equal(r2.savedVersion, r2.version, 'restored as saved: nothing to score or save again');
  assert.deepEqual(explorer(second, r2.id), explorer(plain, fresh.id));
});
