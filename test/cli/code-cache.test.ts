// The CLI's bundles run with V8's code cache made at build time (src/cli/code-cache.ts): the cache
// is used only for the exact bundle it was made from, and a bad or foreign cache never changes
// what runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { codeCacheKey, runBundle } from '../../src/cli/code-cache';
import { scratchDir } from '../scratch';

const KEY = '0123456789abcdef';
function bundle(body: string, key: string | null): string {
  const dir = scratchDir('cl-code-cache-');
  const file = join(dir, 'b.js');
  writeFileSync(file, key ? `${body}\n//# code-cache-key=${key}\n` : `${body}\n`);
  return file;
}
function cacheFor(file: string, key: string): void {
  const s = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file });
  s.runInThisContext(); // compiled functions go into the cache too, as in the build's training run
  writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(key, 'latin1'), s.createCachedData()]));
}

test('a cache made from the same bundle is used', () => {
  const f = bundle('module.exports = { two: 1 + 1, dir: __dirname };', KEY);
  cacheFor(f, KEY);
  const r = runBundle(f);
  assert.equal(r.cacheUsed, true);
  assert.deepEqual(r.exports, { two: 2, dir: join(f, '..') });
});

test('a cache with another key, a bundle without a key line, or cache bytes V8 rejects: the bundle runs without it', () => {
  const other = bundle('module.exports = 7;', KEY);
  cacheFor(other, 'fedcba9876543210');
  assert.deepEqual(runBundle(other), { exports: 7, cacheUsed: false });

  // Same length as a bundle the cache was made from (V8 itself only checks the length).
  const edited = bundle('module.exports = 8;', null);
  cacheFor(edited, KEY);
  assert.equal(codeCacheKey(readFileSync(edited, 'utf8')), null);
  assert.deepEqual(runBundle(edited), { exports: 8, cacheUsed: false });

  const corrupt = bundle('module.exports = 9;', KEY);
  writeFileSync(`${corrupt}.cache`, Buffer.concat([Buffer.from(KEY, 'latin1'), Buffer.alloc(512, 0x5a)]));
  assert.deepEqual(runBundle(corrupt), { exports: 9, cacheUsed: false });
});

test('the build made caches V8 accepts for this Node (dist/cli-main.js, dist/score-worker-main.js)', () => {
  for (const f of ['dist/cli-main.js', 'dist/score-worker-main.js']) {
    const text = readFileSync(f, 'utf8');
    const key = codeCacheKey(text);
    assert.ok(key, `${f}: no code-cache-key line`);
    const cache = readFileSync(`${f}.cache`);
    assert.equal(cache.toString('latin1', 0, 16), key, `${f}.cache: made from another build`);
    const s = new Script(Module.wrap(text), { filename: f, cachedData: cache.subarray(16) });
    assert.equal(s.cachedDataRejected, false, `${f}.cache rejected by V8`);
  }
});
