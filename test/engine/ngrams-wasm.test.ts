// The WebAssembly kernel of ASCII TF-IDF (src/engine/features/ngrams.wat) against its JavaScript
// twin (`countSmallAlphabet` + `finish` in tfidf.ts), and the generated module against the .wat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { ngramsWasmAvailable, normaliseForNgrams, setNgramsWasmEnabled, tfidfRows, type TfidfRows } from '../../src/engine/features/tfidf';
import { rng } from '../../scripts/synth';
// @ts-expect-error: a plain .mjs script without declarations
import { compileWat, renderModule, KERNELS } from '../../scripts/build-wasm.mjs';

test('the committed ngrams-wasm.ts is what ngrams.wat compiles to (run node scripts/build-wasm.mjs)', async () => {
  const kernel = (KERNELS as { wat: string; module: string }[]).find((k) => k.wat.endsWith('ngrams.wat'))!;
  const bytes: Uint8Array = await compileWat(kernel.wat);
  assert.equal(readFileSync(kernel.module, 'utf8'), renderModule(bytes, kernel));
});

test('the kernel loads on this Node', () => {
  assert.equal(ngramsWasmAvailable(), true);
});

interface Plain {
  start: number[];
  terms: number[];
  values: number[];
  df: number[];
  vocabularySize: number;
}
/** A copy (both paths return views of scratch memory, valid until their next call). */
const plain = (r: TfidfRows): Plain => ({
  start: Array.from(r.start.subarray(0, r.n + 1)),
  terms: Array.from(r.terms.subarray(0, r.start[r.n])),
  values: Array.from(r.values.subarray(0, r.start[r.n])),
  df: Array.from(r.df.subarray(0, r.vocabularySize)),
  vocabularySize: r.vocabularySize,
});
function rows(texts: string[], wasm: boolean): Plain {
  setNgramsWasmEnabled(wasm);
  try {
    return plain(tfidfRows(texts));
  } finally {
    setNgramsWasmEnabled(true);
  }
}

/**
 * Independent of term ids and of the order inside a row: the TF-IDF values of each row, sorted,
 * and the document frequencies of the vocabulary, sorted, from string-keyed counts.
 */
function reference(texts: string[]): { rowValues: number[][]; df: number[] } {
  const docs = texts.map((t) => {
    const s = normaliseForNgrams(t);
    const m = new Map<string, number>();
    for (let p = 0; p + 4 <= s.length; p++) m.set(s.slice(p, p + 4), (m.get(s.slice(p, p + 4)) ?? 0) + 1);
    return m;
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const g of d.keys()) df.set(g, (df.get(g) ?? 0) + 1);
  const n = texts.length;
  const rowValues = docs.map((d) => {
    const v = [...d].map(([g, c]) => c * (Math.log((1 + n) / (1 + df.get(g)!)) + 1));
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return v.map((x) => x / norm).sort((a, b) => a - b);
  });
  return { rowValues, df: [...df.values()].sort((a, b) => a - b) };
}

// ASCII with every kind of Python whitespace (\t \n \v \f \r, \x1c–\x1f, space) and the control
// characters that are not whitespace (\x00–\x08, \x0e–\x1b, \x7f).
const WHITESPACE = ['\t', '\n', '\v', '\f', '\r', '\x1c', '\x1d', '\x1e', '\x1f', ' '];
const OTHER_CONTROL = ['\x00', '\x07', '\x08', '\x0e', '\x1b', '\x7f'];
const WORDS = ['The', 'answer', 'IS', '= 2', 'x^2', 'So', 'therefore', '\\frac{1}{2}', 'we', 'GET', '3', '17', 'sum', '$$'];

function randomText(r: () => number, len: number, alphabet: 'words' | 'printable' | 'tiny'): string {
  let s = '';
  while (s.length < len) {
    const u = r();
    if (u < 0.15) {
      // A run of 1–5 whitespace characters of mixed kinds.
      const k = 1 + Math.floor(r() * 5);
      for (let i = 0; i < k; i++) s += WHITESPACE[Math.floor(r() * WHITESPACE.length)];
    } else if (u < 0.17) s += OTHER_CONTROL[Math.floor(r() * OTHER_CONTROL.length)];
    else if (alphabet === 'words') s += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.7 ? ' ' : '');
    else if (alphabet === 'tiny') s += 'aAbB'[Math.floor(r() * 4)];
    else s += String.fromCharCode(33 + Math.floor(r() * 94));
  }
  return s.slice(0, len);
}

