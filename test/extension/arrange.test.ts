// The store's step → question index: the first read streams into it (questions appear as their
// files are read), and each later index change updates it in the cost of what changed. Either way it
// is, after every change, the index a fresh arrangement of the index's groups gives.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore, type RunEntry } from '../../src/extension/model/run-store';
import { RunIndex, type RunChange } from '../../src/logs/log-layer';
import { defaultParams } from '../../src/extension/slider-params';

const dirs: string[] = [];
const cleanup: Array<() => void> = [];
after(() => {
  for (const c of cleanup) c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const group = (step: number, q: string, answers: string[]) => JSON.stringify({ kind: 'group', step, question_id: q, rollouts: answers.map((a, i) => ({ response: `so \\boxed{${a}} (${i})` })) });
const rollout = (step: number, q: string, i: number, a: string) => JSON.stringify({ kind: 'rollout', step, question_id: q, sample_idx: i, response: `thus \\boxed{${a}}` });
const lines = (ls: string[]) => `${ls.join('\n')}\n`;

/** What a fresh arrangement of the index's groups gives (the store's `arrange`, written again). */
function fresh(run: RunEntry) {
  const steps = new Map<number, string[]>();
  let rollouts = 0;
  for (const h of run.index!.groups()) {
    if (!steps.has(h.step)) steps.set(h.step, []);
    steps.get(h.step)!.push(h.key);
    rollouts += h.n;
  }
  const sorted = [...steps].sort((a, b) => a[0] - b[0]);
  return { steps: sorted, groups: run.index!.size, rollouts, latestStep: sorted.length ? sorted[sorted.length - 1][0] : null };
}

const arranged = (run: RunEntry) => ({ steps: [...run.steps].map(([s, keys]) => [s, [...keys]]), groups: run.groups, rollouts: run.rollouts, latestStep: run.latestStep });

test('each index change updates the step index to what a fresh arrangement gives, appends without a pass over the run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-arrange-'));
  dirs.push(dir);
  const a = join(dir, 'a.jsonl');
  const b = join(dir, 'b.jsonl');
  writeFileSync(a, lines([group(1, 'q0', ['1', '1', '2']), group(1, 'q1', ['3', '3', '3']), group(2, 'q0', ['4', '4', '5'])]));
  writeFileSync(b, lines([rollout(2, 'r', 0, '1'), rollout(2, 'r', 1, '1')]));
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, pollMs: 60_000, idleMs: 60_000, streamMs: 0 });
  cleanup.push(() => store.dispose());
  const run = store.add(dir, 'opened');
  await store.idle();
  const s = store as unknown as { rebuild(r: RunEntry): void };
  const rebuild = s.rebuild.bind(store);
  let passes = 0;
  s.rebuild = (r) => {
    passes++;
    rebuild(r);
  };
  const changes: RunChange[] = [];
  run.index!.onDidChange((ch) => changes.push(ch));
  const step = async (what: string, edit: () => void, pass: boolean) => {
    const before = passes;
    const seen = changes.length;
    edit();
    await run.index!.refresh();
    assert.ok(changes.length > seen, `${what}: no index change`);
    assert.deepEqual(arranged(run), fresh(run), what);
    assert.equal(passes > before, pass, `${what}: ${pass ? 'a pass over every group expected' : 'arranged by a pass over every group'}`);
  };
  assert.deepEqual(arranged(run), fresh(run), 'opened');
  // appended to the last file: a new step's groups, one to an earlier step, roll-outs to an open group, a new step of roll-out records
  await step('groups appended', () => appendFileSync(b, lines([group(3, 'q0', ['1', '2', '2']), group(3, 'q1', ['7', '7', '7']), group(1, 'q2', ['9', '9', '8'])])), false);
  await step('roll-outs appended', () => appendFileSync(b, lines([rollout(2, 'r', 2, '0'), rollout(4, 's', 0, '5'), rollout(4, 's', 1, '6')])), false);
  // appended to a file before another: a fresh read puts its new groups before the later file's
  await step('appended to the first file', () => appendFileSync(a, lines([group(4, 'q0', ['2', '2', '2']), group(2, 'q1', ['9', '9', '8'])])), true);
  // a new file that sorts before the others: the groups are put in a new order
  await step('a file sorting first', () => writeFileSync(join(dir, '0.jsonl'), lines([group(2, 'z', ['1', '1', '1']), group(5, 'z', ['2', '2', '2'])])), true);
  await step('then the last file appended to', () => appendFileSync(b, lines([group(6, 'z', ['3', '3', '1']), rollout(4, 's', 2, '5')])), false);
  // a file rewritten (its groups go and come back new) and one deleted
  await step('a file rewritten', () => writeFileSync(a, lines([group(1, 'q0', ['8', '8', '2']), group(7, 'q9', ['1', '2', '3'])])), true);
  await step('a file deleted', () => unlinkSync(b), true);
  assert.ok(
    changes.some((c) => c.rearranged),
    'no change said the groups were put in a new order',
  );
});

test('the first read streams: the store lists steps and questions while the run is still being read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-arrange-'));
  dirs.push(dir);
  for (let f = 0; f < 6; f++) writeFileSync(join(dir, `step-${f + 1}.jsonl`), lines([0, 1, 2].map((q) => group(f + 1, `q${q}`, ['1', '1', String(q)]))));
  // the index alone: its listeners get the groups file by file, before `open` resolves
  const seen: Array<{ added: number; opened: boolean }> = [];
  let opened = false;
  const index = await RunIndex.open(dir, {
    follow: true,
    pollMs: 60_000,
    streamMs: 0,
    onNotice: () => undefined,
    onStart: (idx) => idx.onDidChange((ch) => seen.push({ added: ch.added.length, opened })),
  });
  opened = true;
  cleanup.push(() => index.close());
  const early = seen.filter((x) => !x.opened);
  assert.ok(early.length >= 5, `${early.length} changes during the first read`);
  assert.equal(
    seen.reduce((n, x) => n + x.added, 0),
    18,
  );
  // the store: steps and questions listed while loading, and in the end the same index as a fresh arrangement
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, pollMs: 60_000, idleMs: 60_000, streamMs: 0 });
  cleanup.push(() => store.dispose());
  const during: number[] = [];
  store.onChange(() => {
    const r = store.runs.get(run.id);
    if (r?.loading) during.push(r.steps.size);
  });
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  assert.ok(
    during.some((n) => n > 0 && n < 6),
    `steps listed while loading: ${during.join(',')}`,
  );
  assert.deepEqual(arranged(run), fresh(run));
  assert.equal(run.summaries.size, 18);
  assert.equal(run.grownAt, 0, 'a run read at open is not a growing run');
});
