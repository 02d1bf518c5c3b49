import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cosineMatrix, cosinesByClass, cosinesByClassJs, cosinesByClassWasm, pairIndex, tfidfRows, normaliseForNgrams } from '../../src/engine/features/tfidf';
import { rng } from '../../scripts/synth';

// Fixtures made once by scripts/make-tfidf-fixtures.py with scikit-learn's TfidfVectorizer.
const fixture = JSON.parse(readFileSync('test/fixtures/tfidf-sklearn.json', 'utf8')) as {
  cases: { texts: string[]; cosine: number[][]; vocabulary: number }[];
};

test('TF-IDF cosines match scikit-learn on every fixture case', () => {
  for (const [k, c] of fixture.cases.entries()) {
    const got = cosineMatrix(c.texts);
    for (let i = 0; i < c.texts.length; i++) {
      for (let j = 0; j < c.texts.length; j++) {
        assert.ok(Math.abs(got[i][j] - c.cosine[i][j]) < 1e-12, `case ${k} (${JSON.stringify(c.texts.slice(0, 2))}) [${i},${j}]: ${got[i][j]} vs ${c.cosine[i][j]}`);
      }
    }
    assert.equal(tfidfRows(c.texts).vocabularySize, c.vocabulary, `vocabulary size of case ${k}`);
  }
});

test('only runs of two or more Python whitespace characters collapse', () => {
  assert.equal(normaliseForNgrams('a\tb'), 'a\tb');
  assert.equal(normaliseForNgrams('a\t\tb'), 'a b');
  assert.equal(normaliseForNgrams('a\u00a0\u00a0b'), 'a b');
  assert.equal(normaliseForNgrams('a\x1c\x1db'), 'a b'); // Python's \s, not JS's
  assert.equal(normaliseForNgrams('a\ufeff\ufeffb'), 'a\ufeff\ufeffb'); // JS's \s, not Python's
  assert.equal(normaliseForNgrams('AbC'), 'abc');
});

test('astral-plane characters count as one code point', () => {
  const rows = tfidfRows(['\u{1F600}\u{1F600}\u{1F600}\u{1F600}', 'abc']);
  assert.equal(rows.start[1] - rows.start[0], 1); // one 4-gram of four code points (8 UTF-16 units)
  assert.equal(rows.start[2] - rows.start[1], 0); // 3 code points: no 4-gram, zero row
});

test('rows are unit length or zero', () => {
  const rows = tfidfRows(['', 'abcdabcd', 'xyzw']);
  for (let d = 0; d < 3; d++) {
    let ss = 0;
    for (let k = rows.start[d]; k < rows.start[d + 1]; k++) ss += rows.values[k] ** 2;
    assert.ok(d === 0 ? ss === 0 : Math.abs(ss - 1) < 1e-12);
  }
});

