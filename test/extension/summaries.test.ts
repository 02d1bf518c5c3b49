// The store's question summaries: light ones (health record on disk) kept in columns and built
// again exactly; ones with their health record kept as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_IDS } from '../../src/engine';
import { deserialize, serialize } from 'node:v8';
import { packSummaries, QuestionSummaries } from '../../src/extension/model/summaries';
import { KeyIndex } from '../../src/logs/log-layer';
import type { QuestionSummary } from '../../src/extension/model/scoring';

function light(i: number): QuestionSummary {
  const s: QuestionSummary = {
    regime: (['saturated', 'contested', 'competence-floor', 'empty'] as const)[i % 4],
    overturn: i % 3 === 0,
    gate: 1 / (i + 3),
    mismatches: i % 5,
    label: i % 7 === 0 ? null : `\\frac{${i % 11}}{2}`,
    majorityLabel: i % 6 === 0 ? null : String(i % 4),
    n: 64 - (i % 9),
    digest: { degenerate: i % 2 === 0, plurality: i % 4 === 0, rescuedBy: OPERATOR_IDS.filter((_, j) => (i >> j) & 1) },
    healthSaved: true,
  };
  if (i % 3) s.digest.auroc = { u: i * 1.5, pairs: i * 7 };
  if (i % 4 === 1) s.checkedAgainst = OPERATOR_IDS[i % OPERATOR_IDS.length];
  return s;
}

test('light summaries come back exactly as they were set; full ones are kept as they are', () => {
  const m = new QuestionSummaries();
  const want = new Map<string, QuestionSummary>();
  for (let i = 0; i < 3000; i++) {
    m.set(`k${i}`, light(i));
    want.set(`k${i}`, light(i));
  }
  const full = { ...light(1), healthSaved: undefined, health: { step: 1 } } as unknown as QuestionSummary;
  m.set('k5', full);
  want.set('k5', full);
  assert.equal(m.size, 3000);
  assert.equal(m.get('k5'), full, 'kept as the object it is');
  for (const [k, s] of want) assert.deepEqual(m.get(k), s, k);
  assert.deepEqual(new Map(m), want);
  // rows are reused after a delete, without touching the others
  for (let i = 0; i < 3000; i += 2) assert.equal(m.delete(`k${i}`), true);
  assert.equal(m.delete('k0'), false);
  for (let i = 0; i < 3000; i += 2) want.delete(`k${i}`);
  for (let i = 0; i < 1000; i++) {
    m.set(`n${i}`, light(i + 17));
    want.set(`n${i}`, light(i + 17));
  }
  assert.equal(m.size, want.size);
  for (const [k, s] of want) assert.deepEqual(m.get(k), s, k);
  assert.equal(m.has('k1'), true);
  assert.equal(m.has('k2'), false);
  m.clear();
  assert.equal(m.size, 0);
  assert.equal(m.get('k1'), undefined);
  m.set('a', light(3));
  assert.deepEqual([...m.values()], [light(3)]);
});

test('a staged summary adopted by another instance is the summary set there; a full one is adopted as it is', () => {
  const staging = new QuestionSummaries();
  const staged = Array.from({ length: 2000 }, (_, i) => staging.stage(light(i)));
  assert.ok(staged.every((r) => typeof r === 'number'), 'a light summary is staged in a row');
  assert.equal(staging.size, 0, 'a staged row belongs to no question');
  const full = { ...light(1), healthSaved: undefined, health: { step: 1 } } as unknown as QuestionSummary;
  assert.equal(staging.stage(full), full, 'a summary with its health record is given back');
  const ix = new KeyIndex();
  const m = new QuestionSummaries(() => ix);
  for (let i = 0; i < 2000; i++) ix.add(`k${i}`);
  m.set('k0', light(1999)); // replaced by the adopted one
  // adopted in another order than staged, some not at all: each question gets its own
  for (let i = 1999; i >= 0; i -= 3) m.adopt(ix.id(`k${i}`), staging, staged[i]);
  m.adopt(ix.add('full'), staging, full);
  assert.throws(() => m.adopt(ix.ids + 5, staging, staged[0]), /does not hold/);
  assert.equal(m.get('full'), full);
  for (let i = 1999; i >= 0; i -= 3) assert.deepEqual(m.get(`k${i}`), light(i), `k${i}`);
  assert.deepEqual(m.get('k0'), light(1999), 'k0 was not adopted: as set');
  assert.equal(m.size, 1 + 667 + 1);
});

test('a saved record of summaries, packed, is staged as each summary would be; a pack that is not one throws', () => {
  const full = { ...light(1), healthSaved: undefined, health: { step: 1 } } as unknown as QuestionSummary;
  const xs: (QuestionSummary | undefined)[] = Array.from({ length: 64 }, (_, i) => (i % 10 === 9 ? undefined : light(i)));
  xs[5] = full;
  const packed = packSummaries(xs);
  assert.ok(packed.strings.length < 20, 'each label once per record');
  // through the saved index's own encoding
  const staging = new QuestionSummaries();
  const staged = staging.stagePacked(deserialize(serialize(packed)));
  assert.equal(staged.length, 64);
  const ix = new KeyIndex();
  const m = new QuestionSummaries(() => ix);
  staged.forEach((x, i) => {
    if (i % 10 === 9) return assert.equal(x, undefined, `question ${i} has none`);
    m.adopt(ix.add(`k${i}`), staging, x as number | QuestionSummary);
  });
  assert.equal(typeof staged[0], 'number', 'a light summary: a row');
  assert.deepEqual(m.get('k5'), full, 'a summary that is not light comes back as it was');
  for (let i = 0; i < 64; i++) if (i % 10 !== 9 && i !== 5) assert.deepEqual(m.get(`k${i}`), light(i), `k${i}`);
  for (const bad of [undefined, {}, { nums: new Float64Array(3), strings: [], objects: [] }, { ...packed, strings: [] }, { ...packed, objects: [] }, { ...packed, nums: packed.nums.map((v, i) => (i === 0 ? 7 : v)) }]) {
    assert.throws(() => new QuestionSummaries().stagePacked(bad), /pack|columns/);
  }
});

test("kept under the run index's group ids: a row under an id its key no longer has is freed by delete; another index, or the same one cleared, drops the rows", () => {
  const ix = new KeyIndex();
  let current: KeyIndex | undefined = ix;
  const m = new QuestionSummaries(() => current);
  const a = ix.add('a');
  ix.add('b');
  m.set('a', light(1)).set('b', light(2));
  // a key the index does not hold: its summary is not kept (no id to keep it under)
  m.set('c', light(3));
  assert.equal(m.size, 2);
  assert.equal(m.has('c'), false);
  assert.equal(m.hasLight(a), true);
  assert.deepEqual(m.get('a'), light(1));
  // 'a' deleted from the index and held again (a re-read file): its old summary is freed by delete
  ix.retire(a);
  ix.add('a');
  assert.equal(m.has('a'), false, 'the new group has no summary');
  assert.equal(m.delete('a'), true);
  assert.equal(m.size, 1);
  m.set('a', light(4));
  assert.deepEqual(m.get('a'), light(4));
  assert.deepEqual([...m.keys()].sort(), ['a', 'b']);
  // the same index cleared: ids mean nothing any more
  ix.clear();
  ix.add('b');
  assert.equal(m.size, 0);
  assert.equal(m.get('b'), undefined);
  m.set('b', light(5));
  // another index
  current = new KeyIndex();
  current.add('b');
  assert.equal(m.size, 0);
  assert.equal(m.get('b'), undefined);
});
