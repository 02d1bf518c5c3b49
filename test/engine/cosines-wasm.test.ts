// The within-class cosines in the WebAssembly kernel (`classify` + `cosines` in
// src/engine/features/ngrams.wat, through `cosinesByClassWasm`) against the JavaScript path
// (`cosinesByClassJs`, the reference) on shapes the random groups of tfidf.test.ts may miss, and
// the kernel's contract: ordinary arrays out, rows left intact (and valid when the memory grows),
// the switch, the fallback without WebAssembly. That the committed ngrams-wasm.ts is what
// ngrams.wat compiles to is checked in ngrams-wasm.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cosinesByClass,
  cosinesByClassJs,
  cosinesByClassWasm,
  ngramsWasmAvailable,
  setCosinesWasmEnabled,
  setNgramsWasmEnabled,
  tfidfRows,
  type TfidfRows,
} from '../../src/engine/features/tfidf';
import { rng } from '../../scripts/synth';

const r = rng(90210);
/** A random lower-case token of `len` letters (shares no 4-gram with others, as good as surely). */
const token = (len = 8) => Array.from({ length: len }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');

function agree(texts: string[], classes: number[][], what: string): Float64Array[] {
  const js = cosinesByClassJs(tfidfRows(texts), classes);
  const wasm = cosinesByClassWasm(tfidfRows(texts), classes);
  assert.ok(wasm, 'the kernel is available');
  assert.equal(wasm.length, classes.length);
  classes.forEach((c, k) => {
    assert.equal(wasm[k].length, c.length < 2 ? 0 : (c.length * (c.length - 1)) / 2, `${what}: class ${k} size`);
    wasm[k].forEach((x, p) => assert.ok(Math.abs(x - js[k][p]) <= 1e-12, `${what}: class ${k} pair ${p}: wasm ${x} vs JS ${js[k][p]}`));
  });
  return wasm;
}

test('the kernel loads on this Node', () => {
  assert.equal(ngramsWasmAvailable(), true);
});

test('sparse terms only (no dense column): chains of 2–6 members in a class', () => {
  // Text i holds its own tokens and those of its bands (i / 6 and i / 3): each shared 4-gram is
  // in at most six of the 48 texts, never above 0.15·48.
  const n = 48;
  const band6 = Array.from({ length: 8 }, () => token(12));
  const band3 = Array.from({ length: 16 }, () => token(6));
  const texts = Array.from({ length: n }, (_, i) => `${token()} ${band6[Math.floor(i / 6)]} ${token()} ${band3[Math.floor(i / 3)]}`);
  const rows = tfidfRows(texts);
  let maxDf = 0;
  for (let t = 0; t < rows.vocabularySize; t++) maxDf = Math.max(maxDf, rows.df[t]);
  assert.ok(maxDf <= 0.15 * n && maxDf >= 3, `max df ${maxDf}`);
  const classes = [Array.from({ length: 24 }, (_, i) => i), Array.from({ length: 20 }, (_, i) => 47 - i), [24, 25, 26]];
  const got = agree(texts, classes, 'sparse only');
  assert.ok(got[0].some((x) => x > 0), 'some pairs share terms');
});

test('dense columns only, odd and even counts of them, and every class size 2–13 (the Gram blocks and their remainders)', () => {
  for (let columns = 1; columns <= 6; columns++) {
    // Three texts share `columns`·4-ish 4-grams: every shared term is in > 0.15·N texts.
    const shared = Array.from({ length: columns }, () => token(4)).join('');
    for (let m = 2; m <= 13; m++) {
      const texts = Array.from({ length: m + 1 }, (_, i) => (i % 3 === 2 ? token(5) : `${shared}${i % 2 ? shared : ''}`));
      agree(texts, [Array.from({ length: m }, (_, i) => i), [m]], `${columns} shared tokens, class of ${m}`);
    }
  }
});

test('members in any order, classes without pairs, roll-outs in no class, empty and tiny groups', () => {
  const texts = Array.from({ length: 30 }, (_, i) => `the answer is ${i % 4} so ${token(5)} we get ${i % 3} ${i % 5 ? 'therefore' : ''}`);
  agree(texts, [[5, 2, 9, 0, 17], [], [3], [29, 1, 4, 28, 7, 11, 13]], 'mixed classes');
  agree(texts, [], 'no classes');
  agree(texts, [[], [4]], 'no pairs');
  agree([], [], 'no texts');
  agree(['', '', ''], [[0, 1, 2]], 'empty texts: zero rows');
  agree(['abc', 'abcd', 'abcd'], [[0, 1, 2]], 'a text without a 4-gram');
  for (const c of cosinesByClassWasm(tfidfRows(['', '']), [[0, 1]])!) assert.deepEqual([...c], [0]);
});

test('the output is ordinary arrays (not views of the kernel memory), unchanged by later calls', () => {
  const a = ['the answer is 12 so we get', 'so the answer is 12 indeed', 'we get 12 as the answer'];
  const got = cosinesByClassWasm(tfidfRows(a), [[0, 1, 2], [0, 2]])!;
  const copy = got.map((x) => [...x]);
  for (const x of got) assert.equal(x.buffer.byteLength, x.byteLength);
  for (let k = 0; k < 5; k++) {
    const texts = Array.from({ length: 64 }, () => `${token(2000)} the answer`);
    cosinesByClassWasm(tfidfRows(texts), [Array.from({ length: 64 }, (_, i) => i)]);
  }
  assert.deepEqual(got.map((x) => [...x]), copy);
});

test("the kernel leaves the rows intact, whether they are the counting kernel's (in place) or the JS path's (copied)", () => {
  const texts = Array.from({ length: 40 }, (_, i) => `the answer is ${i % 7}, ${token(30)} and so we get ${i % 3} with ${token(4)}`);
  const classes = [Array.from({ length: 25 }, (_, i) => i), Array.from({ length: 15 }, (_, i) => 39 - i)];
  const plain = (rows: TfidfRows) => [[...rows.start], [...rows.terms.subarray(0, rows.start[rows.n])], [...rows.values.subarray(0, rows.start[rows.n])], [...rows.df.subarray(0, rows.vocabularySize)]];
  const results: Float64Array[][] = [];
  for (const countInWasm of [true, false]) {
    setNgramsWasmEnabled(countInWasm);
    try {
      const rows = tfidfRows(texts);
      const before = plain(rows);
      results.push(cosinesByClassWasm(rows, classes)!);
      assert.deepEqual(plain(rows), before, `rows counted in ${countInWasm ? 'wasm' : 'JS'}`);
    } finally {
      setNgramsWasmEnabled(true);
    }
  }
  // Both counting paths give the same rows bit for bit, so the kernel gives the same cosines.
  assert.deepEqual(results[0], results[1]);
});

test('setCosinesWasmEnabled(false) runs the JS path', () => {
  const texts = Array.from({ length: 20 }, (_, i) => `so the answer is ${i % 3} ${token(20)}`);
  const classes = [[0, 3, 6, 9, 12, 15, 18], [1, 4, 7, 10, 13, 16, 19]];
  setCosinesWasmEnabled(false);
  try {
    assert.deepEqual(cosinesByClass(tfidfRows(texts), classes), cosinesByClassJs(tfidfRows(texts), classes));
  } finally {
    setCosinesWasmEnabled(true);
  }
  assert.deepEqual(cosinesByClass(tfidfRows(texts), classes), cosinesByClassWasm(tfidfRows(texts), classes));
});

test("when the kernel's memory grows, its rows are re-made on the new memory (a fresh process)", () => {
  // 300 short texts in one class: the counting kernel needs a few KB, the 44,850 pairs more
  // than a page of memory; the rows stay readable and the cosines right.
  const code = `
    const { tfidfRows, cosinesByClassWasm, cosinesByClassJs } = require('./src/engine/features/tfidf.ts');
    const { equal, ok } = require('node:assert/strict');
    const texts = Array.from({ length: 300 }, (_, i) => 'abcde fgh ' + (i % 7) + ' ' + (i % 11));
    const rows = tfidfRows(texts);
    const buffer = rows.values.buffer;
    const all = [Array.from({ length: 300 }, (_, i) => i)];
    const wasm = cosinesByClassWasm(rows, all);
    ok(buffer.byteLength === 0, 'the memory grew (the old buffer is detached)');
    equal(rows.start.length, 301);
    equal(rows.values.length, rows.start[300]);
    const js = cosinesByClassJs(rows, all);
    equal(wasm[0].length, 44850);
    for (let p = 0; p < js[0].length; p++) ok(Math.abs(wasm[0][p] - js[0][p]) <= 1e-12, String(p));
    console.log('ok');
  `;
  const out = spawnSync(process.execPath, ['--no-warnings', '--import', 'tsx', '-e', code], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'ok');
});

test('without WebAssembly (node --jitless) the cosines run on the JS path', () => {
  const code = `
    const { tfidfRows, cosinesByClass, cosinesByClassWasm } = require('./src/engine/features/tfidf.ts');
    const { equal, ok } = require('node:assert/strict');
    equal(typeof WebAssembly, 'undefined');
    const rows = tfidfRows(['abcdabcd', 'ABCD  abcd', 'xyzw abcd']);
    equal(cosinesByClassWasm(rows, [[0, 1, 2]]), null);
    const got = cosinesByClass(rows, [[0, 1, 2], [1]]);
    equal(got[0].length, 3);
    equal(got[1].length, 0);
    ok(got[0][0] > 0 && got[0][0] < 1);
    console.log('ok');
  `;
  const out = spawnSync(process.execPath, ['--jitless', '--no-warnings', '--import', 'tsx', '-e', code], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'ok');
});