/** Independent reference: string-keyed counts over code points, dense dot products. */
function referenceCosines(texts: string[]): number[][] {
  const docs = texts.map((t) => {
    const cps = Array.from(normaliseForNgrams(t));
    const m = new Map<string, number>();
    for (let p = 0; p + 4 <= cps.length; p++) {
      const g = cps.slice(p, p + 4).join('');
      m.set(g, (m.get(g) ?? 0) + 1);
    }
    return m;
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const g of d.keys()) df.set(g, (df.get(g) ?? 0) + 1);
  const n = texts.length;
  const vecs = docs.map((d) => {
    const v = new Map<string, number>();
    let ss = 0;
    for (const [g, c] of d) {
      const x = c * (Math.log((1 + n) / (1 + df.get(g)!)) + 1);
      v.set(g, x);
      ss += x * x;
    }
    for (const [g, x] of v) v.set(g, ss > 0 ? x / Math.sqrt(ss) : 0);
    return v;
  });
  return vecs.map((a) => vecs.map((b) => [...a].reduce((s, [g, x]) => s + x * (b.get(g) ?? 0), 0)));
}

test('within-class cosines (dense columns and sparse pairs) match a reference on random groups', () => {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const words = ['the', 'The', 'answer', 'is', '= 2', 'x^2', 'so', 'Therefore', '\\frac{1}{2}', 'we', 'get', '3', '17', 'sum'];
  for (let round = 0; round < 30; round++) {
    const n = 1 + Math.floor(rand() * 40);
    const unicode = round % 5 === 4; // also the non-ASCII counting path
    const texts = Array.from({ length: n }, () => {
      const len = Math.floor(rand() * 60);
      let s = '';
      for (let w = 0; w < len; w++) s += words[Math.floor(rand() * words.length)] + (rand() < 0.1 ? '  \n' : rand() < 0.05 ? '\t' : ' ');
      return unicode && rand() < 0.5 ? s + ' π≈3.14 Ä' : s;
    });
    // Random classes, some singletons, some roll-outs in none.
    const k = 1 + Math.floor(rand() * 4);
    const classes: number[][] = Array.from({ length: k }, () => []);
    for (let i = 0; i < n; i++) if (rand() < 0.9) classes[Math.floor(rand() * k)].push(i);
    const ref = referenceCosines(texts);
    // The default (the kernel here), and each path by name.
    for (const [path, cosines] of [['default', cosinesByClass], ['js', cosinesByClassJs], ['wasm', cosinesByClassWasm]] as const) {
      const got = cosines(tfidfRows(texts), classes)!;
      classes.forEach((members, c) => {
        assert.ok(got[c].length === (members.length * (members.length - 1)) / 2);
        for (let a = 0; a < members.length; a++) {
          for (let b = a + 1; b < members.length; b++) {
            const want = ref[members[a]][members[b]];
            assert.ok(Math.abs(got[c][pairIndex(members.length, a, b)] - want) < 1e-12, `${path}: round ${round} class ${c} pair ${a},${b}: ${got[c][pairIndex(members.length, a, b)]} vs ${want}`);
          }
        }
      });
    }
  }
});

/** Random classes over 0..n−1: shuffled members, singletons, empty classes, roll-outs in none. */
function randomClasses(r: () => number, n: number): number[][] {
  const k = 1 + Math.floor(r() * Math.min(12, n + 1));
  const classes: number[][] = Array.from({ length: k }, () => []);
  const skew = r() < 0.5; // most roll-outs in the first class, as when a majority agrees
  for (let i = 0; i < n; i++) {
    if (r() < 0.08) continue;
    classes[skew && r() < 0.6 ? 0 : Math.floor(r() * k)].push(i);
  }
  for (const c of classes) {
    for (let j = c.length - 1; j > 0; j--) {
      const x = Math.floor(r() * (j + 1));
      [c[j], c[x]] = [c[x], c[j]];
    }
  }
  if (r() < 0.3) classes.push([Math.floor(r() * Math.max(n, 1))].filter((i) => i < n));
  return classes;
}

const VOCAB = ['the', 'The', 'answer', 'is', '= 2', 'x^2', 'so', 'Therefore', '\\frac{1}{2}', 'we', 'get', '3', '17', 'sum', 'π', 'Ä', 'naïve', '≈'];
/** Texts of words (frequent shared 4-grams: dense columns), random letters (rare ones: pairs) or empty. */
function randomTexts(r: () => number, n: number, unicode: boolean): string[] {
  return Array.from({ length: n }, () => {
    const u = r();
    if (u < 0.05) return '';
    const len = Math.floor(r() * (u < 0.5 ? 400 : 80));
    let s = '';
    if (u < 0.5) for (let i = 0; i < len; i++) s += String.fromCharCode(97 + Math.floor(r() * (r() < 0.5 ? 6 : 26)));
    else for (let w = 0; w < len; w++) s += VOCAB[Math.floor(r() * (unicode ? VOCAB.length : VOCAB.length - 4))] + (r() < 0.1 ? '  \n' : ' ');
    return s;
  });
}

test('within-class cosines: the kernel, the JS path and the reference agree on many random groups (N up to 200)', () => {
  const r = rng(20251201);
  for (let round = 0; round < 60; round++) {
    const n = round < 4 ? round : 1 + Math.floor(r() * (round % 3 === 0 ? 200 : 64));
    const unicode = round % 4 === 3; // rows from the JS counting paths, copied into the kernel
    const texts = randomTexts(r, n, unicode);
    const classes = randomClasses(r, n);
    const ref = round % 3 === 1 ? referenceCosines(texts) : null;
    const js = cosinesByClassJs(tfidfRows(texts), classes);
    const wasm = cosinesByClassWasm(tfidfRows(texts), classes)!;
    assert.ok(wasm, 'the kernel is available');
    classes.forEach((members, c) => {
      const m = members.length;
      assert.equal(wasm[c].length, m < 2 ? 0 : (m * (m - 1)) / 2, `round ${round} class ${c}: size`);
      assert.equal(js[c].length, wasm[c].length);
      for (let a = 0; a < m; a++) {
        for (let b = a + 1; b < m; b++) {
          const p = pairIndex(m, a, b);
          const what = `round ${round} (N = ${n}${unicode ? ', non-ASCII' : ''}) class ${c} pair ${a},${b}`;
          assert.ok(Math.abs(wasm[c][p] - js[c][p]) <= 1e-12, `${what}: wasm ${wasm[c][p]} vs JS ${js[c][p]}`);
          if (ref) assert.ok(Math.abs(wasm[c][p] - ref[members[a]][members[b]]) <= 1e-12, `${what}: wasm ${wasm[c][p]} vs reference ${ref[members[a]][members[b]]}`);
        }
      }
    });
  }
});