function groups(): { texts: string[]; what: string }[] {
  const r = rng(4243);
  const out: { texts: string[]; what: string }[] = [];
  out.push({ texts: [], what: 'no texts' });
  out.push({ texts: [''], what: 'one empty text' });
  out.push({ texts: ['', 'a', 'ab', 'abc', 'abcd', ' \t\n', 'ABCD'], what: 'texts of 0–4 characters' });
  out.push({ texts: ['   ', '\t\t', '\x1c\x1d\x1e\x1f', '\v\f', ' a  ', '  a', 'a  '], what: 'whitespace only, runs at the ends' });
  // A run of two spaces at every position of texts 14–40 long (the kernel's 16-byte steps).
  for (let len = 14; len <= 40; len++) {
    const texts: string[] = [];
    for (let at = 0; at + 2 <= len; at++) texts.push('Ab'.repeat(len).slice(0, at) + '  ' + 'cD'.repeat(len).slice(0, len - at - 2));
    texts.push('x'.repeat(len), ' '.repeat(len), 'a '.repeat(len).slice(0, len));
    out.push({ texts, what: `a run at every position, length ${len}` });
  }
  // Random groups: N up to 200, texts 0–3000 characters.
  for (let k = 0; k < 120; k++) {
    const n = k < 10 ? 1 : 1 + Math.floor(r() * (k < 60 ? 40 : 200));
    const alphabet = (['words', 'words', 'printable', 'tiny'] as const)[k % 4];
    const texts = Array.from({ length: n }, () => randomText(r, r() < 0.1 ? Math.floor(r() * 4) : Math.floor(r() * 3000), alphabet));
    out.push({ texts, what: `random #${k} (N = ${n}, ${alphabet})` });
  }
  // Large vocabularies: the table doubles (from the last group's size, and mid-document), then a
  // small group after a large one, and a large one again.
  for (const [n, len] of [[3, 60000], [200, 2500], [2, 10], [1, 200000], [64, 2048]] as const) {
    out.push({ texts: Array.from({ length: n }, () => randomText(r, len, 'printable')), what: `printable, N = ${n} × ${len}` });
  }
  return out;
}

test('the kernel gives the JS path rows, term ids, values (bit for bit) and df on random ASCII groups', () => {
  for (const g of groups()) {
    const js = rows(g.texts, false);
    const wasm = rows(g.texts, true);
    assert.deepEqual(wasm, js, g.what);
  }
});

test('both paths match string-keyed counts (values of each row and df, whatever the ids)', () => {
  for (const g of groups().filter((_, i) => i % 3 === 0)) {
    const ref = reference(g.texts);
    for (const wasm of [false, true]) {
      const got = rows(g.texts, wasm);
      assert.deepEqual([...got.df].sort((a, b) => a - b), ref.df, `${g.what} (wasm ${wasm}): df`);
      g.texts.forEach((_, d) => {
        const v = got.values.slice(got.start[d], got.start[d + 1]).sort((a, b) => a - b);
        assert.equal(v.length, ref.rowValues[d].length, `${g.what} (wasm ${wasm}) row ${d}: terms`);
        v.forEach((x, i) => assert.ok(Math.abs(x - ref.rowValues[d][i]) < 1e-12, `${g.what} (wasm ${wasm}) row ${d}: ${x} vs ${ref.rowValues[d][i]}`));
      });
    }
  }
});

test('a group with a non-ASCII text leaves the kernel (null) and counts as before', () => {
  const texts = ['plain ASCII text here', 'naïve café', 'more  ASCII\t\ttext'];
  assert.deepEqual(rows(texts, true), rows(texts, false));
  // Astral-plane characters (surrogate pairs) and a lone surrogate.
  for (const odd of ['\u{1F600} smile', 'x\ud800y']) {
    const t = ['abcdefgh', odd];
    assert.deepEqual(rows(t, true), rows(t, false), JSON.stringify(odd));
  }
  // The kernel still works after a refusal.
  const ascii = ['abcdabcd', 'bcdabc'];
  assert.deepEqual(rows(ascii, true), rows(ascii, false));
});

test('without WebAssembly (node --jitless) TF-IDF runs on the JS path', () => {
  const code = `
    const { tfidfRows, ngramsWasmAvailable } = require('./src/engine/features/tfidf.ts');
    const { equal } = require('node:assert/strict');
    equal(typeof WebAssembly, 'undefined');
    equal(ngramsWasmAvailable(), false);
    const rows = tfidfRows(['abcdabcd', 'ABCD  abcd', 'xyzw']);
    equal(rows.vocabularySize, 9); // abcd bcda cdab dabc | bcd_ cd_a d_ab _abc | xyzw
    equal(rows.start[3], 10);
    console.log('ok');
  `;
  const r = spawnSync(process.execPath, ['--jitless', '--no-warnings', '--import', 'tsx', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
});
