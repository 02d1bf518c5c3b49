// The off-heap key index against a Map and an array kept beside it, over random adds, retirements
// and re-adds (a key retired and added again gets a new id at the end, as a Map puts it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyIndex } from '../../src/logs/key-index.js';
import { groupKey } from '../../src/logs/log-types.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const odd = ['', 'é', '\u2028', '😀', '"', '\\', '\u0000', 'x'.repeat(300), '日本語'];

test('ids, liveness and keys agree with a Map over random histories (collisions, growth, retire, re-add)', () => {
  for (const seed of [1, 2, 3]) {
    const r = rng(seed);
    const ix = new KeyIndex();
    const live = new Map<string, number>(); // key → live id
    const keyOf: string[] = [];
    const latest = new Map<string, number>();
    for (let op = 0; op < 20_000; op++) {
      const k = groupKey(r() < 0.2 ? odd[Math.floor(r() * odd.length)] : undefined, Math.floor(r() * 400), `q${Math.floor(r() * 40)}${odd[Math.floor(r() * odd.length)]}`);
      if (r() < 0.7) {
        const id = ix.add(k);
        if (live.has(k)) assert.equal(id, live.get(k), 'a live key keeps its id');
        else {
          assert.equal(id, keyOf.length, 'a new id comes next');
          keyOf.push(k);
          live.set(k, id);
          latest.set(k, id);
        }
      } else if (live.has(k)) {
        ix.retire(live.get(k)!);
        live.delete(k);
      }
      assert.equal(ix.id(k), latest.get(k) ?? -1);
      assert.equal(ix.liveId(k), live.get(k) ?? -1);
    }
    assert.equal(ix.size, live.size);
    assert.equal(ix.ids, keyOf.length);
    keyOf.forEach((k, id) => {
      assert.equal(ix.key(id), k);
      assert.equal(ix.isLive(id), live.get(k) === id);
    });
  }
});

test('a key with a lone surrogate is refused (UTF-8 would not carry it back); clear starts over', () => {
  const ix = new KeyIndex();
  assert.throws(() => ix.add('a\ud800b'), /not well-formed/);
  assert.throws(() => ix.add('\udc00'), /not well-formed/);
  assert.equal(ix.add('a😀b'), 0);
  assert.equal(ix.key(0), 'a😀b');
  ix.clear();
  assert.equal(ix.size, 0);
  assert.equal(ix.id('a😀b'), -1);
  assert.equal(ix.add('z'), 0);
});

test('a key retired and added again names its earlier id (`previous`), for a holder that kept something under it; clear moves the generation on', () => {
  const ix = new KeyIndex();
  const a = ix.add('a');
  ix.add('b');
  assert.equal(ix.previous(a), -1);
  ix.retire(a);
  assert.equal(ix.id('a'), a, 'a retired id is still found');
  const a2 = ix.add('a');
  assert.notEqual(a2, a);
  assert.equal(ix.previous(a2), a);
  ix.retire(a2);
  const a3 = ix.add('a');
  assert.deepEqual([ix.previous(a3), ix.previous(ix.previous(a3))], [a2, a]);
  const g = ix.generation;
  ix.clear();
  assert.equal(ix.generation, g + 1);
});
