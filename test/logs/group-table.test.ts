// The assembler's group table: a cold, complete head is kept as a row of columns and built back as
// the head it was set with; everything else is kept as the object it is; Map order and semantics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupTable } from '../../src/logs/group-table.js';
import type { GroupEntry } from '../../src/logs/entries.js';
import { groupKey } from '../../src/logs/log-types.js';

let version = 100;
/** A head under its own key (run, step and question of the head). */
function head(q: string, over: Partial<GroupEntry> = {}): GroupEntry {
  const h: GroupEntry = {
    key: '',
    step: 1,
    questionId: q,
    groundTruth: null,
    n: 64,
    origin: 'group',
    format: 'native',
    complete: true,
    version: ++version,
    firstSource: { file: '/run/a.jsonl', line: 3, offset: 3_000_000_000, length: 900 },
    cold: { chunk: 2, confident: 60 },
    ...over,
  };
  h.key = groupKey(h.run, h.step, h.questionId);
  return h;
}

test('a cold complete head comes back as the head it was set with, every field', () => {
  const t = new GroupTable();
  const heads = [
    head('a'),
    head('b', { run: 'r1', stream: 'validation', framework: 'verl', groundTruth: '42', step: 7.5, outcomeChecks: [{ answer: '4', passed: 2, trials: 3 }] }),
    head('c', { origin: 'rollouts', format: 'verl', firstSource: { file: '/run/b.jsonl', line: 9, offset: 12, length: 5, item: 3 }, run: '' }),
    head('d', { firstSource: { file: '/run/a.jsonl', line: 2 ** 31 - 1, offset: 2 ** 40 + 7, length: 0, item: 0 } }),
    // a question id read back from its key as it was, whatever it holds
    head('q "\\ \u00e9 \u2028 \ud83d\ude00 \u0000 ]', { run: '["x",', groundTruth: '' }),
  ];
  for (const h of heads) t.set(h.key, h);
  assert.equal(t.size, 5);
  for (const h of heads) {
    const got = t.get(h.key)!;
    assert.notEqual(got, h, 'built, not the object set');
    assert.deepEqual(got, h);
    assert.equal(t.versionOf(h.key), h.version);
  }
  assert.deepEqual([...t.values()], heads);
  assert.deepEqual([...t.keys()], heads.map((h) => h.key));
  assert.equal(t.completeCount(), 5);
  const sizes: Array<[string, number, number]> = [];
  for (const s of t.sizes()) sizes.push([s.key, s.step, s.n]);
  assert.deepEqual(sizes, heads.map((h) => [h.key, h.step, h.n]));
});

test('a hot group, an incomplete cold head, or a head with a field the columns do not know stays the object', () => {
  const t = new GroupTable();
  const hot = head('hot', { cold: undefined, packed: undefined });
  delete hot.cold;
  const open = head('open', { complete: false });
  const odd = head('odd', { prompt: 'p' } as Partial<GroupEntry>);
  const bigLine = head('big', { firstSource: { file: 'f', line: 2 ** 31, offset: 0, length: 1 } });
  // a row reads its question id back from its key: a head under another key keeps its own
  const foreign = { ...head('mine'), key: groupKey(undefined, 1, 'theirs') };
  for (const h of [hot, open, odd, bigLine, foreign]) t.set(h.key, h);
  for (const h of [hot, open, odd, bigLine, foreign]) assert.equal(t.get(h.key), h);
  assert.equal(t.completeCount(), 4);
  let confident = 0;
  t.forEachCount((_f, _n, c, e) => (confident += c ?? e!.cold?.confident ?? 0));
  assert.equal(confident, 240);
});

test('Map semantics: set keeps a held key in its place (cold → hot → cold), delete frees its row for another, clear empties', () => {
  const t = new GroupTable();
  const [a, b, c] = ['a', 'b', 'c'].map((q) => head(q));
  for (const h of [a, b, c]) t.set(h.key, h);
  const warmB = { ...b, cold: undefined, version: ++version };
  delete warmB.cold;
  t.set(b.key, warmB);
  assert.deepEqual([...t.keys()], [a.key, b.key, c.key]);
  assert.equal(t.get(b.key), warmB);
  const coolB = { ...b, version: ++version, cold: { chunk: 9, confident: 1 } };
  t.set(b.key, coolB);
  assert.deepEqual(t.get(b.key), coolB);
  assert.deepEqual([...t.keys()], [a.key, b.key, c.key]);
  assert.equal(t.delete(a.key), true);
  assert.equal(t.delete(a.key), false);
  assert.equal(t.get(a.key), undefined);
  assert.equal(t.versionOf(a.key), undefined);
  const d = head('d', { groundTruth: 'x' });
  t.set(d.key, d); // takes a's row: nothing of a's comes back
  assert.deepEqual(t.get(d.key), d);
  assert.deepEqual([...t.values()], [coolB, c, d]);
  t.moveCold(c.key, 40);
  assert.deepEqual(t.get(c.key)!.cold, { chunk: 40, confident: 60 });
  t.clear();
  assert.equal(t.size, 0);
  assert.deepEqual([...t.values()], []);
  t.set(c.key, c);
  assert.deepEqual(t.get(c.key), c);
});

