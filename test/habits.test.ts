// The code base's habits, held by tests so they do not drift back: a thrown value is read through
// src/util/errors.ts (never cast to Error: a worker, a library or a user's code can throw a string
// or null), and code outside src/engine reaches the engine only through its declared entry points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { asError, errnoCode, errorMessage, errorName, errorStack } from '../src/util/errors';

const ROOT = join(import.meta.dirname, '..');
const SELF = relative(ROOT, import.meta.filename);

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === 'node_modules' || name === 'fixtures' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) sources(p, out);
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('-wasm.ts')) out.push(p);
  }
  return out;
}
const ALL = ['src', 'webview', 'scripts', 'bench', 'test'].flatMap((d) => sources(d)).filter((f) => f !== SELF);

test('errorMessage reads any thrown value, not only an Error', () => {
  assert.equal(errorMessage(new TypeError('bad')), 'bad');
  assert.equal(errorMessage('plain string'), 'plain string');
  assert.equal(errorMessage(null), 'null');
  assert.equal(errorMessage(undefined), 'undefined');
  assert.equal(errorMessage(42), '42');
  assert.equal(errorMessage({ message: 'from a worker' }), 'from a worker');
  assert.equal(errorMessage({ message: 7 }), '[object Object]');
  const errno = Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
  assert.equal(errnoCode(errno), 'ENOENT');
  assert.equal(errnoCode('ENOENT'), undefined);
  assert.equal(errnoCode({ code: 1 }), undefined);
  assert.equal(errorName(new RangeError('x')), 'RangeError');
  assert.equal(errorName(null), undefined);
  const wrapped = asError('thrown text');
  assert.ok(wrapped instanceof Error);
  assert.equal(wrapped.message, 'thrown text');
  assert.equal(asError(errno), errno);
  assert.match(errorStack(new Error('with stack')), /with stack\n\s+at /);
  assert.equal(errorStack(3), '3');
});

test('no thrown value is cast to Error (src/util/errors.ts reads it)', () => {
  const found: string[] = [];
  for (const f of ALL) {
    readFileSync(join(ROOT, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\bas (Error|NodeJS\.ErrnoException)\b/.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, [], 'use errorMessage / errnoCode / errorName / asError from src/util/errors.ts');
});