test('many rows: growing the columns keeps every head', () => {
  const t = new GroupTable();
  t.reserve(10);
  const heads = Array.from({ length: 5000 }, (_, i) => head(`q${i}`, { step: i >> 5, n: i % 70, firstSource: { file: `/run/${i % 3}.jsonl`, line: i + 1, offset: i * 1000, length: 999 } }));
  for (const h of heads) t.set(h.key, h);
  for (let i = 0; i < heads.length; i += 7) assert.deepEqual(t.get(heads[i].key), heads[i]);
  assert.deepEqual([...t.values()], heads);
});

test('put: the caller reuses its object — a row, or a copy with only its own fields, is kept', () => {
  const t = new GroupTable();
  const scratch = head('a', { run: undefined, stream: undefined, framework: undefined, outcomeChecks: undefined, firstSource: { file: 'f', line: 1, offset: 2, length: 3, item: undefined } });
  const writes = t.writes;
  t.put(scratch.key, scratch);
  const a = t.get(scratch.key)!;
  Object.assign(scratch, { key: JSON.stringify(['', 1, 'b']), questionId: 'b', complete: false, run: 'r' });
  t.put(scratch.key, scratch); // incomplete: kept as an object, a copy
  scratch.questionId = 'changed after';
  assert.equal(t.writes, writes + 2);
  assert.equal(t.get(a.key)!.questionId, 'a');
  const b = t.get(JSON.stringify(['', 1, 'b']))!;
  assert.notEqual(b, scratch);
  assert.equal(b.questionId, 'b');
  assert.equal(b.run, 'r');
  assert.deepEqual(Object.keys(a).sort(), ['cold', 'complete', 'firstSource', 'format', 'groundTruth', 'key', 'n', 'origin', 'questionId', 'step', 'version']);
  assert.ok(!('stream' in b) && !('item' in b.firstSource), 'no field that is undefined');
});

test('a walk under way sees what a Map walk sees while groups are deleted, appended and the order grows (random histories)', () => {
  for (const seed of [1, 2, 3, 4]) {
    let s = seed;
    const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    const t = new GroupTable();
    const m = new Map<string, GroupEntry>();
    const make = (i: number) => head(`g${i}`, r() < 0.5 ? {} : { complete: false });
    for (let i = 0; i < 3000; i++) {
      const e = make(Math.floor(r() * 5000));
      t.set(e.key, e);
      m.set(e.key, e);
    }
    const walkT = t.keys();
    const walkM = m.keys();
    for (let op = 0; op < 20_000; op++) {
      const x = r();
      if (x < 0.3) {
        const a = walkT.next();
        const b = walkM.next();
        assert.deepEqual(a, b, `seed ${seed} op ${op}`);
        if (b.done) break;
      } else if (x < 0.65) {
        const e = make(Math.floor(r() * 5000));
        t.set(e.key, e);
        m.set(e.key, e);
      } else {
        const k = head(`g${Math.floor(r() * 5000)}`).key;
        assert.equal(t.delete(k), m.delete(k));
      }
    }
    assert.equal(t.size, m.size);
    assert.deepEqual([...t.keys()], [...m.keys()]);
    // sorted, then appended to: as a Map cleared and set again in that order
    const byQ = (a: GroupEntry, b: GroupEntry) => (a.questionId < b.questionId ? -1 : a.questionId > b.questionId ? 1 : 0);
    const last = t.sort(byQ);
    const sorted = [...m.values()].sort(byQ);
    assert.equal(last?.key, sorted.at(-1)?.key);
    m.clear();
    for (const e of sorted) m.set(e.key, e);
    for (let i = 0; i < 2000; i++) {
      const e = make(5000 + Math.floor(r() * 3000));
      t.set(e.key, e);
      m.set(e.key, e);
      if (r() < 0.4) {
        const k = head(`g${Math.floor(r() * 8000)}`).key;
        assert.equal(t.delete(k), m.delete(k));
      }
    }
    assert.deepEqual([...t.keys()], [...m.keys()]);
    assert.deepEqual([...t.values()].map((e) => e.version), [...m.values()].map((e) => e.version));
  }
});
